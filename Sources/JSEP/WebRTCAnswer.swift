import SDP

/// Our JSEP answer (RFC 8829 §5.3) to a subscriber's offer, as a sendonly publisher: the SDP text
/// to send back and what was agreed, for the transport to act on.
///
/// `init(answering:configuration:)` either serves the offer whole (every medium we send finds
/// an m-section that receives it) or throws a `JSEPError` whose reason is fit for
/// `subscribe-reject`. It is a pure function of its inputs: no sockets, no clocks, no randomness
/// beyond a random `o=` session id when the configuration gives no origin.
public struct WebRTCAnswer: Sendable {
    /// What we bring to the answer.
    public struct Configuration: Sendable {
        /// Our ICE agent's credentials for this session.
        public var ice: ICECredentials
        /// The sha-256 fingerprint of the certificate our DTLS side presents (RFC 8827 §6.5 makes
        /// sha-256 the one every peer checks).
        public var fingerprint: CertificateFingerprint
        /// The role we take when the offer says `actpass`: `active` (default) or `passive`.
        ///
        /// `active` makes us the DTLS client, as RFC 5763 §5 recommends and libwebrtc, Pion and
        /// Janus answer (RFC 8842 §5.3 lets the answerer choose). An `actpass` offerer must accept
        /// a ClientHello at any time, so ours goes out as soon as ICE connects, even before the
        /// offerer has read the answer; as `passive` we would wait for the offerer's
        /// ClientHello, which it sends only after the answer has arrived: one more signaling
        /// delay before the first picture. An offer that says `active` or `passive` gets the
        /// complement whatever this says.
        public var setup: ConnectionSetup
        /// RTCP CNAME for all our streams (RFC 7022: random per session).
        public var cname: String
        /// RFC 8830 `a=msid` stream id shared by our audio and video (so the receiver
        /// synchronises them).
        public var streamID: String
        public var video: Video?
        public var audio: Audio?
        /// Our candidates, written in the answerer-tagged m-section with `a=end-of-candidates`
        /// (we do not trickle); the first component-1 one on an IP literal becomes the m= port and
        /// `c=` address (RFC 8839 §4.2.1.2). Empty: port 9, `0.0.0.0`, no candidates; the offerer
        /// then finds us as a peer-reflexive candidate when our checks arrive.
        public var candidates: [ICECandidate]
        /// nil: a random session id (RFC 8866 §5.2).
        public var origin: SDPOrigin?
        /// The RTP header extension URIs our sender stamps (one-byte form, RFC 8285 §4.2). An
        /// answer agrees each where the offer maps it to an id 1–14 in a direction that lets us
        /// send it, under the offer's id; `PublishOffer` offers transport-wide cc when this holds
        /// it. Empty: no `a=extmap` and no `transport-cc` feedback.
        public var headerExtensions: Set<String>

        public init(
            ice: ICECredentials,
            fingerprint: CertificateFingerprint,
            cname: String,
            streamID: String,
            video: Video?,
            audio: Audio?,
            setup: ConnectionSetup = .active,
            candidates: [ICECandidate] = [],
            origin: SDPOrigin? = nil,
            headerExtensions: Set<String> = [HeaderExtensionMapping.transportWideCC]
        ) {
            self.ice = ice
            self.fingerprint = fingerprint
            self.cname = cname
            self.streamID = streamID
            self.video = video
            self.audio = audio
            self.setup = setup
            self.candidates = candidates
            self.origin = origin
            self.headerExtensions = headerExtensions
        }

        /// The H.264 stream we send.
        public struct Video: Sendable {
            public var ssrc: UInt32
            /// RFC 4588 RTX stream; nil sends no RTX (and answers none).
            public var retransmissionSSRC: UInt32?
            /// RFC 8830 `a=msid` track id.
            public var trackID: String
            /// What the encoder produces; decides which offered H.264 formats fit.
            public var profileLevelID: H264ProfileLevelID
            /// The codecs we can send, most preferred first (`--codecs`): the viewer gets the
            /// first its offer has. `ssrc` and `retransmissionSSRC` are that codec's stream's, so
            /// a caller that sends each codec on its own stream chooses first
            /// (`WebRTCOffer.videoCodec(preferring:sending:)`) and answers with that one.
            public var codecs: [VideoCodec]
            /// Feedback our sender acts on; the answer lists the offered subset (transport-cc
            /// only with the transport-wide sequence number extension agreed).
            public var feedback: Set<RTCPFeedbackKind>
            /// Rid-based simulcast (RFC 8853) in our WHIP offer: the layers, highest first, 1 to
            /// `PublishOffer.maximumSimulcastLayers`. The first is the stream `ssrc` and
            /// `retransmissionSSRC` describe (they must be its SSRCs), the one an endpoint that
            /// answers without `a=simulcast` gets alone. nil: one stream. Only `PublishOffer`
            /// reads it; answers to viewers' offers send one stream.
            public var simulcast: [SimulcastLayer]?

