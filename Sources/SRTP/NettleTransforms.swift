import CNettle
import CSRTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// libsrtp2 with Nettle's AES and HMAC-SHA1 under its AES-CM suites, and Nettle's GCM under
/// `AEAD_AES_128_GCM` (RFC 7714; the suite browsers choose over DTLS-SRTP).
///
/// Debian builds libsrtp2 on NSS, which creates and destroys an AES-CTR context for every packet
/// and hashes without SHA-NI: 6.8 µs to protect a 1200-byte packet on the benchmark machine, 14
/// allocations, about 65,000 instructions. libsrtp2 lets a program swap the cipher and the
/// authenticator behind an algorithm id (`srtp_replace_cipher_type`, `srtp_replace_auth_type`
/// in `srtp2/cipher.h` and `srtp2/auth.h`). Nettle (GnuTLS's crypto library; its Debian build
/// picks AES-NI and SHA-NI at run time) keeps a key schedule and a keyed HMAC in plain structs,
/// so a packet costs a counter reset, `ctr_crypt` and a struct copy: 1.24 µs, no allocation.
/// OpenSSL 3 was measured too: 1.32 µs, two allocations per packet, and 3.5 MB more resident
/// memory for its loader and provider tables. The bytes on the wire are identical: the SRTP
/// logic (key derivation, index, replay window, packet layout) stays libsrtp's.
///
/// libsrtp accepts a replacement only if it passes its own self-test data for that id as well as
/// the replacement's (RFC 3711 B.2 for AES-CM, RFC 2202 for HMAC-SHA1, the GCM specification's
/// test case 4 for AES-GCM, with 16- and 8-byte tags) and a random round trip. On NSS, libsrtp's
/// GCM made five allocations per packet (a PK11 context each time); on Nettle it makes none.
enum NettleTransforms {
    /// Registers both replacements with libsrtp; call once, after `srtp_init`, before any session.
    static func install() -> Result<Void, SRTPError> {
        var status = srtp_replace_cipher_type(counterModeType, srtp_cipher_type_id_t(SRTP_AES_ICM_128))
        guard status == srtp_err_status_ok else {
            return .failure(SRTPError(status: status, operation: "srtp_replace_cipher_type (AES-ICM-128 on Nettle)"))
        }
        status = srtp_replace_auth_type(hmacType, srtp_auth_type_id_t(SRTP_HMAC_SHA1))
        guard status == srtp_err_status_ok else {
            return .failure(SRTPError(status: status, operation: "srtp_replace_auth_type (HMAC-SHA1 on Nettle)"))
        }
        status = srtp_replace_cipher_type(gcmType, srtp_cipher_type_id_t(SRTP_AES_GCM_128))
        guard status == srtp_err_status_ok else {
            return .failure(SRTPError(status: status, operation: "srtp_replace_cipher_type (AES-GCM-128 on Nettle)"))
        }
        return .success(())
    }

    /// "Nettle 3.8": the library the process loaded.
    static var version: String { "Nettle \(nettle_version_major()).\(nettle_version_minor())" }

    // MARK: AES-ICM (RFC 3711 §4.1.1) on Nettle's AES-128 in counter mode

    /// One cipher instance: the key schedule, the salt, and the counter block of the packet being
    /// processed. libsrtp passes key (16 bytes) and salt (14) as one 30-byte key.
    private struct CounterState {
        var aes = aes128_ctx()
        /// Salt in bytes 0...13, bytes 14 and 15 zero (the block counter's place).
        var salt: (UInt64, UInt64) = (0, 0)
        var counter: (UInt64, UInt64) = (0, 0)
    }

    private static let keyLength = 16
    private static let saltLength = 14

    nonisolated(unsafe) private static let counterModeType: UnsafeMutablePointer<srtp_cipher_type_t> = allocated(
        srtp_cipher_type_t(
            alloc: counterAlloc,
            dealloc: counterDealloc,
            init: counterInit,
            set_aad: nil,
            encrypt: counterEncrypt,
            decrypt: counterEncrypt,
            set_iv: counterSetIV,
            get_tag: nil,
            description: permanentCString("AES-128 ICM (Nettle)"),
            test_data: counterModeTestCase,
            id: srtp_cipher_type_id_t(SRTP_AES_ICM_128)
        )
    )

