#!/usr/bin/env python3
"""An independent SRTP/SRTCP protect for cross-checking libsrtp (test-time only).

Written from the RFC text with the `cryptography` package's AES-CTR, AES-GCM and HMAC-SHA1, sharing
no code with libsrtp:
  - RFC 3711 §4.3 key derivation (AES-CM PRF, key derivation rate 0), §4.1.1 AES-CM keystream,
    §4.2 HMAC-SHA1 over the packet and the ROC, §3.4 SRTCP trailer (E flag + 31-bit index).
  - RFC 7714 §8 (SRTP) and §9 (SRTCP) AEAD_AES_128_GCM; its 96-bit master salt enters the RFC 3711
    KDF left-aligned and zero-padded to 112 bits, as libsrtp and webrtc-rs both do.
`selftest` first checks the KDF and keystream against RFC 3711 Appendix B.2 and B.3.

Usage:
  srtp_reference.py selftest
  srtp_reference.py rtp  SUITE KEYSALT_HEX PACKET_HEX ROC
  srtp_reference.py rtcp SUITE KEYSALT_HEX PACKET_HEX SRTCP_INDEX
prints the protected packet as hex.
"""

import hashlib
import hmac
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SUITES = {
    # name: (salt length, SRTP tag, SRTCP tag, aead)
    "AES_CM_128_HMAC_SHA1_80": (14, 10, 10, False),
    "AES_CM_128_HMAC_SHA1_32": (14, 4, 10, False),
    "AEAD_AES_128_GCM": (12, 16, 16, True),
}


def aes_ctr(key, iv16, data):
    encryptor = Cipher(algorithms.AES(key), modes.CTR(iv16)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def kdf(master_key, master_salt, label, length):
    """RFC 3711 §4.3.1 with kdr = 0: x = label << 48 XOR salt; keystream from IV = x * 2^16."""
    salt = master_salt.ljust(14, b"\0")
    x = bytearray(salt)
    x[7] ^= label
    return aes_ctr(master_key, bytes(x) + b"\0\0", b"\0" * length)


def rtp_header_length(packet):
    csrc_count = packet[0] & 0x0F
    length = 12 + 4 * csrc_count
    if packet[0] & 0x10:
        (words,) = struct.unpack("!H", packet[length + 2 : length + 4])
        length += 4 + 4 * words
    return length


def protect_rtp(suite, key_salt, packet, roc):
    salt_length, tag_length, _, aead = SUITES[suite]
    master_key, master_salt = key_salt[:16], key_salt[16:]
    assert len(master_salt) == salt_length
    seq, ssrc = struct.unpack("!H", packet[2:4])[0], struct.unpack("!I", packet[8:12])[0]
    header_length = rtp_header_length(packet)
    header, payload = packet[:header_length], packet[header_length:]
    session_key = kdf(master_key, master_salt, 0x00, 16)
    session_salt = kdf(master_key, master_salt, 0x02, salt_length)
    if aead:
        iv = bytes(a ^ b for a, b in zip(struct.pack("!HIIH", 0, ssrc, roc, seq), session_salt, strict=True))
        return header + AESGCM(session_key).encrypt(iv, payload, header)
    index = (roc << 16) | seq
    iv = (int.from_bytes(session_salt, "big") << 16) ^ (ssrc << 64) ^ (index << 16)
    encrypted = header + aes_ctr(session_key, iv.to_bytes(16, "big"), payload)
    auth_key = kdf(master_key, master_salt, 0x01, 20)
    tag = hmac.new(auth_key, encrypted + struct.pack("!I", roc), hashlib.sha1).digest()
    return encrypted + tag[:tag_length]


def protect_rtcp(suite, key_salt, packet, index):
    salt_length, _, tag_length, aead = SUITES[suite]
    master_key, master_salt = key_salt[:16], key_salt[16:]
    ssrc = struct.unpack("!I", packet[4:8])[0]
    header, payload = packet[:8], packet[8:]
    session_key = kdf(master_key, master_salt, 0x03, 16)
    session_salt = kdf(master_key, master_salt, 0x05, salt_length)
    e_and_index = struct.pack("!I", 0x80000000 | index)
    if aead:
        iv = bytes(a ^ b for a, b in zip(struct.pack("!HIHI", 0, ssrc, 0, index), session_salt, strict=True))
        return header + AESGCM(session_key).encrypt(iv, payload, header + e_and_index) + e_and_index
    iv = (int.from_bytes(session_salt, "big") << 16) ^ (ssrc << 64) ^ (index << 16)
    encrypted = header + aes_ctr(session_key, iv.to_bytes(16, "big"), payload) + e_and_index
    auth_key = kdf(master_key, master_salt, 0x04, 20)
    return encrypted + hmac.new(auth_key, encrypted, hashlib.sha1).digest()[:tag_length]


def selftest():
    # RFC 3711 Appendix B.3: key derivation.
    master_key = bytes.fromhex("E1F97A0D3E018BE0D64FA32C06DE4139")
    master_salt = bytes.fromhex("0EC675AD498AFEEBB6960B3AABE6")
    assert kdf(master_key, master_salt, 0, 16).hex() == "c61e7a93744f39ee10734afe3ff7a087"
    assert kdf(master_key, master_salt, 2, 14).hex() == "30cbbc08863d8c85d49db34a9ae1"
    assert kdf(master_key, master_salt, 1, 20).hex() == "cebe321f6ff7716b6fd4ab49af256a156d38baa4"
    # RFC 3711 Appendix B.2: AES-CM keystream, blocks 0, 1, 2 and 0xFEFF, 0xFF00, 0xFF01.
    stream = aes_ctr(
        bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3C"),
        bytes.fromhex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000"),
        b"\0" * (16 * 0xFF02),
    )
    expected = {
        0x0000: "e03ead0935c95e80e166b16dd92b4eb4",
        0x0001: "d23513162b02d0f72a43a2fe4a5f97ab",
        0x0002: "41e95b3bb0a2e8dd477901e4fca894c0",
        0xFEFF: "ec8cdf7398607cb0f2d21675ea9ea1e4",
        0xFF00: "362b7c3c6773516318a077d7fc5073ae",
        0xFF01: "6a2cc3787889374fbeb4c81b17ba6c44",
    }
    for block, value in expected.items():
        assert stream[16 * block : 16 * block + 16].hex() == value, hex(block)
    print("selftest ok")


def main(argv):
    if argv[1:] == ["selftest"]:
        selftest()
        return
    kind, suite, key_hex, packet_hex, number = argv[1:6]
    key_salt, packet = bytes.fromhex(key_hex), bytes.fromhex(packet_hex)
    protect = protect_rtp if kind == "rtp" else protect_rtcp
    print(protect(suite, key_salt, packet, int(number)).hex())


if __name__ == "__main__":
    main(sys.argv)
