import Foundation
import Glibc
import SDP
import SRTP
import TestSupport
import Testing

/// The real receiver: ffmpeg 5.1 opens the SDP file we write, binds its ports, and decodes the
/// SRTP we send to it. The sender side is hand-rolled RTP (single NAL unit packets, one Opus
/// packet each) so this test depends on nothing but the SDP and SRTP modules.
///
/// ffmpeg only prints stream information after it has probed packets, so the test sends real
/// media and then an SRTCP BYE per stream; with a BYE for every stream ffmpeg's RTP demuxer ends
/// the input and ffmpeg exits by itself. What is asserted: exit status 0, the stream lines ffmpeg
/// derived from our SDP and packets, the exact frame counts (framemd5), and no SRTP or SDP
/// complaint in its log.
@Suite("ffmpeg plays what our SDP describes", .serialized)
struct FFmpegInteropTests {
    enum Variant: String, CaseIterable, Sendable {
        case srtp80 = "AES_CM_128_HMAC_SHA1_80"
        /// With `usesShortSRTCPTagForSHA1_32`: ffmpeg checks SRTCP with a 32-bit tag under this name.
        case srtp32 = "AES_CM_128_HMAC_SHA1_32"
        case plainRTP = "RTP/AVP without crypto"
    }

    static let videoSSRC: UInt32 = 0x1111_2222
    static let audioSSRC: UInt32 = 0x3333_4444
    static let frameCount = 10
    /// An Opus packet: TOC 0xF8 (CELT fullband 20 ms, mono, one frame) and two bytes of frame.
    static let opusPacket: [UInt8] = [0xF8, 0xFF, 0xFE]

