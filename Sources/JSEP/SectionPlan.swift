import SDP

/// Which m-section carries which medium, and why the others are rejected.
struct SectionPlan {
    enum Decision {
        case video(CodecChoice.Video)
        case audio(payloadType: UInt8)
        /// An audio section when we send no audio: answered in the bundle with `a=inactive`
        /// (RFC 8829 §5.3.1 allows either) rather than rejected, since some peers (aiortc)
        /// refuse an answer that rejects a section of their bundle.
        case inactive(payloadType: UInt8)
        case rejected
    }

    var decisions: [Decision] = []
    var video: WebRTCAnswer.Video?
    var audio: WebRTCAnswer.Audio?
    var rejected: [WebRTCAnswer.RejectedSection] = []
    /// The `a=extmap` lines we answer in the video and the audio section.
    var videoExtensions: [HeaderExtensionMapping] = []
    var audioExtensions: [HeaderExtensionMapping] = []

    /// The first audio section was answered `inactive` (we send no audio).
    private var hasInactiveAudio = false

    init(offer: WebRTCOffer, bundle: MediaGroup, configuration: WebRTCAnswer.Configuration) throws {
        var videoRefusal: WebRTCAnswer.Refusal?
        var audioRefusal: WebRTCAnswer.Refusal?
        for section in offer.sections {
            if section.kind == .video, let ours = configuration.video, video == nil {
                switch Self.video(section, bundle: bundle, ours: ours) {
                case .success(let (choice, negotiated)):
                    decisions.append(.video(choice))
                    video = negotiated
                    continue
                case .failure(let refusal):
                    videoRefusal = videoRefusal ?? refusal
                    reject(section, refusal.reason)
                }
            } else if section.kind == .audio, let ours = configuration.audio, audio == nil {
                switch Self.audio(section, bundle: bundle, ours: ours) {
                case .success(let negotiated):
                    decisions.append(.audio(payloadType: negotiated.payloadType))
                    audio = negotiated
                    continue
                case .failure(let refusal):
                    audioRefusal = audioRefusal ?? refusal
                    reject(section, refusal.reason)
                }
            } else if section.kind == .audio, configuration.audio == nil, !hasInactiveAudio,
                let payloadType = Self.inactiveAudio(section, bundle: bundle)
            {
                decisions.append(.inactive(payloadType: payloadType))
                hasInactiveAudio = true
            } else {
                reject(section, Self.unused(section, configuration: configuration))
            }
        }
        if configuration.video != nil, video == nil {
            throw videoRefusal.map { JSEPError(code: $0.code, reason: $0.reason) }
                ?? JSEPError(code: .noVideo, reason: "the offer has no video m-section")
        }
        if configuration.audio != nil, audio == nil {
            throw audioRefusal.map { JSEPError(code: $0.code, reason: $0.reason) }
                ?? JSEPError(code: .noAudio, reason: "the offer has no audio m-section")
        }
        agreeHeaderExtensions(ours: configuration.headerExtensions)
    }

    /// Which offered `a=extmap` lines we answer (`HeaderExtensionMapping.answerAsSender`), per
    /// accepted section, for the URIs our sender stamps; each URI once, in the offer's order.
    ///
    /// RFC 8843 §12: in a bundle an id names the same extension in every section. The video
    /// section is settled first; an audio mapping whose URI the video section maps to another
    /// id, or whose id it maps to another URI, is not answered (the offer is inconsistent, and
    /// one RTP session cannot honour both). `transport-cc` feedback stays only where the
    /// transport-wide sequence number is agreed: without the extension it reports nothing.
    private mutating func agreeHeaderExtensions(ours: Set<String>) {
        if var video {
            videoExtensions = Self.answerable(video.offeredHeaderExtensions, ours: ours)
            video.transportWideSequenceNumberID = Self.transportWideID(videoExtensions)
            if video.transportWideSequenceNumberID == nil { video.feedback.remove(.transportWideCongestionControl) }
            self.video = video
        }
        if var audio {
            let bundled = video?.offeredHeaderExtensions ?? []
            audioExtensions = Self.answerable(audio.offeredHeaderExtensions, ours: ours).filter { mapping in
                bundled.allSatisfy { ($0.uri == mapping.uri) == ($0.id == mapping.id) }
            }
            audio.transportWideSequenceNumberID = Self.transportWideID(audioExtensions)
            if audio.transportWideSequenceNumberID == nil { audio.feedback.remove(.transportWideCongestionControl) }
            self.audio = audio
        }
    }

