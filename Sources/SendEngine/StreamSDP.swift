import RTP
import SDP

/// Writes the SDP a destination's player opens (RFC 8866): one `m=video` (H.264,
/// packetization-mode 1, profile-level-id read from the real SPS, sprop-parameter-sets) and one
/// `m=audio` (Opus stereo), each with its own `a=crypto` line *inside* the m= section (ffmpeg
/// ignores one at session level and then decodes ciphertext), `a=rtcp`, `a=ssrc … cname:`, and
/// `recvonly` because the file describes what its reader receives (RFC 8866 §6.7.1).
public enum StreamSDP {
    public static func playerFile(
        for destination: Destination,
        sender: MediaSender,
        sps: [UInt8],
        pps: [UInt8],
        opusFEC: Bool = false,
        sessionName: String = "rtc-publisher"
    ) throws -> String {
        let address = destination.address
        let connection = try SDPAddress(address.host)
        let crypto = [SDPCrypto(tag: 1, suite: destination.keys.suite.sdpName, keySalt: destination.keys.keyAndSalt)]
        let cname = sender.configuration.cname
        var video = MediaDescription(
            kind: .video,
            port: UInt16(address.videoRTP.port),
            transport: .rtpSAVP,
            formats: [
                .h264(
                    payloadType: sender.configuration.videoPayloadType,
                    parameters: try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: pps)
                )
            ],
            direction: .recvonly,
            mid: "video",
            rtcp: address.rtcpMux ? nil : SDPRTCPAttribute(port: UInt16(address.videoRTCP.port)),
            rtcpMux: address.rtcpMux,
            crypto: crypto,
            ssrcAttributes: [.cname(ssrc: sender.video.ssrc, cname)]
        )
        addFeedback(to: &video, for: destination, sender: sender)
        var media = [video]
        if let audio = address.audioRTP, let audioRTCP = address.audioRTCP {
            media.append(
                MediaDescription(
                    kind: .audio,
                    port: UInt16(audio.port),
                    transport: .rtpSAVP,
                    formats: [
                        .opus(
                            payloadType: sender.configuration.audioPayloadType,
                            parameters: OpusFormatParameters(usesInbandFEC: opusFEC)
                        )
                    ],
                    direction: .recvonly,
                    mid: "audio",
                    rtcp: address.rtcpMux ? nil : SDPRTCPAttribute(port: UInt16(audioRTCP.port)),
                    rtcpMux: address.rtcpMux,
                    crypto: crypto,
                    ssrcAttributes: [.cname(ssrc: sender.audio.ssrc, cname)]
                )
            )
        }
        let description = SessionDescription(
            origin: .random(address: connection),
            sessionName: sessionName,
            connection: connection,
            media: media
        )
        return try SDPWriter.write(description)
    }
}

extension StreamSDP {
    /// With `advertisesFeedback` (or RTX): RFC 5124 `RTP/SAVPF` and RFC 4585 §4.2 `a=rtcp-fb`
    /// lines for what `MediaSender.pollFeedback` acts on (nack, nack pli, ccm fir, goog-remb);
    /// with RTX, the RFC 4588 §8.1 format (`rtx/90000`, `apt=`) and the RFC 5576 §4.2
    /// `ssrc-group:FID` pairing the video SSRC with the RTX SSRC. Otherwise the section stays
    /// plain `RTP/SAVP`, as ffmpeg (which sends no feedback) is used to.
    static func addFeedback(to media: inout MediaDescription, for destination: Destination, sender: MediaSender) {
        let options = destination.options
        let usesRTX = options.retransmission == .rtx
        guard options.advertisesFeedback || usesRTX else { return }
        let payloadType = sender.configuration.videoPayloadType
        media.transport = .rtpSAVPF
        media.rtcpFeedback = [
            .pictureLossIndication(payloadType: payloadType),
            .fullIntraRequest(payloadType: payloadType),
            .receiverEstimatedMaximumBitrate(payloadType: payloadType),
        ]
        if options.retransmission != .off {
            media.rtcpFeedback.insert(.nack(payloadType: payloadType), at: 0)
        }
        guard usesRTX else { return }
        if let id = destination.congestion.transportWideID {
            // draft-holmer-rmcat-transport-wide-cc-extensions-01 §2.3 and §3: the number we stamp,
            // and the feedback we act on.
            media.attributes.append(SDPAttribute(name: "extmap", value: "\(id) \(RTPTransportSequenceNumber.uri)"))
            media.rtcpFeedback.append(.transportWideCongestionControl(payloadType: payloadType))
        }
        media.formats.append(
            .retransmission(
                payloadType: sender.configuration.feedback.rtxPayloadType,
                associatedPayloadType: payloadType
            )
        )
        media.ssrcGroups = [.flowIdentification(original: sender.video.ssrc, retransmission: sender.videoRTXSSRC)]
        media.ssrcAttributes.append(.cname(ssrc: sender.videoRTXSSRC, sender.configuration.cname))
    }

    /// The description published to the room: codecs, payload types, SSRCs and parameter sets,
    /// but no keys and no address (each subscriber gets its own keys in its own answer). Port 9
    /// (discard) and 0.0.0.0 say "not an address to send to", as RFC 8866 §5.7 allows.
    ///
    /// The video section says what feedback the publisher answers (`RTP/SAVPF`, `a=rtcp-fb`
    /// nack — unless `retransmission` is off —, nack pli, ccm fir, goog-remb), so a subscriber
    /// that can send RTCP feedback knows it may.
    public static func offer(
        sender: MediaSender,
        sps: [UInt8],
        pps: [UInt8],
        audio: Bool,
        retransmission: DestinationOptions.Retransmission = .sameSSRC
    ) throws -> String {
        let any = try SDPAddress("0.0.0.0")
        var media = [
            MediaDescription(
                kind: .video,
                port: 9,
                transport: .rtpSAVP,
                formats: [
                    .h264(
                        payloadType: sender.configuration.videoPayloadType,
                        parameters: try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: pps)
                    )
                ],
                direction: .sendonly,
                mid: "video",
                ssrcAttributes: [.cname(ssrc: sender.video.ssrc, sender.configuration.cname)]
            )
        ]
        let payloadType = sender.configuration.videoPayloadType
        media[0].transport = .rtpSAVPF
        media[0].rtcpFeedback =
            (retransmission == .off ? [] : [.nack(payloadType: payloadType)]) + [
                .pictureLossIndication(payloadType: payloadType),
                .fullIntraRequest(payloadType: payloadType),
                .receiverEstimatedMaximumBitrate(payloadType: payloadType),
            ]
        if audio {
            media.append(
                MediaDescription(
                    kind: .audio,
                    port: 9,
                    transport: .rtpSAVP,
                    formats: [
                        .opus(
                            payloadType: sender.configuration.audioPayloadType,
                            parameters: OpusFormatParameters(usesInbandFEC: false)
                        )
                    ],
                    direction: .sendonly,
                    mid: "audio",
                    ssrcAttributes: [.cname(ssrc: sender.audio.ssrc, sender.configuration.cname)]
                )
            )
        }
        return try SDPWriter.write(
            SessionDescription(
                origin: .random(address: any),
                sessionName: "rtc-publisher",
                connection: any,
                media: media
            )
        )
    }
}
