/// What a publisher announces with `publish`: the stream's kind, its codecs, and its SDP.
public struct StreamDescription: Hashable, Sendable, Codable {
    public static let maxCodecs = 8
    public static let maxCodecBytes = 32

    public var kind: StreamKind
    /// Codec names as they appear in the SDP's rtpmap lines, e.g. `["H264", "opus"]`.
    public var codecs: [String]
    /// The publisher's session description; subscribers see it in `stream-published`.
    public var sdp: String

    public init(kind: StreamKind, codecs: [String], sdp: String) {
        self.kind = kind
        self.codecs = codecs
        self.sdp = sdp
    }

    enum CodingKeys: String, CodingKey {
        case kind, codecs, sdp
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = container.codingPath
        self.kind = try container.decode(StreamKind.self, forKey: .kind)
        let codecs = try FieldRules.list(
            try container.decode([String].self, forKey: .codecs),
            maxCount: Self.maxCodecs,
            allowEmpty: false,
            at: path + [CodingKeys.codecs]
        )
        for (index, codec) in codecs.enumerated() {
            _ = try FieldRules.text(
                codec,
                maxBytes: Self.maxCodecBytes,
                at: path + [CodingKeys.codecs, PathKey(intValue: index) ?? PathKey("\(index)")]
            )
        }
        self.codecs = codecs
        self.sdp = try FieldRules.sdp(try container.decode(String.self, forKey: .sdp), at: path + [CodingKeys.sdp])
    }
}

/// A stream as the room sees it: who publishes it and what they announced.
public struct PublishedStream: Hashable, Sendable, Codable {
    public var uid: MemberID
    /// The companion's owner when `uid` ends in `_sub` (see ``MemberID/owner``).
    public var owner: MemberID?
    public var kind: StreamKind
    public var codecs: [String]
    public var sdp: String
    /// `still` while the publisher says the picture does not move (`stream-state`); absent
    /// (nil) means moving, so lines stay as they were for streams that never went still.
    public var state: StreamState?

    public init(uid: MemberID, description: StreamDescription, state: StreamState? = nil) {
        self.uid = uid
        self.owner = uid.owner
        self.kind = description.kind
        self.codecs = description.codecs
        self.sdp = description.sdp
        self.state = state == .moving ? nil : state
    }

    /// The announcement without the publisher's identity, as it would be published again.
    public var description: StreamDescription {
        StreamDescription(kind: kind, codecs: codecs, sdp: sdp)
    }
}

/// A room member as others see it.
public struct Member: Hashable, Sendable, Codable {
    public var uid: MemberID
    public var role: Role
    /// The companion's owner when `uid` ends in `_sub` (see ``MemberID/owner``).
    public var owner: MemberID?

    public init(uid: MemberID, role: Role) {
        self.uid = uid
        self.role = role
        self.owner = uid.owner
    }
}
