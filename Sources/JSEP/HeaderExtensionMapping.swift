import SDP

/// RFC 8285 §7 `a=extmap:<id>["/"<direction>] <URI> [<attributes>]`: an RTP header extension the
/// offerer can use, and the id it would carry in packets.
///
/// Recorded, not answered yet: answering transport-cc or abs-send-time means stamping them on
/// every packet we send, which belongs to congestion control. An answer without `a=extmap` is
/// always valid (RFC 8285 §5: an extension not in the answer is not used).
public struct HeaderExtensionMapping: Sendable, Hashable {
    /// 1–14 for one-byte headers, 15–255 for two-byte headers, 4096–4351 for the negotiation
    /// range RFC 8285 §7 reserves.
    public var id: UInt16
    public var direction: SDPDirection?
    public var uri: String
    /// Whatever follows the URI (extension-specific), nil when absent.
    public var attributes: String?

    public init(id: UInt16, direction: SDPDirection? = nil, uri: String, attributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.attributes = attributes
    }

    /// draft-holmer-rmcat-transport-wide-cc-extensions-01: the transport-wide sequence number
    /// TWCC feedback refers to.
    public static let transportWideCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// The send time REMB's estimator reads.
    public static let absoluteSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    /// RFC 8843 §15.1: the mid in each packet, for demultiplexing a bundle.
    public static let sdesMID = "urn:ietf:params:rtp-hdrext:sdes:mid"

    /// Reads the value after `a=extmap:`.
    init(attributeValue value: Substring) throws(ExtmapSyntaxError) {
        let fields = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, !fields[0].isEmpty, Token.isVisible(fields[1]) else {
            throw ExtmapSyntaxError("a=extmap needs '<id>[/<direction>] <URI>'")
        }
        let entry = fields[0].split(separator: "/", omittingEmptySubsequences: false)
        guard entry.count <= 2, entry[0].utf8.count <= 5, let id = ICECandidate.decimal(entry[0], as: UInt16.self),
            (1...255).contains(id) || (4096...4351).contains(id)
        else {
            throw ExtmapSyntaxError(
                "a=extmap id \(Excerpt.quoted(fields[0])) is not 1-255 or 4096-4351 (RFC 8285 section 7)"
            )
        }
        var direction: SDPDirection?
        if entry.count == 2 {
            guard let parsed = SDPDirection(rawValue: String(entry[1])) else {
                throw ExtmapSyntaxError("a=extmap direction \(Excerpt.quoted(entry[1])) is not a direction")
            }
            direction = parsed
        }
        var attributes: String?
        if fields.count == 3 {
            guard !fields[2].isEmpty else { throw ExtmapSyntaxError("a=extmap ends with a space") }
            attributes = String(fields[2])
        }
        self.init(id: id, direction: direction, uri: String(fields[1]), attributes: attributes)
    }
}

/// What is wrong with an `a=extmap` value; the offer parser adds the line.
struct ExtmapSyntaxError: Error {
    var problem: String

    init(_ problem: String) { self.problem = problem }
}
