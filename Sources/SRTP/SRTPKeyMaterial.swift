#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An SRTP master key and master salt for one suite (RFC 3711 §3.2.1).
///
/// The bytes are secret. Every printing path (`description`, `debugDescription`, string
/// interpolation, `dump`) shows only the suite and length; the key leaves this type only through
/// the explicitly named accessors (`keyAndSalt`, `inlineBase64()`, `hexKeyAndSalt()`) that SDP
/// writing and receiver setup need. Never log their results.
public struct SRTPKeyMaterial: Sendable, Equatable {
    public let suite: SRTPSuite
    /// Master key followed by master salt, `suite.keyMaterialLength` bytes.
    public let keyAndSalt: [UInt8]

    /// Takes key and salt concatenated, as RFC 4568 `inline:` carries them.
    public init(suite: SRTPSuite, keyAndSalt: [UInt8]) throws {
        guard keyAndSalt.count == suite.keyMaterialLength else {
            throw SRTPError(
                code: .invalidKeyMaterial,
                message:
                    "\(suite.sdpName) needs \(suite.keyMaterialLength) bytes of key and salt, got \(keyAndSalt.count)"
            )
        }
        self.suite = suite
        self.keyAndSalt = keyAndSalt
    }

    public init(suite: SRTPSuite, masterKey: [UInt8], masterSalt: [UInt8]) throws {
        guard masterKey.count == suite.masterKeyLength, masterSalt.count == suite.masterSaltLength else {
            throw SRTPError(
                code: .invalidKeyMaterial,
                message: "\(suite.sdpName) needs a \(suite.masterKeyLength)-byte key and a "
                    + "\(suite.masterSaltLength)-byte salt, got \(masterKey.count) and \(masterSalt.count)"
            )
        }
        try self.init(suite: suite, keyAndSalt: masterKey + masterSalt)
    }

    /// Fresh key material from the system CSPRNG (`SystemRandomNumberGenerator`, which reads
    /// getrandom(2) on Linux). Use one per session and destination.
    public static func random(for suite: SRTPSuite = .default) -> SRTPKeyMaterial {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: suite.keyMaterialLength)
        var index = 0
        while index < bytes.count {
            var word = generator.next()
            for _ in 0..<8 where index < bytes.count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        // The length matches the suite by construction.
        return SRTPKeyMaterial(uncheckedSuite: suite, keyAndSalt: bytes)
    }

    private init(uncheckedSuite suite: SRTPSuite, keyAndSalt: [UInt8]) {
        self.suite = suite
        self.keyAndSalt = keyAndSalt
    }

    public var masterKey: [UInt8] { Array(keyAndSalt.prefix(suite.masterKeyLength)) }
    public var masterSalt: [UInt8] { Array(keyAndSalt.suffix(suite.masterSaltLength)) }

    /// RFC 4568 §6.1: decodes the key-info of an `inline:` key parameter. Accepts the value with or
    /// without the `inline:` prefix; a `|lifetime` or `|MKI:length` suffix is rejected because we
    /// neither rekey nor use MKIs.
    public init(suite: SRTPSuite, inline text: some StringProtocol) throws {
        var value = Substring(text)
        if value.hasPrefix("inline:") { value = value.dropFirst("inline:".count) }
        if value.contains("|") {
            throw SRTPError(
                code: .invalidInlineKey,
                message: "inline key parameters with a lifetime or MKI ('|') are not supported"
            )
        }
        let expectedLength = (suite.keyMaterialLength + 2) / 3 * 4
        guard value.utf8.count == expectedLength else {
            throw SRTPError(
                code: .invalidInlineKey,
                message:
                    "\(suite.sdpName) inline key must be \(expectedLength) base64 characters, got \(value.utf8.count)"
            )
        }
        // Canonical base64 only (one key, one spelling): it must encode back to the same text.
        guard let data = Data(base64Encoded: String(value)), data.base64EncodedString() == value else {
            throw SRTPError(code: .invalidInlineKey, message: "inline key is not valid base64")
        }
        try self.init(suite: suite, keyAndSalt: [UInt8](data))
    }

    /// The RFC 4568 key-info: base64 of key || salt (40 characters for the AES-CM suites, also 40
    /// with padding for GCM's 28 bytes). Secret: goes into the SDP and nowhere else.
    public func inlineBase64() -> String { Data(keyAndSalt).base64EncodedString() }

    /// Key || salt as lowercase hex, the form GStreamer's `srtp-key=(buffer)` caps field takes.
    /// Secret: for receiver configuration only.
    public func hexKeyAndSalt() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(keyAndSalt.count * 2)
        for byte in keyAndSalt {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension SRTPKeyMaterial: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "SRTPKeyMaterial(\(suite.sdpName), \(keyAndSalt.count) bytes, <redacted>)"
    }

    public var debugDescription: String { description }

    /// `dump()` and reflection-based printers see the suite only, never the bytes.
    public var customMirror: Mirror {
        Mirror(self, children: ["suite": suite, "keyAndSalt": "<redacted>"], displayStyle: .struct)
    }
}
