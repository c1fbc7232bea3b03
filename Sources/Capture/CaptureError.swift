/// An error from the X11 capture: a code a caller can switch on and a message naming the display,
/// the target or the request, fit to show a user as it is.
///
/// A struct with an extensible code (as `MediaError`), so new codes do not break callers' switches.
public struct CaptureError: Error, Hashable, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No display was given and `DISPLAY` is unset or empty.
        public static let noDisplay = Code("no-display")
        /// `xcb_connect` failed: no server there, not allowed, or a malformed display name.
        public static let displayRefused = Code("display-refused")
        /// The X server went away while capturing.
        public static let displayGone = Code("display-gone")
        /// The captured window was destroyed.
        public static let windowGone = Code("window-gone")
        /// A region outside the screen, an unknown monitor or window, a malformed target string.
        public static let badTarget = Code("bad-target")
        /// The root visual is not 24/32-bit depth in 32 bits per pixel, least significant byte first.
        public static let unsupportedFormat = Code("unsupported-format")
        /// An X extension the request needs is missing (only where the capture cannot do without it).
        public static let extensionMissing = Code("extension-missing")
        /// Any other X protocol error; the message names the request.
        public static let x11 = Code("x11")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
