/// RFC 4568 §9.1 `a=crypto:<tag> <crypto-suite> <key-params> [<session-params>]`.
///
/// The SDP module knows no suites: `suite` is the name as written (the SRTP module's
/// `SRTPSuite(sdpName:)` maps it) and key lengths are checked when an SRTP session is built.
/// Printing a value shows the suite but never the key bytes.
public struct SDPCrypto: Sendable, Hashable {
    /// Identifies this line among several offered ones (1-9 digits).
    public var tag: UInt32
    /// `AES_CM_128_HMAC_SHA1_80`, ...: letters, digits and `_`.
    public var suite: String
    /// At least one `inline:` key, separated by `;` in the line.
    public var keys: [SDPCryptoKey]
    /// Optional session parameters (`KDR=`, `UNENCRYPTED_SRTCP`, ...), kept as written.
    public var sessionParameters: [String]

    public init(tag: UInt32 = 1, suite: String, keys: [SDPCryptoKey], sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keys = keys
        self.sessionParameters = sessionParameters
    }

    /// The common case: one inline key (master key || master salt) without lifetime or MKI.
    public init(tag: UInt32 = 1, suite: String, keySalt: [UInt8]) {
        self.init(tag: tag, suite: suite, keys: [SDPCryptoKey(keySalt: keySalt)])
    }
}

/// One RFC 4568 §6.1 `inline:<key||salt>[|<lifetime>][|<MKI>:<length>]` key parameter.
public struct SDPCryptoKey: Sendable, Hashable {
    /// The decoded master key followed by the master salt. Secret.
    public var keySalt: [UInt8]
    /// `2^31` or a decimal count of packets, as written.
    public var lifetime: String?
    /// `<value>:<length>`, as written.
    public var mki: String?

    public init(keySalt: [UInt8], lifetime: String? = nil, mki: String? = nil) {
        self.keySalt = keySalt
        self.lifetime = lifetime
        self.mki = mki
    }
}

extension SDPCrypto: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "SDPCrypto(tag: \(tag), suite: \(suite), keys: \(keys.count) redacted)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["tag": tag, "suite": suite, "keys": keys, "sessionParameters": sessionParameters],
            displayStyle: .struct
        )
    }
}

extension SDPCryptoKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SDPCryptoKey(\(keySalt.count) bytes, <redacted>)" }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["keySalt": "<redacted>", "lifetime": lifetime as Any, "mki": mki as Any])
    }
}
