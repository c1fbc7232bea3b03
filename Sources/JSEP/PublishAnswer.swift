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
        /// The ids the mid, rtp-stream-id and repaired-rtp-stream-id elements go under
        /// (`PublishOffer.midHeaderExtensionID`, `ridHeaderExtensionID`,
        /// `repairedRIDHeaderExtensionID`), each set as `transportWideSequenceNumberID` is: kept
        /// in a direction that lets us send, else nil. Offered only with simulcast. Without the
        /// repaired rid the layers' RTX cannot be told apart: send no RTX then.
        public var midHeaderExtensionID: UInt8? = nil
        public var ridHeaderExtensionID: UInt8? = nil
        public var repairedRIDHeaderExtensionID: UInt8? = nil
        /// What the endpoint takes of the simulcast we offered; nil when we offered none.
        public var simulcast: Simulcast? = nil
    }

    /// The endpoint's side of our rid-based simulcast (RFC 8853).
    public struct Simulcast: Sendable, Equatable {
        /// One layer the endpoint receives.
        public struct Layer: Sendable, Equatable {
            public var rid: String
            /// Listed `~` (RFC 8853 §5.1): agreed, but not to be sent until a later offer and
            /// answer resume it.
            public var isPaused: Bool

            public init(rid: String, isPaused: Bool = false) {
                self.rid = rid
                self.isPaused = isPaused
            }
        }

        /// The layers to send, in the order of the answer's `a=simulcast:recv` (Janus keeps
        /// ours, highest first). Without `a=simulcast` in the answer: our first layer alone.
        public var layers: [Layer]
        /// Whether the answer has `a=simulcast`. An answer without it takes one stream
        /// (RFC 8853 §5.3): send the first layer only, as a plain stream.
        public var isNegotiated: Bool

        /// The rids of `layers`, in order.
        public var rids: [String] { layers.map(\.rid) }
    }

    public struct Audio: Sendable, Equatable {
        public var payloadType: UInt8
        public var feedback: Set<RTCPFeedbackKind>
        public var headerExtensions: [HeaderExtensionMapping]
        /// As `Video.transportWideSequenceNumberID`.
        public var transportWideSequenceNumberID: UInt8?
        /// As `Video.midHeaderExtensionID` (offered in audio too with simulcast).
        public var midHeaderExtensionID: UInt8? = nil
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
            let context = AnswerContext(section: section, answer: answer, text: text)
            let extensions = try Self.agreedExtensions(context, configuration: offer.configuration)
            if section.kind == .video {
                video = try Self.video(section, offered: offered, extensions: extensions)
                video?.simulcast = try offer.configuration.video?.simulcast.map { layers in
                    try Self.simulcast(context, offered: layers, ridID: extensions.rid)
                }
            } else {
                audio = try Self.audio(section, extensions: extensions)
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
        extensions: AgreedExtensions
    ) throws -> Video {
        let transportWideID = extensions.transportWide
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
            transportWideSequenceNumberID: transportWideID,
            midHeaderExtensionID: extensions.mid,
            ridHeaderExtensionID: extensions.rid,
            repairedRIDHeaderExtensionID: extensions.repairedRID
        )
    }

    private static func audio(_ section: WebRTCOffer.MediaSection, extensions: AgreedExtensions) throws -> Audio {
        let transportWideID = extensions.transportWide
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
            transportWideSequenceNumberID: transportWideID,
            midHeaderExtensionID: extensions.mid
        )
    }

    // MARK: Header extensions

    /// One answer section and the text it came from, for naming lines.
    private struct AnswerContext {
        var section: WebRTCOffer.MediaSection
        var answer: WebRTCOffer
        var text: String

        /// The first line in `section`, or at session level when `sessionToo`, that is
        /// `a=<name>` and satisfies `matches` (the parse keeps no line numbers).
        func line(_ name: Substring, sessionToo: Bool = false, where matches: (Substring) -> Bool) -> OfferLine? {
            let firstSection = answer.sections.first?.line ?? Int.max
            let nextSection = answer.sections.first { $0.index == section.index + 1 }?.line ?? Int.max
            return OfferLine.lines(of: Array(text.utf8)).first { line in
                let inScope =
                    (sessionToo && line.number < firstSection) || (section.line..<nextSection).contains(line.number)
                guard inScope, line.type == "a", line.attribute.name == name, let value = line.attribute.value else {
                    return false
                }
                return matches(value)
            }
        }

        /// `problem` at the line `line` finds, else at the section's m= line.
        func mismatch(_ problem: String, at line: OfferLine?) -> JSEPError {
            if let line { return line.error(problem, code: .answerMismatch) }
            return PublishAnswer.mismatch(
                "the answer's \(section.kind.rawValue) section (line \(section.line)): \(problem)"
            )
        }
    }

    /// The ids the answer lets us stamp each offered element under; nil for one it left out,
    /// turned away or we did not offer in this section.
    private struct AgreedExtensions {
        var transportWide: UInt8?
        var mid: UInt8?
        var rid: UInt8?
        var repairedRID: UInt8?
    }

    /// Each extension we offered in this section (`PublishOffer.headerExtensions`), agreed or not.
    private static func agreedExtensions(
        _ context: AnswerContext,
        configuration: PublishOffer.Configuration
    ) throws -> AgreedExtensions {
        let ours = PublishOffer.headerExtensions(context.section.kind, configuration)
        func agreed(_ uri: String, _ name: String) throws -> UInt8? {
            guard let mapping = ours.first(where: { $0.uri == uri }) else { return nil }
            return try agreedID(uri: uri, name: name, ours: UInt8(truncatingIfNeeded: mapping.id), context)
        }
        return AgreedExtensions(
            transportWide: try agreed(HeaderExtensionMapping.transportWideCC, "transport-wide cc"),
            mid: try agreed(HeaderExtensionMapping.sdesMID, "the mid extension"),
            rid: try agreed(HeaderExtensionMapping.sdesRTPStreamID, "rtp-stream-id"),
            repairedRID: try agreed(HeaderExtensionMapping.sdesRepairedRTPStreamID, "repaired-rtp-stream-id")
        )
    }

    /// RFC 8285 §7: "the same identifier MUST be used for the same offered extension in the
    /// answer", so an answer that maps `uri` to another id than ours is refused (naming its
    /// line). The answer's direction is the endpoint's (RFC 8285 §5): none (its recvonly
    /// stream's), `recvonly` or `sendrecv` lets us send; `sendonly` or `inactive` does not (nil,
    /// as when the answer leaves the extension out).
    private static func agreedID(uri: String, name: String, ours: UInt8, _ context: AnswerContext) throws -> UInt8? {
        let mappings = context.section.headerExtensions.filter { $0.uri == uri }
        if let other = mappings.first(where: { $0.id != UInt16(ours) }) {
            let problem =
                "the answer maps \(name) to id \(other.id), not to our offered \(ours) "
                + "(RFC 8285 section 7: an answer keeps the offered id)"
            let line = context.line("extmap", sessionToo: true) {
                (try? HeaderExtensionMapping(attributeValue: $0)) == other
            }
            throw context.mismatch(problem, at: line)
        }
        guard let mapping = mappings.first else { return nil }
        switch mapping.direction {
        case nil, .recvonly, .sendrecv: return ours
        case .sendonly, .inactive: return nil
        }
    }

    // MARK: Simulcast

    /// RFC 8853 §5.3: the answer's `a=simulcast:recv` lists the offered layers the endpoint
    /// takes, in the order it prefers, each named again by an `a=rid:<rid> recv` line (§5.1,
    /// RFC 8851 §5); no `a=simulcast` means one stream (the first layer). Refused, naming the
    /// line: a send part (we receive nothing), a rid we did not offer, two of our layers made
    /// alternatives of one stream, a layer without its `a=rid` recv line, and simulcast agreed
    /// without the rtp-stream-id element, which is how the endpoint tells the layers apart.
    private static func simulcast(
        _ context: AnswerContext,
        offered layers: [SimulcastLayer],
        ridID: UInt8?
    ) throws -> Simulcast {
        let media = context.section.media
        let offered = Set(layers.map(\.rid))
        for rid in media.rids where !offered.contains(rid.id) {
            throw context.mismatch(
                "the answer has a=rid \(Excerpt.quoted(rid.id)), which our offer did not (RFC 8851 section 5)",
                at: context.line("rid") { $0.split(separator: " ").first == Substring(rid.id) }
            )
        }
        guard let simulcast = media.simulcast else {
            return Simulcast(layers: [Simulcast.Layer(rid: layers[0].rid)], isNegotiated: false)
        }
        let line = context.line("simulcast") { _ in true }
        guard simulcast.send.isEmpty else {
            throw context.mismatch(
                "the answer's a=simulcast has a send part; our offer receives no simulcast (RFC 8853 section 5.3)",
                at: line
            )
        }
        var accepted: [Simulcast.Layer] = []
        for stream in simulcast.receive {
            guard stream.alternatives.count == 1, let alternative = stream.alternatives.first else {
                let names = stream.alternatives.map(\.rid).joined(separator: ",")
                throw context.mismatch(
                    "the answer makes \(Excerpt.quoted(names)) alternatives of one stream; "
                        + "we offered one rid per stream",
                    at: line
                )
            }
            guard offered.contains(alternative.rid) else {
                throw context.mismatch(
                    "the answer's a=simulcast names rid \(Excerpt.quoted(alternative.rid)), which our offer did not",
                    at: line
                )
            }
            guard media.rids.contains(where: { $0.id == alternative.rid && $0.direction == .receive }) else {
                throw context.mismatch(
                    "the answer's a=simulcast names rid \(Excerpt.quoted(alternative.rid)) without an "
                        + "a=rid:\(Excerpt.of(alternative.rid, limit: 16)) recv line (RFC 8853 section 5.1)",
                    at: line
                )
            }
            accepted.append(Simulcast.Layer(rid: alternative.rid, isPaused: alternative.isPaused))
        }
        guard ridID != nil else {
            throw context.mismatch(
                "the answer takes simulcast without our rtp-stream-id a=extmap: the endpoint could not tell "
                    + "the layers apart (RFC 8852)",
                at: line
            )
        }
        return Simulcast(layers: accepted, isNegotiated: true)
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

    static func mismatch(_ reason: String) -> JSEPError {
        JSEPError(code: .answerMismatch, reason: reason)
    }

    /// The offer parser's reasons say "the offer"; here the description is an answer.
    private static func asAnswer(_ reason: String) -> String {
        let prefix = "the offer"
        guard reason.hasPrefix(prefix) else { return reason }
        return "the answer" + reason.dropFirst(prefix.count)
    }
}