    private static func answerable(_ offered: [HeaderExtensionMapping], ours: Set<String>) -> [HeaderExtensionMapping] {
        var answered: [HeaderExtensionMapping] = []
        for mapping in offered where ours.contains(mapping.uri) {
            guard !answered.contains(where: { $0.uri == mapping.uri }), let answer = mapping.answerAsSender else {
                continue
            }
            answered.append(answer)
        }
        return answered
    }

    private static func transportWideID(_ answered: [HeaderExtensionMapping]) -> UInt8? {
        answered.first { $0.uri == HeaderExtensionMapping.transportWideCC }.map { UInt8($0.id) }
    }

    private mutating func reject(_ section: WebRTCOffer.MediaSection, _ reason: String) {
        decisions.append(.rejected)
        rejected.append(
            WebRTCAnswer.RejectedSection(index: section.index, mid: section.mid, kind: section.kind, reason: reason)
        )
    }

    private static func unused(
        _ section: WebRTCOffer.MediaSection,
        configuration: WebRTCAnswer.Configuration
    ) -> String {
        switch section.kind {
        case .video where configuration.video != nil: "we send one video stream, already in an earlier m-section"
        case .audio where configuration.audio != nil: "we send one audio stream, already in an earlier m-section"
        case .video, .audio: "we send no \(section.kind.rawValue)"
        case .application: "we open no data channel"
        default: "we send no \(Excerpt.of(section.kind.rawValue, limit: 16))"
        }
    }

    private static func video(
        _ section: WebRTCOffer.MediaSection,
        bundle: MediaGroup,
        ours: WebRTCAnswer.Configuration.Video
    ) -> Result<(CodecChoice.Video, WebRTCAnswer.Video), WebRTCAnswer.Refusal> {
        if let refusal = transportRefusal(section, bundle: bundle, missing: .noVideo) { return .failure(refusal) }
        let choice: CodecChoice.Video
        switch CodecChoice.video(in: section, preferring: ours.codecs, sending: ours.profileLevelID) {
        case .success(let chosen): choice = chosen
        case .failure(let refusal): return .failure(refusal)
        }
        if let refusal = muxRefusal(section) { return .failure(refusal) }
        let rtx = ours.retransmissionSSRC == nil ? nil : section.retransmissionPayloadType(for: choice.payloadType)
        return .success(
            (
                choice,
                WebRTCAnswer.Video(
                    mid: section.mid ?? "",
                    codec: choice.codec,
                    payloadType: choice.payloadType,
                    retransmissionPayloadType: rtx,
                    offeredProfileLevelID: { if case .h264(let h264) = choice { h264.offered } else { nil } }(),
                    answeredProfileLevelID: { if case .h264(let h264) = choice { h264.answered } else { nil } }(),
                    feedback: Set(
                        RTCPFeedbackKind.answer(
                            offeredIn: section.media,
                            payloadType: choice.payloadType,
                            supported: ours.feedback
                        )
                    ),
                    rtcpReducedSize: section.rtcpReducedSize,
                    ssrc: ours.ssrc,
                    retransmissionSSRC: rtx == nil ? nil : ours.retransmissionSSRC,
                    offeredHeaderExtensions: section.headerExtensions
                )
            )
        )
    }

