/// RFC 8866 §5.2 `o=`: who created the session and which version of it this is.
public struct SDPOrigin: Sendable, Hashable {
    /// `-` unless the creator wants a login name here.
    public var username: String
    public var sessionID: UInt64
    /// Incremented whenever the description changes.
    public var sessionVersion: UInt64
    public var addressFamily: SDPAddress.Family
    /// The creator's address or host name (a plain token; o= does not need a literal).
    public var unicastAddress: String

    public init(
        username: String = "-",
        sessionID: UInt64,
        sessionVersion: UInt64 = 1,
        addressFamily: SDPAddress.Family = .ipv4,
        unicastAddress: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.addressFamily = addressFamily
        self.unicastAddress = unicastAddress
    }

    /// An origin with a random session id, as RFC 8866 §5.2 asks for a globally unique one.
    /// Kept below 2^62 because some parsers read the id into a signed 64-bit integer.
    public static func random(address: SDPAddress = .ipv4Loopback, username: String = "-") -> SDPOrigin {
        var generator = SystemRandomNumberGenerator()
        return SDPOrigin(
            username: username,
            sessionID: UInt64.random(in: 1..<(1 << 62), using: &generator),
            sessionVersion: 1,
            addressFamily: address.family,
            unicastAddress: address.address
        )
    }
}

/// RFC 8866 §5.9 `t=`: start and stop times; `0 0` is an unbounded, permanent session.
public struct SDPTiming: Sendable, Hashable {
    public var start: UInt64
    public var stop: UInt64

    public init(start: UInt64, stop: UInt64) {
        self.start = start
        self.stop = stop
    }

    public static let permanent = SDPTiming(start: 0, stop: 0)
}
