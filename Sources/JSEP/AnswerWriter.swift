import SDP

/// Turns a `SectionPlan` into the answer's `SessionDescription` (RFC 8829 §5.3.1): one m-section
/// per offered one, in the offer's order with its mid; accepted ones bundled on one port with
/// identical transport attributes, rejected ones with port 0.
struct AnswerWriter {
    let offer: WebRTCOffer
    let plan: SectionPlan
    let bundleOrder: [String]
    let localSetup: ConnectionSetup
    let configuration: WebRTCAnswer.Configuration

    /// Accepted mids in the order of the offer's BUNDLE group; the first is our tagged section.
    var acceptedMids: [String] {
        let accepted = zip(offer.sections, plan.decisions).compactMap { section, decision -> String? in
            if case .rejected = decision { return nil }
            return section.mid
        }
        return bundleOrder.filter(accepted.contains)
    }

    func description() -> SessionDescription {
        let mids = acceptedMids
        var attributes = [SDPAttribute(name: "group", value: MediaGroup.bundle(mids).attributeValue)]
        if offer.msidSemantic != nil {
            attributes.append(SDPAttribute(name: "msid-semantic", value: "WMS \(configuration.streamID)"))
        }
        var media: [MediaDescription] = []
        for (section, decision) in zip(offer.sections, plan.decisions) {
            switch decision {
            case .video(let choice):
                media.append(video(section, choice, tagged: section.mid == mids.first))
            case .audio(let payloadType):
                media.append(audio(section, payloadType, tagged: section.mid == mids.first))
            case .inactive(let payloadType):
                media.append(inactive(section, payloadType, tagged: section.mid == mids.first))
            case .rejected:
                media.append(rejected(section))
            }
        }
        return SessionDescription(
            origin: configuration.origin ?? .random(),
            sessionName: "-",
            timing: .permanent,
            attributes: attributes,
            media: media
        )
    }

    // MARK: Sections

    private func video(
        _ section: WebRTCOffer.MediaSection,
        _ choice: CodecChoice.Video,
        tagged: Bool
    ) -> MediaDescription {
        guard let ours = configuration.video, let negotiated = plan.video else { return rejected(section) }
        var formats = [choice.format]
        var ssrcs = [negotiated.ssrc]
        var groups: [SDPSSRCGroup] = []
        if let rtxPayloadType = negotiated.retransmissionPayloadType, let rtxSSRC = negotiated.retransmissionSSRC {
            formats.append(.retransmission(payloadType: rtxPayloadType, associatedPayloadType: choice.payloadType))
            ssrcs.append(rtxSSRC)
            groups.append(.flowIdentification(original: negotiated.ssrc, retransmission: rtxSSRC))
        }
        var media = accepted(
            section,
            formats: formats,
            trackID: ours.trackID,
            ssrcs: ssrcs,
            extensions: plan.videoExtensions,
            tagged: tagged
        )
        media.ssrcGroups = groups
        media.rtcpFeedback = RTCPFeedbackKind.answer(
            offeredIn: section.media,
            payloadType: choice.payloadType,
            supported: negotiated.feedback
        ).map { $0.line(payloadType: choice.payloadType) }
        return media
    }

    private func audio(_ section: WebRTCOffer.MediaSection, _ payloadType: UInt8, tagged: Bool) -> MediaDescription {
        guard let ours = configuration.audio, let negotiated = plan.audio else { return rejected(section) }
        var media = accepted(
            section,
            formats: [.opus(payloadType: payloadType, parameters: ours.parameters)],
            trackID: ours.trackID,
            ssrcs: [ours.ssrc],
            extensions: plan.audioExtensions,
            tagged: tagged
        )
        media.rtcpFeedback = RTCPFeedbackKind.answer(
            offeredIn: section.media,
            payloadType: payloadType,
            supported: negotiated.feedback
        ).map { $0.line(payloadType: payloadType) }
        return media
    }

