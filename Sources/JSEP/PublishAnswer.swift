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
        /// The feedback the endpoint agreed to send.
        public var feedback: Set<RTCPFeedbackKind>
        /// The answer's `profile-level-id`, when it wrote one (an SFU may prefer another profile;
        /// it only forwards, so this is logged, not refused).
        public var profileLevelID: H264ProfileLevelID?
        public var headerExtensions: [HeaderExtensionMapping]
    }

    public struct Audio: Sendable, Equatable {
        public var payloadType: UInt8
        public var feedback: Set<RTCPFeedbackKind>
        public var headerExtensions: [HeaderExtensionMapping]
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
            if section.kind == .video {
                video = try Self.video(section, offered: offered)
            } else {
                audio = try Self.audio(section)
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

    private static func video(_ section: WebRTCOffer.MediaSection, offered: MediaDescription) throws -> Video {
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
            feedback: feedback(section, payloadType: format.payloadType),
            profileLevelID: format.parameter("profile-level-id").flatMap { H264ProfileLevelID($0) },
            headerExtensions: section.headerExtensions
        )
    }

    private static func audio(_ section: WebRTCOffer.MediaSection) throws -> Audio {
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
            feedback: feedback(section, payloadType: PublishOffer.audioPayloadType),
            headerExtensions: section.headerExtensions
        )
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

    private static func feedback(_ section: WebRTCOffer.MediaSection, payloadType: UInt8) -> Set<RTCPFeedbackKind> {
        Set(section.media.rtcpFeedback.filter { $0.applies(to: payloadType) }.compactMap(RTCPFeedbackKind.init))
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
