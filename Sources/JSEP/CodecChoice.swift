import SDP

/// Which offered payload type we send on. An answer for a sendonly stream lists the one format
/// we will use (JSEP allows a subset, RFC 8829 §5.3.1), under the offer's payload type number:
/// browsers pick dynamic numbers per build, so none is assumed.
enum CodecChoice {
    /// A chosen H.264 format: the offered payload type and what to answer in its `a=fmtp`.
    struct H264: Equatable {
        var payloadType: UInt8
        var offered: H264ProfileLevelID
        var answered: H264ProfileLevelID
        var levelAsymmetryAllowed: Bool

        /// RFC 6184 §8.1 parameters of the answer: level-asymmetry-allowed only when offered,
        /// packetization-mode=1, and the offered profile at our level.
        var formatParameters: [SDPFormatParameter] {
            var list: [SDPFormatParameter] = []
            if levelAsymmetryAllowed { list.append(SDPFormatParameter(name: "level-asymmetry-allowed", value: "1")) }
            list.append(SDPFormatParameter(name: "packetization-mode", value: "1"))
            list.append(SDPFormatParameter(name: "profile-level-id", value: answered.description))
            return list
        }
    }

    /// The format a viewer gets: H.264 with its profile, or VP8 or VP9 under the offered payload
    /// type.
    enum Video: Equatable {
        case h264(H264)
        case vp8(payloadType: UInt8)
        case vp9(payloadType: UInt8)

        var codec: VideoCodec {
            switch self {
            case .h264: .h264
            case .vp8: .vp8
            case .vp9: .vp9
            }
        }

        var payloadType: UInt8 {
            switch self {
            case .h264(let choice): choice.payloadType
            case .vp8(let payloadType), .vp9(let payloadType): payloadType
            }
        }

        /// The answer's format line: the offered payload type, our rtpmap, our `a=fmtp`.
        var format: SDPRTPFormat {
            switch self {
            case .h264(let choice):
                SDPRTPFormat(
                    payloadType: choice.payloadType,
                    rtpmap: SDPRTPMap(encodingName: "H264", clockRate: 90_000),
                    parameters: choice.formatParameters
                )
            case .vp8(let payloadType):
                SDPRTPFormat(payloadType: payloadType, rtpmap: SDPRTPMap(encodingName: "VP8", clockRate: 90_000))
            case .vp9(let payloadType):
                // RFC 9628 §6: profile 0 (8-bit 4:2:0), the one our encoder makes.
                SDPRTPFormat(
                    payloadType: payloadType,
                    rtpmap: SDPRTPMap(encodingName: "VP9", clockRate: 90_000),
                    parameters: [SDPFormatParameter(name: "profile-id", value: "0")]
                )
            }
        }
    }

    /// The first of `codecs` (our preference, `--codecs`) that the section offers in a form we
    /// send: H.264 as `h264(in:sending:)` accepts it, VP8, or VP9 profile 0 (a missing
    /// `profile-id` means 0, RFC 9628 §6). Among formats of one codec the offer's order decides.
    /// Refused: why H.264 did not fit when H.264 is all we send; else every codec we send and
    /// every one it offers.
    static func video(
        in section: WebRTCOffer.MediaSection,
        preferring codecs: [VideoCodec],
        sending stream: H264ProfileLevelID
    ) -> Result<Video, WebRTCAnswer.Refusal> {
        var h264Refusal: WebRTCAnswer.Refusal?
        for codec in codecs {
            switch codec {
            case .h264:
                switch h264(in: section, sending: stream) {
                case .success(let choice): return .success(.h264(choice))
                case .failure(let refusal): h264Refusal = refusal
                }
            case .vp8:
                if let format = section.media.formats.first(where: { VideoCodec.vp8.matches($0) }) {
                    return .success(.vp8(payloadType: format.payloadType))
                }
            case .vp9:
                if let format = section.media.formats.first(where: {
                    VideoCodec.vp9.matches($0) && ($0.parameter("profile-id") ?? "0") == "0"
                }) {
                    return .success(.vp9(payloadType: format.payloadType))
                }
            }
        }
        if codecs == [.h264], let h264Refusal { return .failure(h264Refusal) }
        let ours = codecs.map(\.encodingName).joined(separator: ", ")
        let profileNote =
            h264Refusal?.code == .h264ProfileMismatch ? "; H.264 is offered, but \(h264Refusal?.reason ?? "")" : ""
        return .failure(
            WebRTCAnswer.Refusal(
                code: .noCommonVideoCodec,
                reason: "the offer has no video codec we send (we send \(ours); its \(section.label) offers "
                    + "\(offeredCodecs(section.media)))\(profileNote)"
            )
        )
    }