    /// RFC 3711 Appendix B.2: session key and salt, index 0, the first 32 keystream bytes.
    nonisolated(unsafe) private static let counterModeTestCase: UnsafeMutablePointer<srtp_cipher_test_case_t> =
        allocated(
            srtp_cipher_test_case_t(
                key_length_octets: Int32(keyLength + saltLength),
                key: permanentBytes(hex: "2B7E151628AED2A6ABF7158809CF4F3C" + "F0F1F2F3F4F5F6F7F8F9FAFBFCFD"),
                idx: UnsafeMutablePointer(mutating: permanentBytes(count: 16)),
                plaintext_length_octets: 32,
                plaintext: permanentBytes(count: 32),
                ciphertext_length_octets: 32,
                ciphertext: permanentBytes(
                    hex: "E03EAD0935C95E80E166B16DD92B4EB4" + "D23513162B02D0F72A43A2FE4A5F97AB"
                ),
                aad_length_octets: 0,
                aad: nil,
                tag_length_octets: 0,
                next_test_case: nil
            )
        )

    private static let counterAlloc: srtp_cipher_alloc_func_t = { pointer, keyLength, _ in
        guard let pointer else { return srtp_err_status_bad_param }
        // AES-128 only: 192 and 256 keep their own ids and implementations.
        guard Int(keyLength) == NettleTransforms.keyLength + NettleTransforms.saltLength else {
            return srtp_err_status_bad_param
        }
        pointer.pointee = allocated(
            srtp_cipher_t(
                type: UnsafePointer(counterModeType),
                state: UnsafeMutableRawPointer(allocated(CounterState())),
                key_len: keyLength,
                algorithm: Int32(SRTP_AES_ICM_128)
            )
        )
        return srtp_err_status_ok
    }

    private static let counterDealloc: srtp_cipher_dealloc_func_t = { cipher in
        guard let cipher else { return srtp_err_status_bad_param }
        release(cipher.pointee.state, as: CounterState.self)  // key schedule and salt
        cipher.deallocate()
        return srtp_err_status_ok
    }

