import Media
import SRTP
import SendEngine

/// `--size WIDTHxHEIGHT` with two positive numbers.
public struct FrameSize: ArgumentValue, Hashable {
    public var width: Int
    public var height: Int

    public static func parse(_ text: String) throws(InvalidValue) -> FrameSize {
        let dims = text.split(separator: "x").compactMap { Int($0) }
        guard dims.count == 2, dims[0] > 0, dims[1] > 0 else {
            throw InvalidValue("'\(text)' is not WIDTHxHEIGHT with positive numbers")
        }
        return FrameSize(width: dims[0], height: dims[1])
    }
}

/// `--video`: the test source, a .y4m file, or an X display's screen (`x11`: the one in
/// `$DISPLAY`; `x11:DISPLAY`: that one, whose name the capture checks).
public enum VideoSource: ArgumentValue, Equatable {
    case input(VideoInputKind)
    case x11(display: String?)

    public static func parse(_ text: String) throws(InvalidValue) -> VideoSource {
        if text == "x11" { return .x11(display: nil) }
        if text.hasPrefix("x11:") { return .x11(display: String(text.dropFirst(4))) }
        guard let kind = try? VideoInputKind(argument: text) else {
            throw InvalidValue("'\(text)' is not 'test', a .y4m file, 'x11' or 'x11:DISPLAY'")
        }
        return .input(kind)
    }
}

/// `--audio`: the computer's sound (`system`), the test tone, a .wav file, or none.
public enum AudioSource: ArgumentValue, Equatable {
    case system
    case input(AudioInputKind)

    public static func parse(_ text: String) throws(InvalidValue) -> AudioSource {
        if text == "system" { return .system }
        guard let kind = try? AudioInputKind(argument: text) else {
            throw InvalidValue("'\(text)' is not 'system', 'test', 'none' or a .wav file")
        }
        return .input(kind)
    }
}

/// `--cursor on|off`: whether the X capture draws the pointer into the picture.
public enum CursorMode: String, ArgumentValue, Hashable {
    case on
    case off

    public static func parse(_ text: String) throws(InvalidValue) -> CursorMode {
        guard let mode = CursorMode(rawValue: text) else { throw InvalidValue("'\(text)' is not on or off") }
        return mode
    }
}

/// `--nack same-ssrc|rtx|off`: how NACKed packets are resent.
extension DestinationOptions.Retransmission: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> DestinationOptions.Retransmission {
        switch text {
        case "same-ssrc": return .sameSSRC
        case "rtx": return .rtx
        case "off": return .off
        default: throw InvalidValue("'\(text)' is not same-ssrc, rtx or off")
        }
    }
}

/// `--srtp-suite`, by its SDP name (`AES_CM_128_HMAC_SHA1_80`).
extension SRTPSuite: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> SRTPSuite {
        guard let suite = SRTPSuite(sdpName: text) else {
            throw InvalidValue("'\(text)' is not one of \(SRTPSuite.allCases.map(\.sdpName).joined(separator: ", "))")
        }
        return suite
    }
}
