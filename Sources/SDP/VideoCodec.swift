/// A video encoding we can send, by its `a=rtpmap` name (all three at 90 kHz): H.264 (RFC 6184),
/// VP8 (RFC 7741) and VP9 (RFC 9628). Lives here because the offer/answer, the send engine's SDP
/// files and the encoders all name it, and SDP is the one module below all of them.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case h264
    case vp8
    case vp9

    /// The `a=rtpmap` encoding name, as browsers write it.
    public var encodingName: String {
        switch self {
        case .h264: "H264"
        case .vp8: "VP8"
        case .vp9: "VP9"
        }
    }

    public var description: String { encodingName }

    /// Whether `format` is this codec at 90 kHz (names compare case-insensitively, RFC 4855 §3).
    public func matches(_ format: SDPRTPFormat) -> Bool {
        guard let map = format.rtpmap, map.clockRate == 90_000 else { return false }
        return map.encodingName.lowercased() == rawValue
    }

    /// `h264,vp8,vp9` as a command line writes it: distinct known names, at least one.
    public static func list(_ text: String) -> Result<[VideoCodec], VideoCodecListError> {
        var codecs: [VideoCodec] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingSpaces.lowercased()
            guard let codec = VideoCodec(rawValue: name) else {
                return .failure(
                    VideoCodecListError(reason: "unknown video codec \"\(name.prefix(16))\" (h264, vp8, vp9)")
                )
            }
            guard !codecs.contains(codec) else {
                return .failure(VideoCodecListError(reason: "\(codec) is listed twice"))
            }
            codecs.append(codec)
        }
        return .success(codecs)
    }
}

/// Why a codec list was refused.
public struct VideoCodecListError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