            public init(
                ssrc: UInt32,
                retransmissionSSRC: UInt32? = nil,
                trackID: String,
                profileLevelID: H264ProfileLevelID = .constrainedBaseline31,
                codecs: [VideoCodec] = [.h264],
                feedback: Set<RTCPFeedbackKind> = Set(RTCPFeedbackKind.allCases),
                simulcast: [SimulcastLayer]? = nil
            ) {
                self.codecs = codecs
                self.ssrc = ssrc
                self.retransmissionSSRC = retransmissionSSRC
                self.trackID = trackID
                self.profileLevelID = profileLevelID
                self.feedback = feedback
                self.simulcast = simulcast
            }
        }

        /// The Opus stream we send.
        public struct Audio: Sendable {
            public var ssrc: UInt32
            public var trackID: String
            /// Our `a=fmtp` for Opus (what we send: FEC, stereo).
            public var parameters: OpusFormatParameters
            /// Feedback our sender acts on for audio; only transport-cc by default (no key
            /// frames, and we keep no audio history to resend from), which needs the
            /// transport-wide sequence number extension agreed as well.
            public var feedback: Set<RTCPFeedbackKind>

            public init(
                ssrc: UInt32,
                trackID: String,
                parameters: OpusFormatParameters = OpusFormatParameters(usesInbandFEC: false),
                feedback: Set<RTCPFeedbackKind> = [.transportWideCongestionControl]
            ) {
                self.ssrc = ssrc
                self.trackID = trackID
                self.parameters = parameters
                self.feedback = feedback
            }
        }
    }

    /// The negotiated video stream.
    public struct Video: Sendable, Equatable {
        public var mid: String
        /// The codec the viewer gets: the first of `Configuration.Video.codecs` it offered.
        public var codec: VideoCodec
        public var payloadType: UInt8
        /// The offer's RTX payload type for `payloadType` (its `apt`), when we send RTX and the
        /// offer has one.
        public var retransmissionPayloadType: UInt8?
        /// For H.264, what the offer said for `payloadType` and what we answered (its profile,
        /// our level); nil for VP8 and VP9.
        public var offeredProfileLevelID: H264ProfileLevelID?
        public var answeredProfileLevelID: H264ProfileLevelID?
        public var feedback: Set<RTCPFeedbackKind>
        /// RFC 5506: the offerer accepts reduced-size RTCP on this section.
        public var rtcpReducedSize: Bool
        public var ssrc: UInt32
        /// Set when `retransmissionPayloadType` is.
        public var retransmissionSSRC: UInt32?
        /// The offer's `a=extmap` lines for this section.
        public var offeredHeaderExtensions: [HeaderExtensionMapping]
        /// The id we stamp the transport-wide sequence number under (draft-holmer-rmcat-
        /// transport-wide-cc-extensions-01 §2.3, one-byte form), when the answer agreed it; nil:
        /// no extension and no `transport-cc` feedback.
        public var transportWideSequenceNumberID: UInt8? = nil
    }

    /// The negotiated audio stream.
    public struct Audio: Sendable, Equatable {
        public var mid: String
        public var payloadType: UInt8
        public var feedback: Set<RTCPFeedbackKind>
        public var rtcpReducedSize: Bool
        public var ssrc: UInt32
        public var offeredHeaderExtensions: [HeaderExtensionMapping]
        /// As `Video.transportWideSequenceNumberID`; nil also when the offer maps the URI to
        /// another id here than in the video section (RFC 8843 §12: one id per extension in a
        /// bundle), since the video's id wins.
        public var transportWideSequenceNumberID: UInt8? = nil
    }

    /// An m-section answered with port 0, and why (for one log line).
    public struct RejectedSection: Sendable, Equatable {
        public var index: Int
        public var mid: String?
        public var kind: SDPMediaKind
        public var reason: String
    }

    /// The offerer's side of the one bundled transport.
    public struct RemoteTransport: Sendable, Equatable {
        public var ice: ICECredentials
        public var iceOptions: [String]
        public var isICELite: Bool
        /// All of the offerer-tagged section's fingerprints; the DTLS certificate must match one
        /// whose hash function is in `CertificateFingerprint.HashFunction.checked`.
        public var fingerprints: [CertificateFingerprint]
        /// What the offer said (normally `actpass`).
        public var setup: ConnectionSetup
        /// Candidates on IP literals from every bundled section, each once, in order.
        public var candidates: [ICECandidate]
        /// Candidates on host names (mDNS `.local` and others), not used; log them once.
        public var skippedCandidates: [ICECandidate]
        /// The offerer has sent all its candidates (RFC 8840).
        public var endOfCandidates: Bool
    }

    /// Why one m-section cannot carry a medium we send; the first such reason for a medium
    /// becomes the `JSEPError` when no section can.
    struct Refusal: Error, Equatable {
        var code: JSEPError.Code
        var reason: String
    }

    /// The answer, CRLF line ends, ready to send.
    public var sdp: String
    /// The same answer as a value.
    public var description: SessionDescription
    /// The accepted mids, answerer-tagged first (RFC 8843 §7.3.1).
    public var bundle: MediaGroup
    public var video: Video?
    public var audio: Audio?
    public var rejectedSections: [RejectedSection]
    public var remote: RemoteTransport
    /// `active` (we are the DTLS client) or `passive` (server).
    public var localSetup: ConnectionSetup

    /// Whether we open the DTLS handshake.
    public var isDTLSClient: Bool { localSetup == .active }
}
