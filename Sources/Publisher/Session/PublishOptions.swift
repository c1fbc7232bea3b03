import CongestionControl
import Ingest
import MediaPipeline
import SDP
import SRTP
import SendEngine
import Transport

/// Everything `rtc-publish` can be told, validated before anything starts. The media threads'
/// part (`MediaOptions`) reads and writes as if it were this struct's own.
@dynamicMemberLookup
public struct PublishOptions: Sendable {
    public var room: String
    public var uid: String
    /// Signaling server; nil publishes to static destinations only.
    public var signal: (host: String, port: Int)? = ("127.0.0.1", 8443)
    /// TLS to the signaling server (`--signal-tls`), trusting the system's roots or only
    /// `signalCertificateAuthority` (`--signal-ca FILE`, which implies TLS).
    public var signalTLS = false
    public var signalCertificateAuthority: String?
    public var token: String?
    /// `--ingest`: listen here for a capture process, whose frames are the video.
    public var ingest: IngestAddress?
    /// Bounds for the loss-based rate control (Docs/feedback.md); nil maximum = the start rate,
    /// so receivers can lower the rate and give it back but never push it past what was asked.
    public var minVideoBitrateKbps = 150
    public var maxVideoBitrateKbps: Int?
    /// How NACKed packets are resent to the preview, `--to` destinations and subscribers.
    public var retransmission: DestinationOptions.Retransmission = .sameSSRC
    /// Write `RTP/SAVPF`, `a=rtcp-fb` (and RTX with `retransmission == .rtx`) into the SDP
    /// files, so receivers that can send feedback know they may.
    public var advertiseFeedback = false
    /// Accept feedback in clear RTCP from the preview and `--to` receivers (Janus sends PLI and
    /// REMB unencrypted). Off: only SRTCP with the destination's key counts.
    public var acceptClearFeedback = false
    public var suite: SRTPSuite = .default
    public var mtu = 1200
    /// The local preview: 127.0.0.1, video 5004, audio 5006, SDP in `<uid>.sdp`.
    public var preview = true
    public var previewHost = "127.0.0.1"
    public var previewVideoPort = 5004
    public var previewAudioPort = 5006
    public var sdpPath: String?
    /// `--to HOST:PORT`: video on PORT, audio on PORT + 2, RTCP on each + 1; own keys and SDP file.
    public var staticDestinations: [UDPAddress] = []
    /// WebRTC subscribers: ICE addresses and servers, the DTLS certificate.
    public var webRTC = WebRTCOptions()
    /// `--max-viewers`: subscribers (WebRTC, connecting or connected, and SDES) served at once;
    /// one more is refused with `subscribe-reject`. Each WebRTC viewer costs a thread (its ICE
    /// agent's GLib loop), about five descriptors and about 1 MB (Docs/webrtc.md), and every
    /// viewer one SRTP protect and send per packet: the benchmarks hold 100 at 720p30 on two
    /// cores (Docs/benchmarks.md), so 100 is the default; a larger host may raise it.
    public var maxViewers = PublishOptions.defaultMaxViewers
    /// `--codecs`: what a WebRTC viewer may get, most preferred first (JSEP answers the first
    /// its offer has); VP8 and VP9 come from a second encoder (`CodecGroup`).
    public var codecs: [VideoCodec] = [.h264, .vp8, .vp9]
    public static let defaultMaxViewers = 100
    /// `--ice-ports MIN-MAX`: WebRTC's ICE host candidates (subscribers' and `--whip`'s) bind
    /// only UDP ports in this range, for firewalls and traffic shaping; nil: any port.
    public var icePortRange: ClosedRange<UInt16>?
    /// `--whip`: also publish into this WHIP endpoint.
    public var whip: WHIPOptions?
    /// Transport-wide congestion control, pacing and probing (`--no-transport-cc`,
    /// `--no-pacing`, `--no-probing` turn parts off).
    public var congestion = CongestionConfiguration.enabled
    public var statsJSONPath: String?

    /// The inputs, picture, encoders and run length the media threads work with.
    public var media = MediaOptions()

    public subscript<T>(dynamicMember keyPath: WritableKeyPath<MediaOptions, T>) -> T {
        get { media[keyPath: keyPath] }
        set { media[keyPath: keyPath] = newValue }
    }

    public subscript<T>(dynamicMember keyPath: KeyPath<MediaOptions, T>) -> T { media[keyPath: keyPath] }

    public init(room: String, uid: String) {
        self.room = room
        self.uid = uid
    }

    /// What each preview and `--to` destination does with feedback.
    public var destinationOptions: DestinationOptions {
        DestinationOptions(
            retransmission: retransmission,
            acceptsUnauthenticatedFeedback: acceptClearFeedback,
            advertisesFeedback: advertiseFeedback || retransmission == .rtx,
            // A receiver of our SDP file may send transport feedback: with RTX (a same-SSRC
            // resend must repeat the original bytes, so it cannot carry a fresh number), on the
            // video port only (audio has a port, so a transport, of its own: one series of
            // numbers across both would look like loss on each).
            transportWideSequenceNumberID: congestion.transportWide && retransmission == .rtx
                ? SendSideBandwidthEstimator.templateID : nil
        )
    }

    /// Where the preview SDP goes.
    public var previewSDPPath: String { sdpPath ?? "\(uid).sdp" }

    /// The SDP file of a static destination: `<uid>-<host>-<port>.sdp`.
    public func sdpPath(for destination: UDPAddress) -> String {
        let host = destination.host.replacingOccurrences(of: ":", with: "_")
        return "\(uid)-\(host)-\(destination.port).sdp"
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
