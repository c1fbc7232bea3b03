import SDP

/// Checks our own inputs before they meet an offer, so an unusable configuration is reported
/// as ours (`invalidConfiguration`) and never blamed on a subscriber.
enum ConfigurationCheck {
    static func validate(_ configuration: WebRTCAnswer.Configuration) throws {
        guard configuration.video != nil || configuration.audio != nil else {
            throw invalid("the configuration sends neither video nor audio")
        }
        guard configuration.fingerprint.hashFunction == .sha256 else {
            throw invalid("our fingerprint must be sha-256, the hash every WebRTC peer checks (RFC 8827 section 6.5)")
        }
        guard configuration.setup == .active || configuration.setup == .passive else {
            throw invalid("our setup must be active or passive, not \(configuration.setup.rawValue)")
        }
        // RFC 3550 §6.5.1 caps an SDES item at 255 bytes; RFC 5576 `a=ssrc` values are text.
        guard (1...255).contains(configuration.cname.utf8.count), Token.isVisible(configuration.cname) else {
            throw invalid("the cname must be 1 to 255 visible ASCII characters")
        }
        var ids = [configuration.streamID]
        var ssrcs: [UInt32] = []
        if let video = configuration.video {
            ids.append(video.trackID)
            guard !video.codecs.isEmpty, Set(video.codecs).count == video.codecs.count else {
                throw invalid("the video codecs must be one or more distinct codecs")
            }
            ssrcs.append(video.ssrc)
            if let rtx = video.retransmissionSSRC { ssrcs.append(rtx) }
            if let layers = video.simulcast {
                try validateSimulcast(layers, video)
                for layer in layers.dropFirst() {
                    ssrcs.append(layer.ssrc)
                    if let rtx = layer.retransmissionSSRC { ssrcs.append(rtx) }
                }
            }
        }
        if let audio = configuration.audio {
            ids.append(audio.trackID)
            ssrcs.append(audio.ssrc)
        }
        // RFC 8830 §2: msid-id = 1*64token-char.
        for id in ids where !(Token.isToken(id) && id.utf8.count <= 64) {
            throw invalid("msid id \(Excerpt.quoted(id)) is not 1 to 64 token characters (RFC 8830 section 2)")
        }
        guard Set(ids.dropFirst()).count == ids.count - 1 else {
            throw invalid("the video and audio track ids must differ")
        }
        guard Set(ssrcs).count == ssrcs.count else {
            throw invalid("our SSRCs must all differ (RFC 3550 section 8)")
        }
        for candidate in configuration.candidates {
            // What we write must read back as the same candidate.
            guard (try? ICECandidate(attributeValue: candidate.attributeValue)) == candidate else {
                throw invalid(
                    "our candidate \(Excerpt.quoted(candidate.attributeValue)) does not follow RFC 8839 section 5.1"
                )
            }
        }
    }

    /// RFC 8853 layers as `SimulcastLayer` describes them: 1 to 3 (Janus reads three), distinct
    /// rids of RFC 8851 §10 syntax Janus reads whole, the first on the video's own SSRCs, RTX
    /// on every layer or none (one RTX format serves the section).
    private static func validateSimulcast(
        _ layers: [SimulcastLayer],
        _ video: WebRTCAnswer.Configuration.Video
    ) throws {
        guard (1...PublishOffer.maximumSimulcastLayers).contains(layers.count) else {
            throw invalid(
                "simulcast needs 1 to \(PublishOffer.maximumSimulcastLayers) layers, not \(layers.count) "
                    + "(Janus reads three)"
            )
        }
        for layer in layers {
            guard SDPRID.isValidID(layer.rid), layer.rid.utf8.count <= SimulcastLayer.maximumRIDLength else {
                throw invalid(
                    "simulcast rid \(Excerpt.quoted(layer.rid)) is not 1 to \(SimulcastLayer.maximumRIDLength) "
                        + "letters, digits, '-' and '_' (RFC 8851 section 10; Janus reads 15)"
                )
            }
        }
        guard Set(layers.map(\.rid)).count == layers.count else {
            throw invalid("the simulcast rids must all differ: each names one layer")
        }
        guard layers[0].ssrc == video.ssrc, layers[0].retransmissionSSRC == video.retransmissionSSRC else {
            throw invalid("the first simulcast layer must use the video's ssrc and retransmissionSSRC")
        }
        guard layers.allSatisfy({ ($0.retransmissionSSRC == nil) == (video.retransmissionSSRC == nil) }) else {
            throw invalid("every simulcast layer has an RTX SSRC or none does (one RTX format for the section)")
        }
    }

    private static func invalid(_ reason: String) -> JSEPError {
        JSEPError(code: .invalidConfiguration, reason: reason)
    }
}
