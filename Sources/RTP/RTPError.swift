/// An error from the RTP module: a code a caller can switch on, and a message that names the
/// field and the byte offset that were wrong, fit to show a user as it is.
///
/// Modelled on SwiftNIO's errors: a struct with an extensible code rather than an enum, so new
/// codes do not break callers' exhaustive switches.
public struct RTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The input ended before a field it announces (header, CSRC list, extension, chunk).
        public static let truncated = Code("truncated")
        /// The version field is not 2 (RFC 3550 §5.1, §6.4.1).
        public static let unsupportedVersion = Code("unsupported-version")
        /// The padding count is zero or larger than what it pads.
        public static let invalidPadding = Code("invalid-padding")
        /// A header extension is malformed (RFC 3550 §5.3.1, RFC 8285).
        public static let invalidExtension = Code("invalid-extension")
        /// A length or count field disagrees with the bytes around it.
        public static let invalidLength = Code("invalid-length")
        /// A field holds a value outside its range (payload type, CSRC count, item type).
        public static let invalidField = Code("invalid-field")
        /// The input is larger than any packet this module accepts.
        public static let tooLarge = Code("too-large")
        /// A caller-owned buffer cannot hold what must be written into it.
        public static let bufferTooSmall = Code("buffer-too-small")
        /// A payload does not fit the packet budget and the format cannot fragment it.
        public static let payloadTooLarge = Code("payload-too-large")
        /// A configuration value (MTU, trailer room, sample count, clock rate) is out of range.
        public static let invalidConfiguration = Code("invalid-configuration")
        /// An RTP payload that is not a valid H.264 packet for packetization-mode=1 (RFC 6184).
        public static let invalidH264Payload = Code("invalid-h264-payload")
        /// An RTP payload that is not a valid VP8 packet (RFC 7741), or a VP8 frame that cannot
        /// be sent (empty).
        public static let invalidVP8Payload = Code("invalid-vp8-payload")
        /// An RTP payload that is not a valid VP9 packet (RFC 9628), or a VP9 frame that cannot
        /// be sent (empty, or a key frame whose size does not fit the scalability structure).
        public static let invalidVP9Payload = Code("invalid-vp9-payload")
        /// The packet is not RTCP (packet type outside 192–223, RFC 5761 §4).
        public static let notRTCP = Code("not-rtcp")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