    /// An audio section we send nothing in: bundled like the others, the offered Opus format,
    /// `a=inactive`, no SSRC, msid, extensions or feedback.
    private func inactive(_ section: WebRTCOffer.MediaSection, _ payloadType: UInt8, tagged: Bool) -> MediaDescription {
        let offered = section.media.formats.first { $0.payloadType == payloadType }
        var media = accepted(
            section,
            formats: [SDPRTPFormat(payloadType: payloadType, rtpmap: offered?.rtpmap)],
            trackID: nil,
            ssrcs: [],
            extensions: [],
            tagged: tagged
        )
        media.direction = .inactive
        return media
    }

    /// What every accepted section carries: the bundle's port and address, sendonly, rtcp-mux,
    /// our ICE credentials, fingerprint and setup (identical in each bundled section, as
    /// libwebrtc writes them and RFC 8859 allows for TRANSPORT attributes), msid, cname and msid
    /// per SSRC, rtcp-rsize when offered, the agreed `a=extmap` lines, and our candidates in the
    /// tagged section only.
    private func accepted(
        _ section: WebRTCOffer.MediaSection,
        formats: [SDPRTPFormat],
        trackID: String?,
        ssrcs: [UInt32],
        extensions: [HeaderExtensionMapping],
        tagged: Bool
    ) -> MediaDescription {
        let (port, address) = defaultDestination
        let msid = trackID.map { "\(configuration.streamID) \($0)" }
        var attributes = [
            SDPAttribute(name: "ice-ufrag", value: configuration.ice.ufrag),
            SDPAttribute(name: "ice-pwd", value: configuration.ice.password),
            SDPAttribute(name: "fingerprint", value: configuration.fingerprint.attributeValue),
            SDPAttribute(name: "setup", value: localSetup.rawValue),
        ]
        if let msid { attributes.append(SDPAttribute(name: "msid", value: msid)) }
        if section.rtcpReducedSize { attributes.append(SDPAttribute(name: "rtcp-rsize")) }
        attributes += extensions.map { SDPAttribute(name: "extmap", value: $0.attributeValue) }
        if tagged, !configuration.candidates.isEmpty {
            attributes += configuration.candidates.map { SDPAttribute(name: "candidate", value: $0.attributeValue) }
            attributes.append(SDPAttribute(name: "end-of-candidates"))
        }
        return MediaDescription(
            kind: section.kind,
            port: port,
            transport: section.media.transport,
            formats: formats,
            connection: address,
            direction: .sendonly,
            mid: section.mid,
            rtcpMux: true,
            ssrcAttributes: ssrcs.flatMap { ssrc in
                [
                    .cname(ssrc: ssrc, configuration.cname),
                    SDPSSRCAttribute(ssrc: ssrc, name: "msid", value: msid ?? ""),
                ]
            },
            attributes: attributes
        )
    }

    /// RFC 3264 §6 / RFC 8829 §5.3.1: port 0, the offered protocol and one offered format, the
    /// mid kept so the offerer can match it; `inactive` for RTP sections.
    private func rejected(_ section: WebRTCOffer.MediaSection) -> MediaDescription {
        var media = MediaDescription(
            kind: section.kind,
            port: 0,
            transport: section.media.transport,
            connection: .ipv4Unspecified,
            mid: section.mid
        )
        if let first = section.media.formats.first {
            media.formats = [SDPRTPFormat(payloadType: first.payloadType, rtpmap: first.rtpmap)]
            media.direction = .inactive
        } else {
            media.otherFormats = Array(section.media.otherFormats.prefix(1))
        }
        return media
    }

    /// The first component-1 candidate on an IP literal (RFC 8839 §4.2.1.2 default destination),
    /// else port 9 and 0.0.0.0 as JSEP writes before gathering (RFC 8829 §5.2.1).
    private var defaultDestination: (UInt16, SDPAddress) {
        for candidate in configuration.candidates where candidate.component == 1 {
            if case .ip(let address) = candidate.address { return (candidate.port, address) }
        }
        return (9, .ipv4Unspecified)
    }
}
