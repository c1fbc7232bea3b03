/// RFC 8851 §10 `rid-dir`: whether the author of the description sends or receives the stream.
public enum SDPRIDDirection: String, Sendable, Hashable, CaseIterable {
    case send
    case receive = "recv"
}

/// One RFC 8851 §4 restriction of an `a=rid` line: `max-width=1280`, `pt=96,97`, or a name
/// alone (`max-width` without a value is allowed by §10's ABNF).
public struct SDPRIDRestriction: Sendable, Hashable {
    public var name: String
    public var value: String?

    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }
}

/// RFC 8851 §10 `a=rid:<rid-id> <send|recv> [<restrictions>]`: one RTP stream of an m-section,
/// named by its rid, and the restrictions it keeps to. Rid-based simulcast (RFC 8853) lists one
/// per layer and names them again in `a=simulcast`; the packets carry the rid in the RFC 8852
/// header extension, which is how a receiver learns which SSRC is which layer.
public struct SDPRID: Sendable, Hashable {
    /// `rid-id = 1*(alpha-numeric / "-" / "_")`.
    public var id: String
    public var direction: SDPRIDDirection
    /// In line order. A `pt` restriction, when present, is the first (§10 `rid-pt-param-list`);
    /// each name appears once.
    public var restrictions: [SDPRIDRestriction]

    /// The longest rid-id read: RFC 8851 sets none, but the rid travels as an RTCP SDES item
    /// (RFC 8852 §3.1), whose 8-bit length caps it at 255 bytes.
    public static let maximumIDLength = 255
    /// Restrictions on one line: RFC 8851 §4 defines nine; the rest is room for extensions.
    public static let maximumRestrictions = 16
    /// `a=rid` lines in one m-section: a stream per line, far more than any simulcast sends.
    public static let maximumPerSection = 32

    public init(id: String, direction: SDPRIDDirection, restrictions: [SDPRIDRestriction] = []) {
        self.id = id
        self.direction = direction
        self.restrictions = restrictions
    }

    /// The restriction called `name`, if the line has it.
    public func restriction(_ name: String) -> SDPRIDRestriction? {
        restrictions.first { $0.name == name }
    }

    /// RFC 8851 §4 `pt=`: the payload types the stream may use; nil when unrestricted.
    public var payloadTypes: [UInt8]? {
        guard let list = restriction("pt")?.value else { return nil }
        return SDPSyntax.split(Substring(list), on: ",").compactMap { SDPSyntax.decimal($0, as: UInt8.self) }
    }

    /// The value after `a=rid:`.
    var attributeValue: String {
        var text = "\(id) \(direction.rawValue)"
        if !restrictions.isEmpty {
            text +=
                " "
                + restrictions.map { item in item.value.map { "\(item.name)=\($0)" } ?? item.name }
                .joined(separator: ";")
        }
        return text
    }
}

/// RFC 8853 §5.1 `a=simulcast:<send|recv> <streams>[ <recv|send> <streams>]`: which of the
/// section's `a=rid` streams are simulcast, per direction. Each direction lists its simulcast
/// streams separated by `;`, each stream its alternative rids separated by `,` (the receiver
/// gets one of them), a `~` before a rid marks it paused.
///
/// Written send part first, whatever order the text it came from had.
public struct SDPSimulcast: Sendable, Hashable {
    /// RFC 8853 §5.1 `sc-id = [sc-id-paused] rid-id`.
    public struct Alternative: Sendable, Hashable {
        public var rid: String
        /// `~`: the stream is agreed but not sent for now.
        public var isPaused: Bool

        public init(rid: String, isPaused: Bool = false) {
            self.rid = rid
            self.isPaused = isPaused
        }
    }

    /// RFC 8853 §5.1 `sc-alt-list`: one simulcast stream, as one or more alternative rids.
    public struct Stream: Sendable, Hashable {
        public var alternatives: [Alternative]

        public init(alternatives: [Alternative]) { self.alternatives = alternatives }

        /// A stream of one rid, the form rid-based simulcast senders write.
        public init(rid: String, isPaused: Bool = false) {
            alternatives = [Alternative(rid: rid, isPaused: isPaused)]
        }
    }

    /// Streams the author sends (`send`), in order; empty when the line has no send part.
    public var send: [Stream]
    /// Streams the author receives (`recv`), in order; empty when the line has no recv part.
    public var receive: [Stream]

    /// Rids on one line, both directions: a bound for input; senders use two to four layers.
    public static let maximumIdentifiers = 32

    public init(send: [Stream] = [], receive: [Stream] = []) {
        self.send = send
        self.receive = receive
    }

    /// The rids of `streams`, every alternative, in order.
    public static func rids(of streams: [Stream]) -> [String] {
        streams.flatMap { $0.alternatives.map(\.rid) }
    }

    /// The value after `a=simulcast:`.
    var attributeValue: String {
        var parts: [String] = []
        if !send.isEmpty { parts.append("send " + Self.list(send)) }
        if !receive.isEmpty { parts.append("recv " + Self.list(receive)) }
        return parts.joined(separator: " ")
    }

    private static func list(_ streams: [Stream]) -> String {
        streams.map { stream in
            stream.alternatives.map { ($0.isPaused ? "~" : "") + $0.rid }.joined(separator: ",")
        }.joined(separator: ";")
    }
}

extension SDPRID {
    /// Whether `text` is an RFC 8851 §10 `rid-id` this parser reads: 1 to `maximumIDLength`
    /// letters, digits, `-` and `_`.
    public static func isValidID(_ text: String) -> Bool {
        SDPAttributeParser.isRIDID(Substring(text))
    }
}