    private static let counterInit: srtp_cipher_init_func_t = { raw, key in
        guard let raw, let key else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: CounterState.self)
        var salt: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &salt) {
            $0.baseAddress?.copyMemory(from: key + NettleTransforms.keyLength, byteCount: NettleTransforms.saltLength)
        }
        state.pointee.salt = salt
        state.pointee.counter = salt
        nettle_aes128_set_encrypt_key(&state.pointee.aes, key)
        return srtp_err_status_ok
    }

    /// Counter block = salt XOR iv (libsrtp builds iv from SSRC and packet index, §4.1.1).
    private static let counterSetIV: srtp_cipher_set_iv_func_t = { raw, iv, _ in
        guard let raw, let iv else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: CounterState.self)
        let vector = UnsafeRawPointer(iv)
        state.pointee.counter = (
            state.pointee.salt.0 ^ vector.loadUnaligned(as: UInt64.self),
            state.pointee.salt.1 ^ vector.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        )
        return srtp_err_status_ok
    }

    /// `nettle_cipher_func` for AES-128: the cast C does implicitly, spelled out.
    private static let encryptBlocks:
        @convention(c) (
            UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?
        ) -> Void = { context, length, destination, source in
            nettle_aes128_encrypt(context?.assumingMemoryBound(to: aes128_ctx.self), length, destination, source)
        }

    /// In place; counter mode encrypts and decrypts alike. The counter block advances per
    /// 16 bytes from the packet's IV (RFC 3711 §4.1.1), as `ctr_crypt` does.
    private static let counterEncrypt: srtp_cipher_encrypt_func_t = { raw, buffer, length in
        guard let raw, let buffer, let length else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: CounterState.self)
        withUnsafeMutableBytes(of: &state.pointee.counter) { counter in
            nettle_ctr_crypt(
                &state.pointee.aes,
                encryptBlocks,
                16,
                counter.baseAddress?.assumingMemoryBound(to: UInt8.self),
                Int(length.pointee),
                buffer,
                buffer
            )
        }
        return srtp_err_status_ok
    }

    // MARK: HMAC-SHA1 (RFC 2104, RFC 3711 §4.2.1) on Nettle

    /// The keyed HMAC (inner and outer hash states after the key), and the one in use: starting a
    /// message is a struct copy, not a key schedule.
    private struct HMACState {
        var keyed = hmac_sha1_ctx()
        var message = hmac_sha1_ctx()
    }

    nonisolated(unsafe) private static let hmacType: UnsafeMutablePointer<srtp_auth_type_t> = allocated(
        srtp_auth_type_t(
            alloc: hmacAlloc,
            dealloc: hmacDealloc,
            init: hmacInit,
            compute: hmacCompute,
            update: hmacUpdate,
            start: hmacStart,
            description: permanentCString("HMAC-SHA1 (Nettle)"),
            test_data: hmacTestCase,
            id: srtp_auth_type_id_t(SRTP_HMAC_SHA1)
        )
    )

    /// RFC 2202 §3, test case 1.
    nonisolated(unsafe) private static let hmacTestCase: UnsafeMutablePointer<srtp_auth_test_case_t> = allocated(
        srtp_auth_test_case_t(
            key_length_octets: 20,
            key: permanentBytes(hex: String(repeating: "0b", count: 20)),
            data_length_octets: 8,
            data: permanentBytes(hex: "4869205468657265"),  // "Hi There"
            tag_length_octets: 20,
            tag: permanentBytes(hex: "b617318655057264e28bc0b6fb378c8ef146be00"),
            next_test_case: nil
        )
    )

    private static let sha1DigestLength = 20

    private static let hmacAlloc: srtp_auth_alloc_func = { pointer, keyLength, tagLength in
        guard let pointer, tagLength >= 0, Int(tagLength) <= NettleTransforms.sha1DigestLength else {
            return srtp_err_status_bad_param
        }
        pointer.pointee = allocated(
            srtp_auth_t(
                type: UnsafePointer(hmacType),
                state: UnsafeMutableRawPointer(allocated(HMACState())),
                out_len: tagLength,
                key_len: keyLength,
                prefix_len: 0
            )
        )
        return srtp_err_status_ok
    }

    private static let hmacDealloc: srtp_auth_dealloc_func = { auth in
        guard let auth else { return srtp_err_status_bad_param }
        release(auth.pointee.state, as: HMACState.self)  // keyed hash states
        auth.deallocate()
        return srtp_err_status_ok
    }

    private static let hmacInit: srtp_auth_init_func = { raw, key, keyLength in
        guard let raw, let key, keyLength >= 0 else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: HMACState.self)
        nettle_hmac_sha1_set_key(&state.pointee.keyed, Int(keyLength), key)
        state.pointee.message = state.pointee.keyed
        return srtp_err_status_ok
    }

    private static let hmacStart: srtp_auth_start_func = { raw in
        guard let raw else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: HMACState.self)
        state.pointee.message = state.pointee.keyed
        return srtp_err_status_ok
    }

    private static let hmacUpdate: srtp_auth_update_func = { raw, message, length in
        guard let raw, length >= 0 else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: HMACState.self)
        nettle_hmac_sha1_update(&state.pointee.message, Int(length), message)
        return srtp_err_status_ok
    }

    /// Adds the last bytes (libsrtp passes the rollover counter here) and writes the tag,
    /// truncated to `tagLength` (10 or 4 bytes for SRTP; Nettle truncates).
    private static let hmacCompute: srtp_auth_compute_func = { raw, message, length, tagLength, tag in
        guard let raw, let tag, length >= 0, tagLength >= 0, Int(tagLength) <= NettleTransforms.sha1DigestLength
        else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: HMACState.self)
        nettle_hmac_sha1_update(&state.pointee.message, Int(length), message)
        nettle_hmac_sha1_digest(&state.pointee.message, Int(tagLength), tag)
        return srtp_err_status_ok
    }

    // MARK: AES-GCM (RFC 7714) on Nettle's GCM-AES-128

    /// One cipher instance: the key schedule and hash key, the packet's GCM state, and the
    /// associated data libsrtp hands over before the payload. It comes in pieces (SRTCP: the
    /// header, then the index word), while Nettle takes it in one piece unless each but the
    /// last is a whole number of blocks, so it is gathered here first (RTP headers with
    /// extensions stay far below `maximumAAD`).
    private struct GCMState {
        var gcm = gcm_aes128_ctx()
        var tagLength = 16
        var aadLength = 0
        var aad: UnsafeMutablePointer<UInt8>
    }

    /// 16-byte key and 12-byte salt (RFC 7714 §12); the salt is libsrtp's (it builds the IV).
    private static let gcmKeyWithSaltLength = 28
    private static let gcmIVLength = 12
    private static let maximumAAD = 2048

    nonisolated(unsafe) private static let gcmType: UnsafeMutablePointer<srtp_cipher_type_t> = allocated(
        srtp_cipher_type_t(
            alloc: gcmAlloc,
            dealloc: gcmDealloc,
            init: gcmInit,
            set_aad: gcmSetAAD,
            encrypt: gcmEncrypt,
            decrypt: gcmDecrypt,
            set_iv: gcmSetIV,
            get_tag: gcmGetTag,
            description: permanentCString("AES-128 GCM (Nettle)"),
            test_data: gcmTestCase,
            id: srtp_cipher_type_id_t(SRTP_AES_GCM_128)
        )
    )

    /// The GCM specification's test case 4 (key, IV, 60-byte plaintext, 20 bytes of associated
    /// data), with its 16-byte tag and then truncated to 8 bytes.
    nonisolated(unsafe) private static let gcmTestCase: UnsafeMutablePointer<srtp_cipher_test_case_t> = {
        let key = permanentBytes(hex: "FEFFE9928665731C6D6A8F9467308308" + "0102030405060708090A0B0C")
        let iv = permanentBytes(hex: "CAFEBABEFACEDBADDECAF888")
        let plaintext = permanentBytes(
            hex: "D9313225F88406E5A55909C5AFF5269A86A7A9531534F7DA2E4C303D8A318A721C3C0C95956809532FCF0E2449A6B525"
                + "B16AEDF5AA0DE657BA637B39"
        )
        let aad = permanentBytes(hex: "FEEDFACEDEADBEEFFEEDFACEDEADBEEFABADDAD2")
        let ciphertext = permanentBytes(
            hex: "42831EC2217774244B7221B784D0D49CE3AA212F2C02A4E035C17E2329ACA12E21D514B25466931C7D8F6A5AAC84AA05"
                + "1BA30B396A0AAC973D58E091" + "5BC94FBC3221A5DB94FAE95AE7121A47"
        )
        func testCase(
            tag: Int32,
            next: UnsafeMutablePointer<srtp_cipher_test_case_t>?
        )
            -> UnsafeMutablePointer<srtp_cipher_test_case_t>
        {
            allocated(
                srtp_cipher_test_case_t(
                    key_length_octets: Int32(gcmKeyWithSaltLength),
                    key: key,
                    idx: UnsafeMutablePointer(mutating: iv),
                    plaintext_length_octets: 60,
                    plaintext: plaintext,
                    ciphertext_length_octets: UInt32(60 + tag),
                    ciphertext: ciphertext,
                    aad_length_octets: 20,
                    aad: aad,
                    tag_length_octets: tag,
                    next_test_case: next
                )
            )
        }
        return testCase(tag: 16, next: testCase(tag: 8, next: nil))
    }()

    private static let gcmAlloc: srtp_cipher_alloc_func_t = { pointer, keyLength, tagLength in
        guard let pointer, Int(keyLength) == NettleTransforms.gcmKeyWithSaltLength, tagLength == 16 || tagLength == 8
        else { return srtp_err_status_bad_param }
        let aad = UnsafeMutablePointer<UInt8>.allocate(capacity: NettleTransforms.maximumAAD)
        var state = GCMState(aad: aad)
        state.tagLength = Int(tagLength)
        pointer.pointee = allocated(
            srtp_cipher_t(
                type: UnsafePointer(gcmType),
                state: UnsafeMutableRawPointer(allocated(state)),
                key_len: keyLength,
                algorithm: Int32(SRTP_AES_GCM_128)
            )
        )
        return srtp_err_status_ok
    }

    private static let gcmDealloc: srtp_cipher_dealloc_func_t = { cipher in
        guard let cipher else { return srtp_err_status_bad_param }
        if let raw = cipher.pointee.state {
            let aad = raw.assumingMemoryBound(to: GCMState.self).pointee.aad
            explicit_bzero(aad, NettleTransforms.maximumAAD)
            aad.deallocate()
        }
        release(cipher.pointee.state, as: GCMState.self)  // key schedule and hash key
        cipher.deallocate()
        return srtp_err_status_ok
    }

    private static let gcmInit: srtp_cipher_init_func_t = { raw, key in
        guard let raw, let key else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        nettle_gcm_aes128_set_key(&state.pointee.gcm, key)
        state.pointee.aadLength = 0
        return srtp_err_status_ok
    }

    /// The 12-byte IV libsrtp made from the salt, SSRC and index (RFC 7714 §8.1); a new message.
    private static let gcmSetIV: srtp_cipher_set_iv_func_t = { raw, iv, _ in
        guard let raw, let iv else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        nettle_gcm_aes128_set_iv(&state.pointee.gcm, NettleTransforms.gcmIVLength, iv)
        state.pointee.aadLength = 0
        return srtp_err_status_ok
    }

    private static let gcmSetAAD: srtp_cipher_set_aad_func_t = { raw, aad, length in
        guard let raw, let aad else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        let count = Int(length)
        guard state.pointee.aadLength + count <= NettleTransforms.maximumAAD else { return srtp_err_status_bad_param }
        (state.pointee.aad + state.pointee.aadLength).update(from: aad, count: count)
        state.pointee.aadLength += count
        return srtp_err_status_ok
    }

    /// Hands the gathered associated data to Nettle, before the first payload byte or the tag.
    private static func flushAAD(_ state: UnsafeMutablePointer<GCMState>) {
        guard state.pointee.aadLength > 0 else { return }
        nettle_gcm_aes128_update(&state.pointee.gcm, state.pointee.aadLength, state.pointee.aad)
        state.pointee.aadLength = 0
    }

    /// In place; the tag follows through `get_tag`.
    private static let gcmEncrypt: srtp_cipher_encrypt_func_t = { raw, buffer, length in
        guard let raw, let buffer, let length else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        flushAAD(state)
        nettle_gcm_aes128_encrypt(&state.pointee.gcm, Int(length.pointee), buffer, buffer)
        return srtp_err_status_ok
    }

    private static let gcmGetTag: srtp_cipher_get_tag_func_t = { raw, tag, length in
        guard let raw, let tag, let length else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        flushAAD(state)
        nettle_gcm_aes128_digest(&state.pointee.gcm, state.pointee.tagLength, tag)
        length.pointee = UInt32(state.pointee.tagLength)
        return srtp_err_status_ok
    }

    /// In place: `length` covers the ciphertext and its tag, and is left covering the plaintext.
    /// A tag that does not match (compared in constant time) is `auth_fail`.
    private static let gcmDecrypt: srtp_cipher_decrypt_func_t = { raw, buffer, length in
        guard let raw, let buffer, let length else { return srtp_err_status_bad_param }
        let state = raw.assumingMemoryBound(to: GCMState.self)
        let tagLength = state.pointee.tagLength
        guard Int(length.pointee) >= tagLength else { return srtp_err_status_bad_param }
        let payload = Int(length.pointee) - tagLength
        flushAAD(state)
        nettle_gcm_aes128_decrypt(&state.pointee.gcm, payload, buffer, buffer)
        var computed: (UInt64, UInt64) = (0, 0)
        let equal = withUnsafeMutableBytes(of: &computed) { bytes -> Bool in
            let digest = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            nettle_gcm_aes128_digest(&state.pointee.gcm, tagLength, digest)
            return nettle_memeql_sec(bytes.baseAddress, buffer + payload, tagLength) != 0
        }
        guard equal else { return srtp_err_status_auth_fail }
        length.pointee = UInt32(payload)
        return srtp_err_status_ok
    }

    // MARK: memory handed to libsrtp

    /// `value` in memory of its own: the type tables and test data libsrtp keeps for the process,
    /// and each cipher's or authenticator's state (freed by `release`).
    private static func allocated<Value>(_ value: Value) -> UnsafeMutablePointer<Value> {
        let pointer = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }

    /// Wipes (keys live here) and frees a state made by `allocated`.
    private static func release<State>(_ raw: UnsafeMutableRawPointer?, as: State.Type) {
        guard let raw else { return }
        explicit_bzero(raw, MemoryLayout<State>.size)
        raw.assumingMemoryBound(to: State.self).deallocate()
    }

    private static func permanentCString(_ text: String) -> UnsafeMutablePointer<CChar> {
        let bytes = Array(text.utf8CString)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        pointer.initialize(from: bytes, count: bytes.count)
        return pointer
    }

    private static func permanentBytes(count: Int) -> UnsafePointer<UInt8> {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        pointer.initialize(repeating: 0, count: count)
        return UnsafePointer(pointer)
    }

    /// Test-vector bytes from hex written in this file (never input).
    private static func permanentBytes(hex: String) -> UnsafePointer<UInt8> {
        let digits = Array(hex.utf8)
        let count = digits.count / 2
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        for index in 0..<count {
            let pair = String(decoding: digits[2 * index..<2 * index + 2], as: UTF8.self)
            (pointer + index).initialize(to: UInt8(pair, radix: 16) ?? 0)
        }
        return UnsafePointer(pointer)
    }
}
