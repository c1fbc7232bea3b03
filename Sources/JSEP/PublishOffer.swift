import SDP

/// Our JSEP offer (RFC 8829 §5.2.1) when we publish into a WHIP endpoint (RFC 9725 §4.2): one
/// sendonly video and one sendonly audio m-section, bundled on one transport, `a=setup:actpass`
/// so the endpoint chooses the DTLS role, our candidates complete with `a=end-of-candidates`.
///
/// The same `WebRTCAnswer.Configuration` describes what we send (its `setup` is not used: an
/// offer is `actpass`, RFC 8842 §5.2). The payload type numbers are ours to choose; an answer
/// must use them (RFC 3264 §6.1), which `PublishAnswer` checks. When the configuration's
/// `headerExtensions` holds transport-wide cc, both sections offer
/// `a=extmap:3 <URI>` and `transport-cc` feedback for the media payload types (not RTX).
///
/// With `Configuration.Video.simulcast` the video section offers rid-based simulcast
/// (RFC 8853): `a=extmap:4` mid (RFC 8843 §14), `a=extmap:10` rtp-stream-id and `a=extmap:11`
/// repaired-rtp-stream-id (RFC 8852 §3), one `a=rid:<rid> send` per layer (RFC 8851) and
/// `a=simulcast:send <rid>;<rid>;...`, highest layer first, and no `a=ssrc` or `a=ssrc-group`:
/// the layers' SSRCs are not signaled, the receiver binds each to its layer from the rid element
/// of its first packets and each RTX SSRC from the repaired rid (RFC 8852, RFC 8853).
/// The audio section offers the mid element under the same id (RFC 8843 §12: one id per
/// URI in a bundle) and keeps its `a=ssrc`.
public struct PublishOffer: Sendable {
    public typealias Configuration = WebRTCAnswer.Configuration

    /// H.264, its RTX (RFC 4588) and Opus: the numbers libwebrtc uses for the same formats, so
    /// packet dumps read the same.
    public static let videoPayloadType: UInt8 = 96
    public static let retransmissionPayloadType: UInt8 = 97
    public static let audioPayloadType: UInt8 = 111
    public static let videoMid = "0"
    public static let audioMid = "1"
    /// The one-byte id (RFC 8285 §4.2) we offer the transport-wide sequence number under, in
    /// both sections (RFC 8843 §12: one id per extension in a bundle); libwebrtc's number. An
    /// answer must keep it (RFC 8285 §7).
    public static let transportWideSequenceNumberID: UInt8 = 3
    /// The one-byte ids we offer the RFC 8843 §14 mid, RFC 8852 §3.1 rtp-stream-id and §3.2
    /// repaired-rtp-stream-id elements under when we offer simulcast: libwebrtc's defaults. An
    /// answer must keep them (RFC 8285 §7).
    public static let midHeaderExtensionID: UInt8 = 4
    public static let ridHeaderExtensionID: UInt8 = 10
    public static let repairedRIDHeaderExtensionID: UInt8 = 11
    /// Simulcast layers we offer at most: Janus 1.1.2 keeps three rids per section.
    public static let maximumSimulcastLayers = 3

    public let configuration: Configuration
    /// The offer, CRLF line ends, ready to POST.
    public let sdp: String
    public let description: SessionDescription

    public init(_ configuration: Configuration) throws {
        try ConfigurationCheck.validate(configuration)
        self.configuration = configuration
        var media: [MediaDescription] = []
        if let video = configuration.video { media.append(Self.video(video, configuration)) }
        if let audio = configuration.audio { media.append(Self.audio(audio, configuration)) }
        let mids = media.compactMap(\.mid)
        description = SessionDescription(
            origin: configuration.origin ?? .random(),
            sessionName: "-",
            timing: .permanent,
            attributes: [
                SDPAttribute(name: "group", value: MediaGroup.bundle(mids).attributeValue),
                SDPAttribute(name: "msid-semantic", value: "WMS \(configuration.streamID)"),
            ],
            media: media
        )
        do {
            sdp = try SDPWriter.write(description)
        } catch {
            throw JSEPError(code: .invalidConfiguration, reason: "the offer cannot be written: \(error)")
        }
    }

    /// RFC 6184 §8.1: packetization-mode=1 (STAP-A and FU-A, what our payloader sends), our
    /// stream's profile-level-id (`H264ProfileLevelID.offered`), and level-asymmetry-allowed so a receiver may decode a
    /// higher level than it sends; RTX bound to it by `apt`; the feedback we act on.
    private static func video(_ video: Configuration.Video, _ configuration: Configuration) -> MediaDescription {
        let payloadType = videoPayloadType
        var formats = [
            SDPRTPFormat(
                payloadType: payloadType,
                rtpmap: SDPRTPMap(encodingName: "H264", clockRate: 90_000),
                parameters: [
                    SDPFormatParameter(name: "level-asymmetry-allowed", value: "1"),
                    SDPFormatParameter(name: "packetization-mode", value: "1"),
                    SDPFormatParameter(name: "profile-level-id", value: video.profileLevelID.offered.description),
                ]
            )
        ]
        var ssrcs = [video.ssrc]
        var groups: [SDPSSRCGroup] = []
        if let rtx = video.retransmissionSSRC {
            formats.append(.retransmission(payloadType: retransmissionPayloadType, associatedPayloadType: payloadType))
            ssrcs.append(rtx)
            groups.append(.flowIdentification(original: video.ssrc, retransmission: rtx))
        }
        var media = section(
            .video,
            mid: videoMid,
            formats: formats,
            trackID: video.trackID,
            ssrcs: video.simulcast == nil ? ssrcs : [],
            configuration
        )
        media.rtcpFeedback = feedback(video.feedback, configuration).map { $0.line(payloadType: payloadType) }
        guard let layers = video.simulcast else {
            media.ssrcGroups = groups
            return media
        }
        media.rids = layers.map { SDPRID(id: $0.rid, direction: .send) }
        media.simulcast = SDPSimulcast(send: layers.map { SDPSimulcast.Stream(rid: $0.rid) })
        return media
    }