    private static func audio(
        _ section: WebRTCOffer.MediaSection,
        bundle: MediaGroup,
        ours: WebRTCAnswer.Configuration.Audio
    ) -> Result<WebRTCAnswer.Audio, WebRTCAnswer.Refusal> {
        if let refusal = transportRefusal(section, bundle: bundle, missing: .noAudio) { return .failure(refusal) }
        let payloadType: UInt8
        switch CodecChoice.opus(in: section) {
        case .success(let chosen): payloadType = chosen
        case .failure(let refusal): return .failure(refusal)
        }
        if let refusal = muxRefusal(section) { return .failure(refusal) }
        return .success(
            WebRTCAnswer.Audio(
                mid: section.mid ?? "",
                payloadType: payloadType,
                feedback: Set(
                    RTCPFeedbackKind.answer(
                        offeredIn: section.media,
                        payloadType: payloadType,
                        supported: ours.feedback
                    )
                ),
                rtcpReducedSize: section.rtcpReducedSize,
                ssrc: ours.ssrc,
                offeredHeaderExtensions: section.headerExtensions
            )
        )
    }

    /// The Opus payload type of an audio section we can answer `inactive`: one that could carry
    /// our audio if we had any (bundled, Opus, rtcp-mux); nil when it must be rejected instead.
    private static func inactiveAudio(_ section: WebRTCOffer.MediaSection, bundle: MediaGroup) -> UInt8? {
        guard transportRefusal(section, bundle: bundle, missing: .noAudio) == nil, muxRefusal(section) == nil,
            case .success(let payloadType) = CodecChoice.opus(in: section)
        else { return nil }
        return payloadType
    }

    /// The profiles JSEP offers media with (RFC 8829 §5.1.2); both are DTLS-SRTP with feedback.
    static let mediaProtocols: Set<String> = ["UDP/TLS/RTP/SAVPF", "TCP/DTLS/RTP/SAVPF"]

    /// Whether the section can carry a stream of ours at all, codec aside.
    private static func transportRefusal(
        _ section: WebRTCOffer.MediaSection,
        bundle: MediaGroup,
        missing: JSEPError.Code
    ) -> WebRTCAnswer.Refusal? {
        if section.isDisabled {
            return WebRTCAnswer.Refusal(code: missing, reason: "the offer's \(section.label) is disabled (port 0)")
        }
        guard let mid = section.mid else {
            return WebRTCAnswer.Refusal(
                code: .notBundleable,
                reason: "the offer is not BUNDLE-able: its \(section.label) has no a=mid"
            )
        }
        guard bundle.mids.contains(mid) else {
            return WebRTCAnswer.Refusal(
                code: .notBundleable,
                reason: "the offer is not BUNDLE-able: its \(section.label) is not in a=group:BUNDLE"
            )
        }
        guard mediaProtocols.contains(section.media.transport.rawValue) else {
            return WebRTCAnswer.Refusal(
                code: .unsupportedTransport,
                reason:
                    "the offer's \(section.label) uses \(Excerpt.quoted(section.media.transport.rawValue, limit: 24)), "
                    + "not UDP/TLS/RTP/SAVPF (DTLS-SRTP)"
            )
        }
        guard section.direction == .recvonly || section.direction == .sendrecv else {
            return WebRTCAnswer.Refusal(
                code: missing,
                reason: "the offer's \(section.label) does not receive (a=\(section.direction.rawValue))"
            )
        }
        return nil
    }

    /// RFC 8858: with one ICE component per bundle, RTCP can only share the RTP flow.
    private static func muxRefusal(_ section: WebRTCOffer.MediaSection) -> WebRTCAnswer.Refusal? {
        guard section.media.rtcpMux else {
            return WebRTCAnswer.Refusal(
                code: .noRTCPMux,
                reason: "the offer's \(section.label) has no a=rtcp-mux; we send RTCP only muxed (RFC 8858)"
            )
        }
        return nil
    }
}
