import Cadence
import Media
import SendEngine
import Testing
import Transport
import VPX

@testable import MediaPipeline

/// A still screen costs nothing on the second encoder either (Docs/cadence.md): the media
/// thread's `VideoPath` with a real x264 for an H.264 viewer and a real libvpx for a VP8 group's
/// viewer, each a real `MediaSender` sending to a loopback socket, its capture clock simulated at
/// 30 fps: 4 s of a moving 640x360 screen, then 20 s of a still one, with a key-frame request
/// from the VP8 viewer 10 s into the still part.
@Suite("A codec group's own cadence")
struct CodecGroupCadenceTests {
    @Test("VP8 converges on its own, repeats once a second with every block skipped; its key frame is its own")
    func stillScreenOnTheSecondEncoder() throws {
        let start = MonotonicClock.now()
        let sink = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let address = try DestinationAddress(host: "127.0.0.1", videoPort: Int(sink.localAddress.port), audioPort: nil)
        let sender = try MediaSender(configuration: .init(cname: "h264"), origin: start)
        try sender.addDestination(
            id: "h264-viewer",
            address: address,
            options: DestinationOptions(asksForKeyFrames: true)
        )
        let control = MediaControl(sender: sender)
        let group = try control.group(for: .vp8) {
            var configuration = MediaSender.Configuration(cname: "vp8")
            configuration.videoCodec = .vp8
            return try MediaSender(configuration: configuration, origin: start)
        }
        _ = try group.sender.withLock {
            try $0.addDestination(
                id: "vp8-viewer",
                address: address,
                options: DestinationOptions(asksForKeyFrames: true)
            )
        }
        let encoder = try H264Encoder(
            .init(width: 640, height: 360, frameRate: 30, bitrateKbps: 1000, keyFrames: .onRequest, screenContent: true)
        )
        let path = VideoPath(encoder: encoder, control: control, contentHint: .detail)
        let source = try SyntheticScreenSource(width: 640, height: 360, frameRate: 30)
        let still = source.videoFrame(index: 4 * 30, captureTime: start)
        struct Tally {
            var h264Frames = 0
            var h264KeyFrames = 0
            var vp8: EncoderStatistics?
        }
        func tally() -> Tally {
            control.statistics.withLock {
                Tally(h264Frames: $0.framesOut, h264KeyFrames: $0.keyFrames, vp8: $0.encoders.first)
            }
        }
        var atStill = Tally()
        var beforeRequest = Tally()
        var afterRequest = Tally()
        for index in 0..<(24 * 30) {
            let t = start + UInt64(index) * 1_000_000_000 / 30
            if index == 4 * 30 { atStill = tally() }
            if index == 14 * 30 {
                beforeRequest = tally()
                group.requests.requestKeyFrame()
            }
            if index == 15 * 30 { afterRequest = tally() }
            var picture = index < 4 * 30 ? source.videoFrame(index: index, captureTime: t) : still
            picture.captureTime = t
            try path.send(picture, receivedAt: t)
        }
        let end = tally()
        let vp8 = try #require(end.vp8)
        let vp8AtStill = try #require(atStill.vp8)
        let vp8Before = try #require(beforeRequest.vp8)
        let vp8After = try #require(afterRequest.vp8)
        print(
            "VP8 group, 20 s still after 4 s moving: \(vp8.frames - vp8AtStill.frames) of 600 still pictures coded "
                + "(\(vp8.refreshes) refreshes, \(vp8.idleRepeats) idle repeats), "
                + "\(vp8.bytes - vp8After.bytes) B in the last 9 s; H.264 \(end.h264Frames - atStill.h264Frames) coded; "
                + "last QP \(vp8.lastQuantizer ?? -1), cadence \(vp8.cadence ?? "-")"
        )
        #expect(vp8.running && vp8.opened == 1 && vp8.failures == 0)
        // Moving: every picture coded by both.
        #expect(vp8AtStill.frames == 4 * 30 && atStill.h264Frames == 4 * 30)
        // Still: refreshes for at most the 2 s bound, twice (after the change, after the key
        // frame), then about one repeat a second; the rest not coded.
        #expect(vp8.frames - vp8AtStill.frames <= 2 * 61 + 22, "\(vp8.frames - vp8AtStill.frames) VP8 pictures")
        #expect(vp8.idleRepeats >= 14)
        #expect(vp8.cadence == "still")
        // Converged at `detail`'s floor for VP8, not at text's.
        #expect(vp8.lastQuantizer == VPXEncoder.detailMinimumQuantizer(for: .vp8))
        // The last 9 s are idle repeats alone: a few hundred bytes each.
        #expect(vp8.bytes - vp8After.bytes < 9 * 2000, "\(vp8.bytes - vp8After.bytes) B in 9 s of idle repeats")
        // The VP8 viewer's key-frame request: a VP8 key frame, and nothing more for H.264.
        #expect(vp8.keyFrames == 2 && vp8After.keyFrames == 2 && vp8Before.keyFrames == 1)
        #expect(end.h264KeyFrames == 1)
        #expect(afterRequest.h264Frames - beforeRequest.h264Frames <= 2, "H.264 coded more for a VP8 key frame")
    }
}

@Suite("Each content hint's quantizer floor per codec")
struct GroupEncoderFloorTests {
    @Test func floors() {
        let table: [(FrameRateGovernor.Hint, VPXEncoder.Codec, Int)] = [
            (.motion, .vp8, 2), (.motion, .vp9, 2),
            (.text, .vp8, 8), (.text, .vp9, 8),
            (.detail, .vp8, 24), (.detail, .vp9, 16),
        ]
        for (hint, codec, floor) in table {
            #expect(GroupEncoders.finestQuantizer(for: codec, hint: hint) == floor, "\(hint) \(codec)")
        }
    }
}
