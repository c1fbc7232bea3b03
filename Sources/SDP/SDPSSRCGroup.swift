/// RFC 5576 §4.2 `a=ssrc-group:<semantics> <ssrc-id> ...`: sources of one media section that
/// belong together. With `FID` (flow identification, RFC 5576 §4.2 and RFC 4588 §8.3) the
/// first SSRC is the original stream and the second its RTX retransmission stream.
public struct SDPSSRCGroup: Sendable, Hashable {
    /// `FID`, `FEC`, `SIM`, … (a token).
    public var semantics: String
    /// At least one SSRC, in order.
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    /// `FID <original> <retransmission>`: pairs a stream with its RTX stream.
    public static func flowIdentification(original: UInt32, retransmission: UInt32) -> SDPSSRCGroup {
        SDPSSRCGroup(semantics: "FID", ssrcs: [original, retransmission])
    }
}