    /// The first H.264 format, in the offer's order (the offerer's preference, RFC 3264 §5.1),
    /// with packetization-mode=1 (RFC 6184 §6.3: STAP-A and FU-A, which our payloader sends) and
    /// a profile-level-id that accepts `stream` (`H264ProfileLevelID.accepts`). A missing
    /// profile-level-id means Baseline level 1 (RFC 6184 §8.1), which a level 3.1 stream exceeds.
    static func h264(
        in section: WebRTCOffer.MediaSection,
        sending stream: H264ProfileLevelID
    ) -> Result<H264, WebRTCAnswer.Refusal> {
        var packetizationModeOne: [String] = []
        for format in section.media.formats where isH264(format) && format.parameter("packetization-mode") == "1" {
            let text = format.parameter("profile-level-id")
            let parsed: H264ProfileLevelID? = text.map { H264ProfileLevelID($0) } ?? H264ProfileLevelID.rfc6184Default
            guard let offered = parsed else {
                packetizationModeOne.append(Excerpt.of(text ?? "", limit: 12))
                continue
            }
            if offered.accepts(stream) {
                return .success(
                    H264(
                        payloadType: format.payloadType,
                        offered: offered,
                        answered: offered.answer(sending: stream),
                        levelAsymmetryAllowed: format.parameter("level-asymmetry-allowed") == "1"
                    )
                )
            }
            packetizationModeOne.append(offered.description)
        }
        guard packetizationModeOne.isEmpty else {
            return .failure(
                WebRTCAnswer.Refusal(
                    code: .h264ProfileMismatch,
                    reason:
                        "no H.264 profile-level-id the offer's \(section.label) lists (\(summary(packetizationModeOne))) "
                        + "accepts our \(stream) stream"
                )
            )
        }
        return .failure(
            WebRTCAnswer.Refusal(
                code: .noH264,
                reason: "the offer has no H.264 with packetization-mode=1 (its \(section.label) offers "
                    + "\(offeredCodecs(section.media)))"
            )
        )
    }

    /// The first `opus/48000/2` (RFC 7587 §7: always this rtpmap, whatever the channels sent).
    static func opus(in section: WebRTCOffer.MediaSection) -> Result<UInt8, WebRTCAnswer.Refusal> {
        for format in section.media.formats {
            guard let map = format.rtpmap, map.encodingName.lowercased() == "opus", map.clockRate == 48_000,
                map.channels == 2
            else { continue }
            return .success(format.payloadType)
        }
        return .failure(
            WebRTCAnswer.Refusal(
                code: .noOpus,
                reason: "the offer has no Opus 48000/2 (its \(section.label) offers \(offeredCodecs(section.media)))"
            )
        )
    }

    static func isH264(_ format: SDPRTPFormat) -> Bool {
        guard let map = format.rtpmap else { return false }
        return map.encodingName.lowercased() == "h264" && map.clockRate == 90_000
    }

    /// The distinct encodings of a section for a message, repair formats left out: `VP8, VP9, H264`.
    private static func offeredCodecs(_ media: MediaDescription) -> String {
        var names: [String] = []
        for format in media.formats {
            let name =
                format.rtpmap.map { map in
                    "\(map.encodingName)/\(map.clockRate)" + (map.channels.map { "/\($0)" } ?? "")
                } ?? "payload type \(format.payloadType)"
            let encoding = format.rtpmap?.encodingName.lowercased() ?? ""
            guard !["rtx", "red", "ulpfec", "flexfec-03", "cn", "telephone-event"].contains(encoding) else { continue }
            let short = Excerpt.of(name, limit: 24)
            if !names.contains(short) { names.append(short) }
        }
        return names.isEmpty ? "nothing else" : summary(names)
    }

    /// At most six items, then a count of the rest.
    private static func summary(_ items: [String]) -> String {
        let shown = items.prefix(6).joined(separator: ", ")
        return items.count > 6 ? shown + " and \(items.count - 6) more" : shown
    }
}

extension WebRTCOffer.MediaSection {
    /// `video m-section (mid 1)`, or `(line 12)` when it has no mid.
    var label: String {
        let name = Excerpt.of(kind.rawValue, limit: 16)
        return mid.map { "\(name) m-section (mid \(Excerpt.of($0, limit: 16)))" } ?? "\(name) m-section (line \(line))"
    }
}

extension WebRTCOffer {
    /// The codec a viewer with this offer gets: the first of `codecs` that its first video
    /// section offers in a form we send (as the answer decides it), or nil when none. A
    /// publisher that sends each codec on its own stream asks this first, then answers with
    /// that codec's stream.
    public func videoCodec(preferring codecs: [VideoCodec], sending stream: H264ProfileLevelID) -> VideoCodec? {
        for section in sections where section.kind == .video {
            if case .success(let choice) = CodecChoice.video(in: section, preferring: codecs, sending: stream) {
                return choice.codec
            }
        }
        return nil
    }
}
