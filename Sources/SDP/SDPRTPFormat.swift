/// One RTP payload format of a media section: the payload type on the `m=` line with its
/// `a=rtpmap` (RFC 8866 §6.6) and `a=fmtp` (§6.15) lines.
public struct SDPRTPFormat: Sendable, Hashable {
    /// 0...127 (RFC 3550 §5.1 gives the field seven bits).
    public var payloadType: UInt8
    /// nil for static payload types written without `a=rtpmap`.
    public var rtpmap: SDPRTPMap?
    /// The `a=fmtp` parameters in order; empty writes no `a=fmtp` line.
    public var parameters: [SDPFormatParameter]

    public init(payloadType: UInt8, rtpmap: SDPRTPMap?, parameters: [SDPFormatParameter] = []) {
        self.payloadType = payloadType
        self.rtpmap = rtpmap
        self.parameters = parameters
    }

    /// The value of the first parameter with this name (names compare case-insensitively, RFC 6184
    /// §8.1 and RFC 7587 §6.1 define them so); nil when absent or value-less.
    public func parameter(_ name: String) -> String? {
        let wanted = name.lowercased()
        return parameters.first { $0.name.lowercased() == wanted }?.value
    }

    /// RFC 6184 H.264 at 90 kHz with `packetization-mode`, `profile-level-id` and
    /// `sprop-parameter-sets` from the stream's own SPS and PPS.
    public static func h264(payloadType: UInt8 = 96, parameters: H264FormatParameters) -> SDPRTPFormat {
        SDPRTPFormat(
            payloadType: payloadType,
            rtpmap: SDPRTPMap(encodingName: "H264", clockRate: 90_000),
            parameters: parameters.formatParameters
        )
    }

    /// RFC 7587 Opus: always `opus/48000/2` in the rtpmap, whatever the coded channel count (§7).
    public static func opus(payloadType: UInt8 = 97, parameters: OpusFormatParameters) -> SDPRTPFormat {
        SDPRTPFormat(
            payloadType: payloadType,
            rtpmap: SDPRTPMap(encodingName: "opus", clockRate: 48_000, channels: 2),
            parameters: parameters.formatParameters
        )
    }
}

/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<channels>]`.
public struct SDPRTPMap: Sendable, Hashable {
    public var encodingName: String
    public var clockRate: UInt32
    /// The audio channel count (RFC 8866 §6.6 `encoding parameters`); nil when not written.
    public var channels: UInt8?

    public init(encodingName: String, clockRate: UInt32, channels: UInt8? = nil) {
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }
}

/// One `name=value` (or bare `name`) item of an `a=fmtp` line's `;`-separated list.
public struct SDPFormatParameter: Sendable, Hashable {
    public var name: String
    /// nil for an item without `=` (for example telephone-event's `0-16`).
    public var value: String?

    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}
