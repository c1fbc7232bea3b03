import SDP

/// A publisher offer as the lead's pipeline would build it: H.264 + Opus over SRTP to loopback.
enum Fixtures {
    /// A Constrained Baseline level 3.1 SPS (profile_idc 0x42, constraint flags 0xC0, level 0x1F).
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1F, 0x8C, 0x8D, 0x40, 0x50, 0x1E, 0xD0, 0x0F, 0x08, 0x84, 0x6A]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    static let videoKey: [UInt8] = Array(0..<30)
    static let audioKey: [UInt8] = Array(100..<130)

    static func offer() throws -> SessionDescription {
        let h264 = try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: pps)
        return SessionDescription(
            origin: SDPOrigin(sessionID: 4_242_424_242, sessionVersion: 1),
            sessionName: "rtc-publisher",
            connection: .ipv4Loopback,
            media: [
                MediaDescription(
                    kind: .video,
                    port: 5004,
                    transport: .rtpSAVP,
                    formats: [.h264(payloadType: 96, parameters: h264)],
                    direction: .sendonly,
                    mid: "video",
                    rtcp: SDPRTCPAttribute(port: 5005),
                    crypto: [SDPCrypto(tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: videoKey)],
                    ssrcAttributes: [.cname(ssrc: 305_419_896, "alice_sub")]
                ),
                MediaDescription(
                    kind: .audio,
                    port: 5006,
                    transport: .rtpSAVP,
                    formats: [.opus(payloadType: 97, parameters: OpusFormatParameters(usesInbandFEC: true))],
                    direction: .sendonly,
                    mid: "audio",
                    rtcp: SDPRTCPAttribute(port: 5007),
                    crypto: [SDPCrypto(tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: audioKey)],
                    ssrcAttributes: [.cname(ssrc: 2_271_560_481, "alice_sub")]
                ),
            ]
        )
    }

    /// The exact text `offer()` must produce, written by hand from RFC 8866 §5, RFC 6184 §8.1,
    /// RFC 7587 §7, RFC 4568 §9.1, RFC 3605 and RFC 5576.
    static let offerText = [
        "v=0",
        "o=- 4242424242 1 IN IP4 127.0.0.1",
        "s=rtc-publisher",
        "c=IN IP4 127.0.0.1",
        "t=0 0",
        "m=video 5004 RTP/SAVP 96",
        "a=rtpmap:96 H264/90000",
        "a=fmtp:96 packetization-mode=1;profile-level-id=42c01f;sprop-parameter-sets=Z0LAH4yNQFAe0A8IhGo=,aM48gA==",
        "a=mid:video",
        "a=sendonly",
        "a=rtcp:5005",
        "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd",
        "a=ssrc:305419896 cname:alice_sub",
        "m=audio 5006 RTP/SAVP 97",
        "a=rtpmap:97 opus/48000/2",
        "a=fmtp:97 minptime=10;useinbandfec=1;sprop-stereo=1;stereo=1",
        "a=mid:audio",
        "a=sendonly",
        "a=rtcp:5007",
        "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CB",
        "a=ssrc:2271560481 cname:alice_sub",
    ].map { $0 + "\r\n" }.joined()
}
