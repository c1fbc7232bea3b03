import SDP

/// A WHIP endpoint's answer (RFC 9725 §4.2) to our `PublishOffer`, read and checked against it
/// (RFC 3264 §6, RFC 8829 §5.10): what was agreed, and the endpoint's side of the transport.
///
/// The answer is untrusted input from the network: any way it fails to answer our offer is a
/// `JSEPError` naming what and where (`malformedAnswer` with the line, or `answerMismatch`,
/// `notBundleable`, `noICECredentials`, `noFingerprint`, `unsupportedSetup`, ...). Our video
/// rejected is an error; our audio rejected is not (`audio` is nil, `rejected` says why).
public struct PublishAnswer: Sendable {
    /// What the endpoint accepted for our video.
    public struct Video: Sendable, Equatable {
        public var payloadType: UInt8
        /// Set when the answer kept our RTX format (RFC 4588 §8.1); without it a NACKed packet
        /// is resent on the media SSRC.
        public var retransmissionPayloadType: UInt8?
        /// The feedback the endpoint agreed to send (`transport-cc` only when
        /// `transportWideSequenceNumberID` is set: it reports on that extension).
        public var feedback: Set<RTCPFeedbackKind>
        /// The answer's `profile-level-id`, when it wrote one (an SFU may prefer another profile;
        /// it only forwards, so this is logged, not refused).
        public var profileLevelID: H264ProfileLevelID?
        public var headerExtensions: [HeaderExtensionMapping]
        /// `PublishOffer.transportWideSequenceNumberID` when the answer kept our transport-wide
        /// cc `a=extmap` in a direction that lets us send it; nil when it left it out (not an
        /// error: RFC 8285 §7) or we did not offer it.
        public var transportWideSequenceNumberID: UInt8?
    }

    public struct Audio: Sendable, Equatable {
        public var payloadType: UInt8
        public var feedback: Set<RTCPFeedbackKind>
        public var headerExtensions: [HeaderExtensionMapping]
        /// As `Video.transportWideSequenceNumberID`.
        public var transportWideSequenceNumberID: UInt8?
    }

    /// The parsed answer.
    public var description: WebRTCOffer
    public var video: Video?
    public var audio: Audio?
    /// Our sections the endpoint rejected, as `mid: reason`.
    public var rejected: [String]
    public var remote: WebRTCAnswer.RemoteTransport
    /// Our DTLS side: the complement of the answer's `a=setup` (RFC 8842 §5.3).
    public var localSetup: ConnectionSetup

    /// Whether we open the DTLS handshake (the endpoint answered `passive`).
    public var isDTLSClient: Bool { localSetup == .active }

    public init(parsing text: String, answering offer: PublishOffer, limits: WebRTCOffer.Limits = .init()) throws {
        let answer: WebRTCOffer
        do {
            answer = try WebRTCOffer(parsing: text, limits: limits)
        } catch let error as JSEPError {
            throw JSEPError(code: .malformedAnswer, line: error.line, reason: Self.asAnswer(error.reason))
        }
        description = answer
        let ours = offer.description.media
        guard answer.sections.count == ours.count else {
            throw Self.mismatch(
                "the answer has \(answer.sections.count) m-sections for our offer's \(ours.count) (RFC 3264 section 6)"
            )
        }
        var video: Video?
        var audio: Audio?
        var rejected: [String] = []
        for (section, offered) in zip(answer.sections, ours) {
            guard section.kind == offered.kind, section.mid == offered.mid else {
                throw Self.mismatch(
                    "m-section \(section.index + 1) (line \(section.line)) answers "
                        + "\(Excerpt.of(section.kind.rawValue, limit: 16)) mid \(Excerpt.quoted(section.mid ?? "")) "
                        + "for our \(offered.kind.rawValue) mid \(offered.mid ?? "")"
                )
            }
            if section.isDisabled {
                guard section.kind != .video else {
                    throw Self.mismatch("the endpoint rejected our video (port 0 on line \(section.line))")
                }
                rejected.append("\(offered.mid ?? ""): port 0")
                continue
            }
            try Self.checkTransport(section)
            let transportWideID = try Self.transportWideSequenceNumberID(
                section,
                offered: PublishOffer.offersTransportWideCC(offer.configuration),
                answer: answer,
                text: text
            )
            if section.kind == .video {
                video = try Self.video(section, offered: offered, transportWideID: transportWideID)
            } else {
                audio = try Self.audio(section, transportWideID: transportWideID)
            }
        }
        self.video = video
        self.audio = audio
        self.rejected = rejected
        let accepted = answer.sections.filter { !$0.isDisabled }.compactMap(\.mid)
        guard let bundle = answer.bundleGroup, accepted.allSatisfy(bundle.mids.contains) else {
            throw JSEPError(
                code: .notBundleable,
                reason: "the answer does not bundle every section it accepted (RFC 8843 section 7.3): "
                    + "a=group:BUNDLE is \(answer.bundleGroup.map { Excerpt.quoted($0.mids.joined(separator: " ")) } ?? "missing")"
            )
        }
        guard let taggedMid = bundle.mids.first, let tagged = answer.section(mid: taggedMid) else {
            throw JSEPError(code: .notBundleable, reason: "the answer's BUNDLE group is empty")
        }
        remote = try WebRTCAnswer.remoteTransport(offer: answer, bundle: bundle, tagged: tagged, party: "answer")
        guard let complement = remote.setup.complement else {
            throw JSEPError(
                code: .unsupportedSetup,
                reason: "the answer's a=setup is \(remote.setup.rawValue); an answer must say active or passive "
                    + "(RFC 8842 section 5.3)"
            )
        }
        localSetup = complement
    }

