/// RFC 3605 `a=rtcp:<port> [IN IP4 <address>]`.
public struct SDPRTCPAttribute: Sendable, Hashable {
    public var port: UInt16
    public var address: SDPAddress?

    public init(port: UInt16, address: SDPAddress? = nil) {
        self.port = port
        self.address = address
    }
}

/// RFC 5576 §4.1 `a=ssrc:<ssrc-id> <attribute>[:<value>]`, for example `cname:`.
public struct SDPSSRCAttribute: Sendable, Hashable {
    public var ssrc: UInt32
    public var name: String
    public var value: String?

    public init(ssrc: UInt32, name: String, value: String?) {
        self.ssrc = ssrc
        self.name = name
        self.value = value
    }

    /// The RTCP CNAME of a source (RFC 5576 §6.1), which receivers such as GStreamer key on.
    public static func cname(ssrc: UInt32, _ cname: String) -> SDPSSRCAttribute {
        SDPSSRCAttribute(ssrc: ssrc, name: "cname", value: cname)
    }
}
