import ArgumentParser
import ICE
import Publisher

/// How WebRTC viewers (and `--whip`) connect: ICE addresses, ports and servers, the transport
/// policy, the DTLS certificate, and how many subscribers are served at once.
public struct WebRTCArguments: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "WebRTC: gather ICE host candidates only on this address (repeatable).",
            discussion: "Without it every interface but loopback; loopback only when named."
        )
    )
    public var iceAddress: [Parsed<IPAddress>] = []
    @Option(
        help: ArgumentHelp(
            "WebRTC: bind ICE host candidates to this UDP range MIN-MAX, for firewalls and traffic shaping.",
            discussion: "Each viewer (and --whip) takes one port per ICE address; default any port."
        )
    )
    public var icePorts: Parsed<PortRange>?
    @Option(help: "WebRTC: STUN server HOST:PORT (server-reflexive candidates).") public var stun: Parsed<HostPort>?
    @Option(help: "WebRTC: TURN server turn:USER:PASS@HOST:PORT (UDP relay candidates).")
    public var turn: Parsed<ICEAgent.TURNServer>?
    @Option(help: "WebRTC: 'relay' sends media only through --turn (no local address is offered); default 'all'.")
    public var iceTransportPolicy: Parsed<ICETransportPolicy> = "all"
    @Option(
        help: ArgumentHelp(
            "Subscribers served at once (WebRTC and SDES); one more is refused with subscribe-reject.",
            discussion: "Each WebRTC viewer costs a thread, about five descriptors and about 1 MB (Docs/webrtc.md)."
        )
    )
    public var maxViewers = PublishOptions.defaultMaxViewers
    @Option(
        help: ArgumentHelp(
            "WebRTC: video codecs viewers may get, most preferred first (h264, vp8, vp9).",
            discussion:
                "A viewer gets the first its offer has. VP8 and VP9 come from a second encoder on the same "
                + "pictures, running only while such a viewer watches; SDES receivers and WHIP get H.264."
        )
    )
    public var codecs = "h264,vp8,vp9"
    @Option(help: "WebRTC: DTLS certificate (PEM), with --dtls-key; default a fresh ECDSA P-256 one.")
    public var dtlsCert: String?
    @Option(help: "WebRTC: the DTLS certificate's private key (PEM).") public var dtlsKey: String?

    public init() {}
}
