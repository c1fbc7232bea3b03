import SDP

/// RFC 8285 §5 `a=extmap:<id>["/"<direction>] <URI> [<attributes>]`: an RTP header extension a
/// description's author can use, and the id it would carry in packets. The direction is the
/// author's own (RFC 8285 §5: "with relation to the device being configured"); without one it is
/// the stream's (§7).
///
/// We answer and offer only the extensions our sender stamps
/// (`WebRTCAnswer.Configuration.headerExtensions`: transport-wide cc; the WHIP offer adds mid,
/// rid and repaired rid with simulcast, `PublishOffer`), and only with ids 1–14,
/// since we write the one-byte form (RFC 8285 §4.2). An answer without `a=extmap` is always valid
/// (RFC 8285 §7: an answerer removes what it does not want).
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
    /// RFC 8852 §3.1: the rid of the RTP stream a packet belongs to (a simulcast layer).
    public static let sdesRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    /// RFC 8852 §3.2: in an RTX packet, the rid of the stream it repairs.
    public static let sdesRepairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"

    /// The ids the one-byte header form can carry (RFC 8285 §4.2: 0 is padding, 15 reserved).
    static let oneByteIDs: ClosedRange<UInt16> = 1...14

    /// The value after `a=extmap:`.
    var attributeValue: String {
        var value = String(id)
        if let direction { value += "/\(direction.rawValue)" }
        value += " \(uri)"
        if let attributes { value += " \(attributes)" }
        return value
    }

    /// What we answer to this offered mapping as the sender of its stream: the same id and URI
    /// (RFC 8285 §7: "the same identifier MUST be used for the same offered extension in the
    /// answer"), no attributes, and the direction that complements the offerer's; nil when we
    /// cannot send it. The offerer's direction is its own: absent (the stream's: recvonly or
    /// sendrecv, as we only answer such sections) or `sendrecv` lets us send, answered without a
    /// qualifier (our sendonly stream's); `recvonly` MUST be answered `sendonly` (§7);
    /// `sendonly` (only the offerer sends it) and `inactive` leave us nothing to send. Ids
    /// outside 1–14 do not fit our one-byte headers (4096–4351 would need remapping, §7).
    var answerAsSender: HeaderExtensionMapping? {
        guard Self.oneByteIDs.contains(id) else { return nil }
        switch direction {
        case nil, .sendrecv: return HeaderExtensionMapping(id: id, uri: uri)
        case .recvonly: return HeaderExtensionMapping(id: id, direction: .sendonly, uri: uri)
        case .sendonly, .inactive: return nil
        }
    }

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
