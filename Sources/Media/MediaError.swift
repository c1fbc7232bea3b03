/// An error from the media half of the pipeline: a code a caller can switch on, and a message
/// that names what was wrong and where (file, field, plane), fit to show a user as it is.
///
/// Modelled on SwiftNIO's errors: a struct with an extensible code rather than an enum, so new
/// codes do not break callers' exhaustive switches.
public struct MediaError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Frame geometry is zero, odd where it must be even, or beyond the limits.
        public static let invalidDimensions = Code("invalid-dimensions")
        /// A plane is smaller than its stride and height imply, or a stride is below the width.
        public static let planeTooSmall = Code("plane-too-small")
        /// Sample rate, channel count or sample count that cannot be processed.
        public static let invalidAudio = Code("invalid-audio")
        /// A file's header is missing, malformed or names a format we do not read.
        public static let badHeader = Code("bad-header")
        /// A file ended in the middle of a frame or chunk.
        public static let truncated = Code("truncated")
        /// A file could not be opened or read.
        public static let io = Code("io")
        /// A C library refused a configuration or failed a call; the message carries its words.
        public static let library = Code("library")
        /// An encoder or converter setting is out of range.
        public static let invalidSetting = Code("invalid-setting")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
