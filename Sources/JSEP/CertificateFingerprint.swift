/// RFC 8122 §5 `a=fingerprint:<hash-func> <fingerprint>`: the hash of the certificate the peer
/// will present in the DTLS handshake. With self-signed certificates this line is the only thing
/// that binds the DTLS session to the signaled peer (RFC 8827 §6.5), so an offer without one is
/// refused and the transport must check the handshake's certificate against it.
public struct CertificateFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// RFC 8122 `hash-func`, lower-case (the IANA names are; some stacks write `SHA-256`).
    public struct HashFunction: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue.lowercased() }

        public static let sha1 = HashFunction(rawValue: "sha-1")
        public static let sha224 = HashFunction(rawValue: "sha-224")
        public static let sha256 = HashFunction(rawValue: "sha-256")
        public static let sha384 = HashFunction(rawValue: "sha-384")
        public static let sha512 = HashFunction(rawValue: "sha-512")
        public static let md5 = HashFunction(rawValue: "md5")
        public static let md2 = HashFunction(rawValue: "md2")

        /// The digest length, for the functions RFC 8122 §5 names.
        public var digestLength: Int? {
            switch rawValue {
            case "sha-1": 20
            case "sha-224": 28
            case "sha-256": 32
            case "sha-384": 48
            case "sha-512": 64
            case "md5", "md2": 16
            default: nil
            }
        }

        /// The functions the transport checks a certificate with. RFC 8827 §6.5 makes sha-256
        /// mandatory; sha-1 and the MD functions are too weak to bind a session to.
        public static let checked: [HashFunction] = [.sha256, .sha384, .sha512]
    }

    public var hashFunction: HashFunction
    public var digest: [UInt8]

    public init(hashFunction: HashFunction, digest: [UInt8]) throws {
        guard !digest.isEmpty, digest.count <= 64 else {
            throw JSEPError(code: .invalidConfiguration, reason: "a fingerprint digest has 1 to 64 bytes")
        }
        if let length = hashFunction.digestLength, length != digest.count {
            throw JSEPError(
                code: .invalidConfiguration,
                reason: "a \(hashFunction.rawValue) fingerprint has \(length) bytes, not \(digest.count)"
            )
        }
        self.hashFunction = hashFunction
        self.digest = digest
    }

    /// Reads `sha-256 AB:CD:…` (the attribute value); hex digits in either case.
    public init(attributeValue value: some StringProtocol) throws(FingerprintSyntaxError) {
        let fields = Substring(value).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2, Token.isToken(fields[0]) else {
            throw FingerprintSyntaxError("a=fingerprint needs '<hash function> <hex bytes>'")
        }
        let function = HashFunction(rawValue: String(fields[0]))
        var digest: [UInt8] = []
        for pair in fields[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.utf8.count == 2, let byte = UInt8(pair, radix: 16), pair.utf8.allSatisfy(\.isHexDigit) else {
                throw FingerprintSyntaxError(
                    "fingerprint \(Excerpt.quoted(fields[1], limit: 24)) is not hex byte pairs separated by ':'"
                )
            }
            digest.append(byte)
        }
        guard digest.count <= 64 else {
            throw FingerprintSyntaxError("fingerprint has \(digest.count) bytes, more than any hash function's 64")
        }
        if let length = function.digestLength, length != digest.count {
            throw FingerprintSyntaxError(
                "a \(function.rawValue) fingerprint has \(length) bytes, this one \(digest.count)"
            )
        }
        self.hashFunction = function
        self.digest = digest
    }

    /// `sha-256 AB:CD:…`, upper-case hex as RFC 8122 §5 writes it (`UHEX`).
    public var attributeValue: String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        var hex = ""
        for (index, byte) in digest.enumerated() {
            if index > 0 { hex += ":" }
            hex.unicodeScalars.append(digits[Int(byte >> 4)])
            hex.unicodeScalars.append(digits[Int(byte & 0x0F)])
        }
        return "\(hashFunction.rawValue) \(hex)"
    }

    public var description: String { attributeValue }
}

/// What is wrong with an `a=fingerprint` value; the offer parser adds the line.
public struct FingerprintSyntaxError: Error, Sendable, Equatable {
    public var problem: String

    init(_ problem: String) { self.problem = problem }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
