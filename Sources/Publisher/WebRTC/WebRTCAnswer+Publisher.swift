import JSEP
import SDP
import SendEngine
import WebRTC

extension WebRTCAnswer.Configuration {
    /// What we send, as both our answers to viewers and our WHIP offer describe it: the
    /// transport's ICE credentials and certificate fingerprint, the sender's cname and SSRCs, the
    /// profile of the stream's real SPS, and our candidates.
    init(
        sender: MediaSender,
        transport: WebRTCTransport,
        options: PublishOptions,
        sps: [UInt8],
        candidates: [ICECandidate]
    ) throws {
        guard sps.count >= 4 else { throw PublishError("no key frame encoded yet") }
        self.init(
            ice: transport.localCredentials,
            fingerprint: try CertificateFingerprint(hashFunction: .sha256, digest: transport.fingerprint.bytes),
            cname: sender.configuration.cname,
            streamID: "\(options.uid)-screen",
            video: Video(
                ssrc: sender.video.ssrc,
                retransmissionSSRC: sender.videoRTXSSRC,
                trackID: "screen-video",
                // profile_idc, constraint flags and level_idc of the stream's real SPS.
                profileLevelID: H264ProfileLevelID(profileIDC: sps[1], constraints: sps[2], levelIDC: sps[3]),
                // The sender's simulcast layers, for our WHIP offer (answers to viewers ignore it).
                simulcast: sender.layers.count > 1
                    ? sender.layers.map {
                        SimulcastLayer(rid: $0.rid ?? "", ssrc: $0.stream.ssrc, retransmissionSSRC: $0.rtxSSRC)
                    } : nil
            ),
            audio: options.hasAudio ? Audio(ssrc: sender.audio.ssrc, trackID: "screen-audio") : nil,
            candidates: candidates,
            headerExtensions: sender.configuration.congestion.transportWide
                ? [HeaderExtensionMapping.transportWideCC] : []
        )
    }
}