    @Test("ffmpeg decodes every frame of our stream", arguments: Variant.allCases)
    func ffmpegDecodes(variant: Variant) throws {
        let directory = try TemporaryDirectory()
        let accessUnits = try Self.encodeTestVideo(in: directory)
        let (sps, pps) = try Self.parameterSets(accessUnits)
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let suite = SRTPSuite(rawValue: variant.rawValue)
        let keys = suite.map { SRTPKeyMaterial.random(for: $0) }

        let description = try Self.playerDescription(
            videoPort: ports[0],
            audioPort: ports[1],
            keys: keys,
            sps: sps,
            pps: pps
        )
        let sdpPath = directory.path + "/stream.sdp"
        try SDPWriter.write(description).write(toFile: sdpPath, atomically: true, encoding: .utf8)

        let ffmpeg = try FFmpegRun(
            arguments: ["-protocol_whitelist", "file,udp,rtp", "-i", sdpPath, "-map", "0", "-f", "framemd5", "-"],
            directory: directory
        )
        defer { ffmpeg.stop() }
        try ffmpeg.waitUntil(deadlineSeconds: 20) { try ports.allSatisfy { try LoopbackUDPSocket.isTaken(port: $0) } }

        let sender = try keys.map {
            try SRTPSession(keys: $0, direction: .outbound, configuration: .init(usesShortSRTCPTagForSHA1_32: true))
        }
        // Interleaved as a live source would send: each video frame, then its two 20 ms of audio.
        let stream = try MediaSender(session: sender)
        for (frame, units) in accessUnits.enumerated() {
            try stream.sendVideoFrame(units, index: frame, ssrc: Self.videoSSRC, to: ports[0])
            for half in 0..<2 {
                try stream.sendAudioPacket(Self.opusPacket, index: 2 * frame + half, ssrc: Self.audioSSRC, to: ports[1])
            }
        }
        // ffmpeg's rtp protocol reads a pending RTCP packet before pending RTP (rtpproto.c,
        // "first try RTCP, then RTP"), and the last stream's BYE ends its input at once. So the
        // BYEs go out only once ffmpeg has read every media packet from its RTP sockets.
        try ffmpeg.waitUntil(deadlineSeconds: 20) {
            try ports.allSatisfy { try LoopbackUDPSocket.receiveQueueBytes(port: $0) == 0 }
        }
        try stream.sendBye(ssrc: Self.videoSSRC, to: ports[0] + 1)
        try stream.sendBye(ssrc: Self.audioSSRC, to: ports[1] + 1)

        let finished = try ffmpeg.waitForExit(deadlineSeconds: 30)
        let log = ffmpeg.standardError
        #expect(finished, "ffmpeg did not end after the BYEs; log:\n\(log)")
        #expect(ffmpeg.exitStatus == 0, "log:\n\(log)")
        #expect(log.contains("Input #0, sdp, from"))
        #expect(log.contains("Stream #0:0: Video: h264 (Constrained Baseline), yuv420p(progressive), 64x64"), "\(log)")
        #expect(log.contains("Stream #0:1: Audio: opus, 48000 Hz, stereo"), "\(log)")
        for complaint in ["HMAC mismatch", "not supported", "Invalid", "non-existing PPS", "error"] {
            #expect(!log.contains(complaint), "ffmpeg said '\(complaint)':\n\(log)")
        }
        let frames = ffmpeg.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.filter { $0.hasPrefix("0,") }.count == Self.frameCount, "video frames")
        #expect(frames.filter { $0.hasPrefix("1,") }.count == 2 * Self.frameCount, "audio frames")
    }

    /// The file a player opens: one crypto line inside each m= section, RTCP on port + 1 (what
    /// ffmpeg uses whatever a=rtcp says), recvonly for a declarative receiver.
    static func playerDescription(
        videoPort: UInt16,
        audioPort: UInt16,
        keys: SRTPKeyMaterial?,
        sps: [UInt8],
        pps: [UInt8]
    ) throws -> SessionDescription {
        let crypto = keys.map { [SDPCrypto(tag: 1, suite: $0.suite.sdpName, keySalt: $0.keyAndSalt)] } ?? []
        let transport = SDPTransport.rtp(encrypted: keys != nil)
        let h264 = try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: pps)
        return SessionDescription(
            origin: .random(),
            sessionName: "rtc-publisher test",
            connection: .ipv4Loopback,
            media: [
                MediaDescription(
                    kind: .video,
                    port: videoPort,
                    transport: transport,
                    formats: [.h264(payloadType: 96, parameters: h264)],
                    direction: .recvonly,
                    rtcp: SDPRTCPAttribute(port: videoPort + 1),
                    crypto: crypto,
                    ssrcAttributes: [.cname(ssrc: videoSSRC, "interop")]
                ),
                MediaDescription(
                    kind: .audio,
                    port: audioPort,
                    transport: transport,
                    formats: [.opus(payloadType: 97, parameters: OpusFormatParameters(usesInbandFEC: true))],
                    direction: .recvonly,
                    rtcp: SDPRTCPAttribute(port: audioPort + 1),
                    crypto: crypto,
                    ssrcAttributes: [.cname(ssrc: audioSSRC, "interop")]
                ),
            ]
        )
    }

    /// Ten 64x64 Constrained Baseline frames from ffmpeg's own libx264, split into access units
    /// of NAL units (no start codes; SEI dropped). Small enough that every NAL fits one packet.
    static func encodeTestVideo(in directory: TemporaryDirectory) throws -> [[[UInt8]]] {
        let path = directory.path + "/test.h264"
        let encoder = try FFmpegRun(
            arguments: [
                "-f", "lavfi", "-i", "testsrc=size=64x64:rate=30", "-frames:v", String(frameCount), "-pix_fmt",
                "yuv420p",
                "-c:v", "libx264", "-profile:v", "baseline", "-preset", "ultrafast", "-tune", "zerolatency", "-qp",
                "40",
                "-f", "h264", "-y", path,
            ],
            directory: directory
        )
        _ = try encoder.waitForExit(deadlineSeconds: 60)
        let stream = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var units: [[UInt8]] = []
        var start: Int?
        var index = 0
        while index + 2 < stream.count {
            if stream[index] == 0, stream[index + 1] == 0, stream[index + 2] == 1 {
                if let begin = start { units.append(Self.trimmingTrailingZeros(stream[begin..<index])) }
                start = index + 3
                index += 3
            } else {
                index += 1
            }
        }
        if let begin = start { units.append(Array(stream[begin...])) }
        var accessUnits: [[[UInt8]]] = []
        var current: [[UInt8]] = []
        for unit in units where unit.first.map({ $0 & 0x1F != 6 }) == true {
            current.append(unit)
            if let type = unit.first.map({ $0 & 0x1F }), type == 1 || type == 5 {
                accessUnits.append(current)
                current = []
            }
        }
        return accessUnits
    }

    static func parameterSets(_ accessUnits: [[[UInt8]]]) throws -> ([UInt8], [UInt8]) {
        let first = try #require(accessUnits.first)
        let sps = try #require(first.first { $0.first.map { $0 & 0x1F } == 7 })
        let pps = try #require(first.first { $0.first.map { $0 & 0x1F } == 8 })
        return (sps, pps)
    }

    private static func trimmingTrailingZeros(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var end = bytes.endIndex
        while end > bytes.startIndex && bytes[end - 1] == 0 { end -= 1 }
        return Array(bytes[bytes.startIndex..<end])
    }
}