    // MARK: Sections

    /// RFC 8829 §5.10: the answer keeps our profile (DTLS-SRTP) and our rtcp-mux; to a sendonly
    /// offer it answers recvonly (RFC 3264 §6.1), or inactive, which leaves nothing to send.
    private static func checkTransport(_ section: WebRTCOffer.MediaSection) throws {
        let label = "the answer's \(section.kind.rawValue) section (line \(section.line))"
        guard section.media.transport == .udpTLSRTPSAVPF else {
            throw JSEPError(
                code: .unsupportedTransport,
                reason:
                    "\(label) has protocol \(Excerpt.quoted(section.media.transport.rawValue)), not UDP/TLS/RTP/SAVPF"
            )
        }
        guard section.media.rtcpMux else {
            throw JSEPError(code: .noRTCPMux, reason: "\(label) has no a=rtcp-mux; we send RTCP only on the RTP flow")
        }
        guard section.direction == .recvonly else {
            throw mismatch(
                "\(label) is \(section.direction.rawValue); an answer to our sendonly offer must be recvonly"
            )
        }
    }

    private static func video(
        _ section: WebRTCOffer.MediaSection,
        offered: MediaDescription,
        transportWideID: UInt8?
    ) throws -> Video {
        let label = "the answer's video section (line \(section.line))"
        try checkPayloadTypes(section, offered: offered, label: label)
        guard
            let format = section.media.formats.first(where: {
                $0.payloadType == PublishOffer.videoPayloadType && $0.rtpmap?.encodingName.uppercased() == "H264"
            })
        else {
            throw mismatch("\(label) does not keep our H.264 payload type \(PublishOffer.videoPayloadType)")
        }
        if let mode = format.parameter("packetization-mode"), mode != "1" {
            throw mismatch("\(label) asks for H.264 packetization-mode=\(Excerpt.of(mode, limit: 8)); we send mode 1")
        }
        let rtx = section.retransmissionPayloadType(for: format.payloadType)
        return Video(
            payloadType: format.payloadType,
            retransmissionPayloadType: rtx,
            feedback: feedback(section, payloadType: format.payloadType, transportWideID: transportWideID),
            profileLevelID: format.parameter("profile-level-id").flatMap { H264ProfileLevelID($0) },
            headerExtensions: section.headerExtensions,
            transportWideSequenceNumberID: transportWideID
        )
    }

