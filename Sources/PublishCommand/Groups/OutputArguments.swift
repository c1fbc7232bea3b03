import ArgumentParser
import SRTP
import Transport

/// Where the stream goes besides the room and how its packets look: the local preview, static
/// `--to` destinations and their SDP files, the SRTP suite and the MTU; the status file and
/// the log's detail.
public struct OutputArguments: ParsableArguments {
    @Option(help: "SRTP suite: AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AEAD_AES_128_GCM.")
    public var srtpSuite = Parsed<SRTPSuite>(argument: SRTPSuite.default.sdpName)
    @Option(help: "Largest UDP payload in bytes (RTP header + payload + SRTP tag).") public var mtu = 1200
    @Flag(help: "No local preview; send only to subscribers and --to destinations.") public var noPreview = false
    @Option(help: "Preview destination HOST:VIDEOPORT (audio on VIDEOPORT + 2).")
    public var preview: Parsed<UDPAddress> = "127.0.0.1:5004"
    @Option(help: "Preview SDP file (default <uid>.sdp).") public var sdp: String?
    @Option(help: "Static destination HOST:PORT (video PORT, audio PORT+2), own keys and SDP; repeatable.")
    public var to: [Parsed<UDPAddress>] = []
    @Option(help: "A file of static destinations, one HOST:PORT per line (blank lines and # comments ignored).")
    public var toFile: String?
    @Option(help: "Write the status as JSON lines to this file.") public var statsJson: String?
    @Flag(help: "Log signaling and lifecycle details.") public var verbose = false

    public init() {}
}
