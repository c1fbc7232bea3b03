/// An RFC 8866 session description: the session part and its media sections, as values.
///
/// `SDPWriter.write` turns one into text and `SDPParser.parse` reads text back into one;
/// `parse(write(x)) == x` for every `x` the writer accepts. Lines this model does not keep
/// (`i=`, `u=`, `e=`, `p=`, `b=`, `r=`, `z=`, `k=`) are skipped by the parser.
///
/// A description that carries `a=crypto` contains SRTP master keys in clear text: never log the
/// written SDP. The typed crypto values themselves print redacted.
public struct SessionDescription: Sendable, Equatable {
    public var origin: SDPOrigin
    /// `s=`; RFC 8866 §5.3 suggests `-` when there is no meaningful name.
    public var sessionName: String
    /// Session-level `c=`, the default for media sections without their own.
    public var connection: SDPAddress?
    public var timing: SDPTiming
    /// Session-level direction attribute, the default for media sections without their own.
    public var direction: SDPDirection?
    /// Other session-level attributes, in order (for example `a=group:BUNDLE`).
    public var attributes: [SDPAttribute]
    public var media: [MediaDescription]

    public init(
        origin: SDPOrigin,
        sessionName: String = "-",
        connection: SDPAddress? = nil,
        timing: SDPTiming = .permanent,
        direction: SDPDirection? = nil,
        attributes: [SDPAttribute] = [],
        media: [MediaDescription] = []
    ) {
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.timing = timing
        self.direction = direction
        self.attributes = attributes
        self.media = media
    }
}

/// RFC 8866 §6.7 media direction attributes.
///
/// Our offer says `sendonly`. In a file handed to a player (a declarative description, not an
/// offer) `recvonly` tells the tool to start in receive-only mode (§6.7.1); ffmpeg 5.1 ignores all
/// four, so either is safe there.
public enum SDPDirection: String, Sendable, Hashable, CaseIterable {
    case sendrecv
    case sendonly
    case recvonly
    case inactive
}

/// A generic attribute `a=name` or `a=name:value`, for everything without a typed field
/// (`a=group`, `a=extmap`, `a=msid`, …).
public struct SDPAttribute: Sendable, Hashable {
    public var name: String
    /// nil for a property attribute (`a=name`); may be empty (`a=name:`).
    public var value: String?

    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }
}
