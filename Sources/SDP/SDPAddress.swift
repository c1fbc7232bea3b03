/// A unicast IP address literal as SDP writes it: `IN IP4 192.0.2.1` or `IN IP6 ::1`
/// (RFC 8866 §5.7). Host names and multicast `/ttl` suffixes are not supported.
public struct SDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// RFC 8866 `addrtype`.
    public enum Family: String, Sendable, Hashable {
        case ipv4 = "IP4"
        case ipv6 = "IP6"
    }

    public let family: Family
    /// The literal, as written.
    public let address: String

    /// Validates `address` as a literal of `family`.
    public init(family: Family, address: String) throws {
        let valid =
            switch family {
            case .ipv4: SDPSyntax.isIPv4Literal(address)
            case .ipv6: SDPSyntax.isIPv6Literal(address)
            }
        guard valid else {
            throw SDPError.invalid("\(quoted(address)) is not an \(family.rawValue) address literal")
        }
        self.family = family
        self.address = address
    }

    /// IPv4 or IPv6, decided by the literal's form.
    public init(_ address: String) throws {
        try self.init(family: address.contains(":") ? .ipv6 : .ipv4, address: address)
    }

    public static let ipv4Loopback = SDPAddress(unchecked: .ipv4, "127.0.0.1")
    public static let ipv6Loopback = SDPAddress(unchecked: .ipv6, "::1")
    /// `0.0.0.0`, what WebRTC offers write before ICE picks an address.
    public static let ipv4Unspecified = SDPAddress(unchecked: .ipv4, "0.0.0.0")

    private init(unchecked family: Family, _ address: String) {
        self.family = family
        self.address = address
    }

    /// The three fields after `c=`: `IN IP4 127.0.0.1`.
    public var description: String { "IN \(family.rawValue) \(address)" }
}