    /// The `a=extmap` lines of a section, by id: transport-wide cc when our sender stamps it;
    /// with simulcast the mid in both sections and rid and repaired rid in the video's.
    static func headerExtensions(_ kind: SDPMediaKind, _ configuration: Configuration) -> [HeaderExtensionMapping] {
        var mappings: [HeaderExtensionMapping] = []
        if offersTransportWideCC(configuration) {
            mappings.append(
                HeaderExtensionMapping(
                    id: UInt16(transportWideSequenceNumberID),
                    uri: HeaderExtensionMapping.transportWideCC
                )
            )
        }
        guard offersSimulcast(configuration) else { return mappings }
        mappings.append(HeaderExtensionMapping(id: UInt16(midHeaderExtensionID), uri: HeaderExtensionMapping.sdesMID))
        if kind == .video {
            mappings.append(
                HeaderExtensionMapping(id: UInt16(ridHeaderExtensionID), uri: HeaderExtensionMapping.sdesRTPStreamID)
            )
            mappings.append(
                HeaderExtensionMapping(
                    id: UInt16(repairedRIDHeaderExtensionID),
                    uri: HeaderExtensionMapping.sdesRepairedRTPStreamID
                )
            )
        }
        return mappings
    }

    static func offersSimulcast(_ configuration: Configuration) -> Bool {
        configuration.video?.simulcast != nil
    }

    private static func audio(_ audio: Configuration.Audio, _ configuration: Configuration) -> MediaDescription {
        var media = section(
            .audio,
            mid: audioMid,
            formats: [.opus(payloadType: audioPayloadType, parameters: audio.parameters)],
            trackID: audio.trackID,
            ssrcs: [audio.ssrc],
            configuration
        )
        media.rtcpFeedback = feedback(audio.feedback, configuration).map { $0.line(payloadType: audioPayloadType) }
        return media
    }

    /// What a section offers: `kinds` in a stable order (the Set has none: the order
    /// RTCPFeedbackKind lists them in), `transport-cc` only with the extension it reports on.
    private static func feedback(_ kinds: Set<RTCPFeedbackKind>, _ configuration: Configuration) -> [RTCPFeedbackKind] {
        RTCPFeedbackKind.allCases.filter {
            kinds.contains($0) && ($0 != .transportWideCongestionControl || offersTransportWideCC(configuration))
        }
    }

    static func offersTransportWideCC(_ configuration: Configuration) -> Bool {
        configuration.headerExtensions.contains(HeaderExtensionMapping.transportWideCC)
    }

    /// What both sections carry (RFC 8829 §5.2.1): the bundle's default address, sendonly,
    /// rtcp-mux and rtcp-rsize, identical ICE credentials, fingerprint and `actpass` (RFC 8843
    /// §7.1: identical transport attributes in every bundled offer section), msid per section and
    /// per SSRC, the `a=extmap` lines (no direction: our sendonly stream's), and the candidates
    /// in the first section only.
    private static func section(
        _ kind: SDPMediaKind,
        mid: String,
        formats: [SDPRTPFormat],
        trackID: String,
        ssrcs: [UInt32],
        _ configuration: Configuration
    ) -> MediaDescription {
        let (port, address) = defaultDestination(configuration.candidates)
        let msid = "\(configuration.streamID) \(trackID)"
        var attributes = [
            SDPAttribute(name: "ice-ufrag", value: configuration.ice.ufrag),
            SDPAttribute(name: "ice-pwd", value: configuration.ice.password),
            SDPAttribute(name: "fingerprint", value: configuration.fingerprint.attributeValue),
            SDPAttribute(name: "setup", value: ConnectionSetup.actpass.rawValue),
            SDPAttribute(name: "msid", value: msid),
            SDPAttribute(name: "rtcp-rsize"),
        ]
        attributes += headerExtensions(kind, configuration).map {
            SDPAttribute(name: "extmap", value: $0.attributeValue)
        }
        if mid == (configuration.video != nil ? videoMid : audioMid) {
            attributes += configuration.candidates.map { SDPAttribute(name: "candidate", value: $0.attributeValue) }
            attributes.append(SDPAttribute(name: "end-of-candidates"))
        }
        return MediaDescription(
            kind: kind,
            port: port,
            transport: .udpTLSRTPSAVPF,
            formats: formats,
            connection: address,
            direction: .sendonly,
            mid: mid,
            rtcpMux: true,
            ssrcAttributes: ssrcs.flatMap { ssrc in
                [.cname(ssrc: ssrc, configuration.cname), SDPSSRCAttribute(ssrc: ssrc, name: "msid", value: msid)]
            },
            attributes: attributes
        )
    }

    /// RFC 8839 §4.2.1.2: the first component-1 candidate on an IP literal, else port 9 and
    /// 0.0.0.0 (RFC 8829 §5.2.1, before gathering).
    static func defaultDestination(_ candidates: [ICECandidate]) -> (UInt16, SDPAddress) {
        for candidate in candidates where candidate.component == 1 {
            if case .ip(let address) = candidate.address { return (candidate.port, address) }
        }
        return (9, .ipv4Unspecified)
    }
}