    private static func audio(_ section: WebRTCOffer.MediaSection, transportWideID: UInt8?) throws -> Audio {
        let label = "the answer's audio section (line \(section.line))"
        guard
            section.media.formats.contains(where: {
                $0.payloadType == PublishOffer.audioPayloadType && $0.rtpmap?.encodingName.lowercased() == "opus"
            })
        else {
            throw mismatch("\(label) does not keep our Opus payload type \(PublishOffer.audioPayloadType)")
        }
        return Audio(
            payloadType: PublishOffer.audioPayloadType,
            feedback: feedback(section, payloadType: PublishOffer.audioPayloadType, transportWideID: transportWideID),
            headerExtensions: section.headerExtensions,
            transportWideSequenceNumberID: transportWideID
        )
    }

    /// RFC 8285 §7: "the same identifier MUST be used for the same offered extension in the
    /// answer", so an answer that maps transport-wide cc to another id than ours is refused
    /// (naming its line). The answer's direction is the endpoint's (RFC 8285 §5): none (its
    /// recvonly stream's), `recvonly` or `sendrecv` lets us send; `sendonly` or `inactive` does
    /// not (nil, as when the answer leaves the extension out, or we did not offer it).
    private static func transportWideSequenceNumberID(
        _ section: WebRTCOffer.MediaSection,
        offered: Bool,
        answer: WebRTCOffer,
        text: String
    ) throws -> UInt8? {
        guard offered else { return nil }
        let ours = PublishOffer.transportWideSequenceNumberID
        let mappings = section.headerExtensions.filter { $0.uri == HeaderExtensionMapping.transportWideCC }
        if let other = mappings.first(where: { $0.id != UInt16(ours) }) {
            let problem =
                "the answer maps transport-wide cc to id \(other.id), not to our offered \(ours) "
                + "(RFC 8285 section 7: an answer keeps the offered id)"
            if let line = extmapLine(other, section: section, answer: answer, text: text) {
                throw line.error(problem, code: .answerMismatch)
            }
            throw mismatch("the answer's \(section.kind.rawValue) section (line \(section.line)): \(problem)")
        }
        guard let mapping = mappings.first else { return nil }
        switch mapping.direction {
        case nil, .recvonly, .sendrecv: return ours
        case .sendonly, .inactive: return nil
        }
    }

    /// The line of `mapping` in `section` or at session level (the parse keeps no numbers).
    private static func extmapLine(
        _ mapping: HeaderExtensionMapping,
        section: WebRTCOffer.MediaSection,
        answer: WebRTCOffer,
        text: String
    ) -> OfferLine? {
        let firstSection = answer.sections.first?.line ?? Int.max
        let nextSection = answer.sections.first { $0.index == section.index + 1 }?.line ?? Int.max
        return OfferLine.lines(of: Array(text.utf8)).first { line in
            let inScope = line.number < firstSection || (section.line..<nextSection).contains(line.number)
            guard inScope, line.type == "a", line.attribute.name == "extmap", let value = line.attribute.value else {
                return false
            }
            return (try? HeaderExtensionMapping(attributeValue: value)) == mapping
        }
    }

    /// RFC 3264 §6.1: an answer to a sendonly offer lists a subset of the offered formats, under
    /// the offered numbers.
    private static func checkPayloadTypes(
        _ section: WebRTCOffer.MediaSection,
        offered: MediaDescription,
        label: String
    ) throws {
        for format in section.media.formats where offered.format(payloadType: format.payloadType) == nil {
            throw mismatch("\(label) lists payload type \(format.payloadType), which our offer did not")
        }
    }

    private static func feedback(
        _ section: WebRTCOffer.MediaSection,
        payloadType: UInt8,
        transportWideID: UInt8?
    ) -> Set<RTCPFeedbackKind> {
        var kinds = Set(
            section.media.rtcpFeedback.filter { $0.applies(to: payloadType) }.compactMap(RTCPFeedbackKind.init)
        )
        if transportWideID == nil { kinds.remove(.transportWideCongestionControl) }
        return kinds
    }

    private static func mismatch(_ reason: String) -> JSEPError {
        JSEPError(code: .answerMismatch, reason: reason)
    }

    /// The offer parser's reasons say "the offer"; here the description is an answer.
    private static func asAnswer(_ reason: String) -> String {
        let prefix = "the offer"
        guard reason.hasPrefix(prefix) else { return reason }
        return "the answer" + reason.dropFirst(prefix.count)
    }
}
