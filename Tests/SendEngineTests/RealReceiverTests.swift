import Foundation
import Glibc
import Media
import RTP
import SRTP
import SendEngine
import TestSupport
import Testing
import Transport

/// The proof that matters: the synthetic source, encoded by our x264 and Opus wrappers, paced
/// in real time, packetized and SRTP-protected by `MediaSender`, described by `StreamSDP`, is
/// played by a stock ffmpeg 5.1 reading only that SDP.
@Suite struct RealReceiverTests {
    static let seconds = 3
    static let fps = 30

    @Test func ffmpegPlaysOurSRTPStreamFromOurSDP() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: .init(cname: "alice_sub"), origin: start)
        let destination = try sender.addDestination(
            id: "player",
            address: DestinationAddress(host: "127.0.0.1", videoPort: Int(ports[0]), audioPort: Int(ports[1]))
        )

        let source = try SyntheticScreenSource(width: 640, height: 360, frameRate: Self.fps)
        let encoder = try H264Encoder(.init(width: 640, height: 360, frameRate: Self.fps, bitrateKbps: 1200))
        let mixer = try AudioMixer()
        let opus = try OpusEncoder()
        // The first access unit is encoded before anything is sent: its SPS and PPS go in the SDP.
        let first = try #require(try encoder.encode(source.videoFrame(index: 0, captureTime: start)))
        let sps = Array(try #require(first.nalUnits.first { $0.first.map { $0 & 0x1F } == 7 }))
        let pps = Array(try #require(first.nalUnits.first { $0.first.map { $0 & 0x1F } == 8 }))
        let sdpPath = directory.path + "/alice_sub.sdp"
        let sdp = try StreamSDP.playerFile(for: destination, sender: sender, sps: sps, pps: pps)
        try sdp.write(toFile: sdpPath, atomically: true, encoding: .utf8)
        #expect(sdp.components(separatedBy: "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:").count == 3)

        // Receiver first: it binds the SDP's ports; then we send.
        let ffmpeg = try FFmpegRun(
            arguments: [
                "-protocol_whitelist", "file,udp,rtp", "-i", sdpPath,
                "-map", "0:v", "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray",
                directory.path + "/video.gray",
                "-map", "0:v", "-vsync", "passthrough", "-f", "framecrc", directory.path + "/video.crc",
                "-map", "0:a", "-f", "s16le", "-ac", "2", "-ar", "48000", directory.path + "/audio.pcm",
            ],
            directory: directory
        )
        defer { ffmpeg.stop() }
        try ffmpeg.waitUntil(deadlineSeconds: 20) { try ports.allSatisfy { try LoopbackUDPSocket.isTaken(port: $0) } }

        // Paced like a live source: frame i is captured at start + i/fps and sent right away;
        // audio follows in 20 ms packets up to the same instant.
        let frames = Self.seconds * Self.fps
        var audioSamples = 0
        var mixed = MixedFrame()
        var packet = OpusPacket()
        for i in 0..<frames {
            let capture = start + UInt64(i) * 1_000_000_000 / UInt64(Self.fps)
            while MonotonicClock.now() < capture { usleep(1000) }
            let unit =
                i == 0 ? first : try #require(try encoder.encode(source.videoFrame(index: i, captureTime: capture)))
            try sender.send(video: unit)
            let due = (i + 1) * 48_000 / Self.fps
            while audioSamples < due {
                let chunkTime = start + UInt64(audioSamples) * 1_000_000 / 48
                try mixer.push(
                    source.audioChunk(startSample: audioSamples, frameCount: 960, captureTime: chunkTime),
                    from: .app
                )
                audioSamples += 960
                while mixer.mixNext(into: &mixed) {
                    try opus.encode(mixed, into: &packet)
                    try sender.send(audio: packet)
                }
            }
        }
        // ffmpeg reads pending RTCP before pending RTP and a BYE ends its input at once, so the
        // BYEs go only after it has drained its RTP sockets (see SDPTests' interop test).
        try ffmpeg.waitUntil(deadlineSeconds: 20) {
            try ports.allSatisfy { try LoopbackUDPSocket.receiveQueueBytes(port: $0) == 0 }
        }
        sender.sendGoodbye(reason: "end of test")
        let finished = try ffmpeg.waitForExit(deadlineSeconds: 30)
        let log = ffmpeg.standardError
        #expect(finished, "ffmpeg did not end on our BYE:\n\(log)")
        for complaint in ["HMAC mismatch", "non-existing PPS", "Invalid data", "error while decoding"] {
            #expect(!log.contains(complaint), "ffmpeg said '\(complaint)':\n\(log)")
        }
        #expect(destination.statistics.protectFailures == 0 && destination.statistics.sendDrops == 0)
        #expect(destination.statistics.rtcpPackets >= 4, "SR+SDES for both streams at start, BYEs at the end")

        // Video: ≥ 95% of the frames, timecodes in order, frame rate by ffmpeg's timestamps.
        let gray = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/video.gray"))
        let size = 640 * 360
        var report = TimecodeReport()
        [UInt8](gray).withUnsafeBufferPointer { all in
            for f in 0..<(all.count / size) {
                let picture = UnsafeBufferPointer(rebasing: all[(f * size)..<((f + 1) * size)])
                report.add(TimecodeStrip.decode(luma: picture, width: 640, height: 360, stride: 640))
            }
        }
        #expect(report.readable * 100 >= frames * 95, "\(report)")
        #expect(report.outOfOrder == 0 && report.repeated == 0, "\(report)")
        let pts = try String(contentsOfFile: directory.path + "/video.crc", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { Int($0.split(separator: ",")[2].trimmingCharacters(in: .whitespaces)) }
        let timebase = try String(contentsOfFile: directory.path + "/video.crc", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("#tb 0:") }
        let den = try #require(
            timebase.flatMap { $0.split(separator: "/").last }.flatMap {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
        )
        let first_ = try #require(pts.first)
        let last = try #require(pts.last)
        let measured = Double(pts.count - 1) / (Double(last - first_) / den)
        #expect(
            abs(measured - Double(Self.fps)) <= 0.1 * Double(Self.fps),
            "receiver saw \(measured) fps over \(pts.count) frames"
        )

        // Audio: decodes for (nearly) the whole duration sent.
        let pcm = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/audio.pcm"))
        let seconds = Double(pcm.count / 4) / 48_000
        #expect(seconds >= 0.9 * Double(Self.seconds), "audio decoded for \(seconds) s")
        print("real receiver: \(report); \(String(format: "%.2f", measured)) fps by RTP timestamps; audio \(seconds) s")
    }
}
