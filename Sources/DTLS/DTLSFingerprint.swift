import COpenSSL

/// The SHA-256 hash of a DTLS certificate, as an SDP `a=fingerprint` carries it (RFC 8122 §5):
/// `sha-256 AB:CD:...:EF`, 32 upper-case hex pairs.
///
/// WebRTC certificates are self-signed; nobody vouches for them. What authenticates the peer is
/// that the certificate it presents in the handshake hashes to the fingerprint its SDP promised
/// over the signalling channel (RFC 5763 §5, RFC 8827 §6.5). SHA-256 is the hash RFC 8827
/// requires and every browser sends; other hash functions are refused rather than half supported.
public struct DTLSFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// RFC 8122's name of the hash function: the token before the hex.
    public static let hashFunction = "sha-256"
    /// Bytes of a SHA-256 digest.
    public static let length = 32

    /// The 32 digest bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.length else {
            throw DTLSError(.invalidFingerprint, "a SHA-256 fingerprint has 32 bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// RFC 8122 §5: parses the value of an `a=fingerprint:` attribute (`sha-256 AB:CD:...`), with or
    /// without the `a=fingerprint:` prefix. The hash name is case-insensitive (RFC 8122 §5 takes it
    /// from the IANA registry, whose names are compared that way); the hex is accepted in either
    /// case, though RFC 8122 writes upper case, because some stacks send lower case.
    public init(sdp text: some StringProtocol) throws {
        var value = Substring(text)
        if value.hasPrefix("a=fingerprint:") { value = value.dropFirst("a=fingerprint:".count) }
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else {
            throw DTLSError(
                .invalidFingerprint,
                "a fingerprint is '<hash-function> <hex pairs>', got \(Self.quoted(value))"
            )
        }
        guard parts[0].lowercased() == Self.hashFunction else {
            throw DTLSError(
                .invalidFingerprint,
                "fingerprint hash function \(Self.quoted(parts[0])) is not supported; only sha-256 is"
            )
        }
        let pairs = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for pair in pairs {
            guard pair.utf8.count == 2, pair.allSatisfy(\.isHexDigit), let byte = UInt8(pair, radix: 16) else {
                throw DTLSError(
                    .invalidFingerprint,
                    "fingerprint hex pair \(Self.quoted(pair)) is not two hex digits"
                )
            }
            bytes.append(byte)
        }
        guard bytes.count == Self.length else {
            throw DTLSError(
                .invalidFingerprint,
                "a sha-256 fingerprint has 32 hex pairs, got \(bytes.count)"
            )
        }
        self.bytes = bytes
    }

    /// The SHA-256 of a certificate's DER encoding (RFC 8122 §5: the hash covers the certificate as
    /// it is sent in the handshake).
    init(certificate: OpaquePointer) throws {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        OpenSSLErrorQueue.clear()
        let sha256 = rtc_EVP_sha256()()
        guard rtc_X509_digest()(certificate, sha256, &digest, &length) == 1, Int(length) == Self.length else {
            throw DTLSError(
                .certificate,
                "cannot hash the certificate: \(OpenSSLErrorQueue.drainedText(or: "X509_digest failed"))"
            )
        }
        self.bytes = Array(digest.prefix(Self.length))
    }

    /// The hex pairs, upper case and colon-separated: `AB:CD:...`.
    public var hexPairs: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ":")) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The attribute value: `sha-256 AB:CD:...` (write it as `a=fingerprint:` + this).
    public var sdpValue: String { Self.hashFunction + " " + hexPairs }

    public var description: String { sdpValue }

    /// Quotes a piece of remote input for a message, cut to a length a log line can take.
    private static func quoted(_ text: some StringProtocol) -> String {
        let limit = 80
        return text.count <= limit ? "'\(text)'" : "'\(text.prefix(limit))...' (\(text.utf8.count) bytes)"
    }
}
