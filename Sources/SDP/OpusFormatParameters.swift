/// RFC 7587 §7 `a=fmtp` parameters for Opus.
public struct OpusFormatParameters: Sendable, Hashable {
    /// Shortest packet duration in ms we send (`minptime`); 10 matches libopus's smallest frame
    /// we use and what browsers write.
    public var minimumPacketTime: Int
    /// `useinbandfec=1`: we encode Opus in-band FEC, so receivers may use it. Omitted when off
    /// (RFC 7587 §7: absence means 0).
    public var usesInbandFEC: Bool
    /// `sprop-stereo=1`: we send stereo.
    public var sendsStereo: Bool
    /// `stereo=1`: we prefer to receive stereo (meaningful in an offer).
    public var prefersStereo: Bool

    public init(minimumPacketTime: Int = 10, usesInbandFEC: Bool, sendsStereo: Bool = true, prefersStereo: Bool = true)
    {
        self.minimumPacketTime = minimumPacketTime
        self.usesInbandFEC = usesInbandFEC
        self.sendsStereo = sendsStereo
        self.prefersStereo = prefersStereo
    }

    /// `minptime`, `useinbandfec` (only when on), `sprop-stereo`, `stereo`, in that order.
    public var formatParameters: [SDPFormatParameter] {
        var list = [SDPFormatParameter(name: "minptime", value: String(minimumPacketTime))]
        if usesInbandFEC { list.append(SDPFormatParameter(name: "useinbandfec", value: "1")) }
        list.append(SDPFormatParameter(name: "sprop-stereo", value: sendsStereo ? "1" : "0"))
        list.append(SDPFormatParameter(name: "stereo", value: prefersStereo ? "1" : "0"))
        return list
    }
}
