import Glibc
import Media
import RTP
import SendEngine
import Testing

@testable import MediaPipeline

/// Key frames on demand from the room (a member's `{"request": "keyframe"}` signal, a new viewer)
/// go through the same limiter as PLI and FIR. The abuse campaign sent 198 such signals in 10 s
/// and got 198 IDRs, each costing every viewer bitrate.
@Suite("Key-frame requests from the room")
struct KeyFrameRequestTests {
    /// What rtc-publish's two media threads do with key-frame requests, in real time on one
    /// thread: the media thread's encoder at 30 fps (an IDR when `takeKeyFrameRequest` says so,
    /// none periodic), the sender's `pollFeedback` (which grants a coalesced request once due, as
    /// the sender thread does), and a member's signals, three per frame (90 a second) through the
    /// path `RoomPresence.handle(_:lastHeldBackLog:)` takes.
    @Test("90 signaled key-frame requests a second yield one IDR per 500 ms, the rest counted")
    func aSignalFloodIsLimitedLikeAPLIStorm() throws {
        let frameRate = 30
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: .init(cname: "alice_sub"), origin: start)
        let control = MediaControl(sender: sender)
        let source = try SyntheticScreenSource(width: 320, height: 180, frameRate: frameRate)
        let encoder = try H264Encoder(
            .init(width: 320, height: 180, frameRate: frameRate, bitrateKbps: 300, keyFrameInterval: 3600)
        )
        let frames = 3 * frameRate
        var keyFrames = 0
        var requests = 0
        var grantedAtOnce = 0
        for index in 0..<frames {
            let due = start + UInt64(index) * 1_000_000_000 / UInt64(frameRate)
            while MonotonicClock.now() < due { usleep(1000) }
            // The sender thread: a coalesced request falls due.
            let actions = control.sender.withLock { $0.pollFeedback(now: MonotonicClock.now()) }
            if actions.keyFrameRequested { control.requestKeyFrame() }
            // The media thread: the request becomes an IDR at the next encode.
            if control.takeKeyFrameRequest() { encoder.requestKeyFrame() }
            if let unit = try encoder.encode(source.videoFrame(index: index, captureTime: due)) {
                if unit.isKeyFrame { keyFrames += 1 }
                try control.sender.withLock { try $0.send(video: unit) }
            }
            // The member's signals, between frames.
            for _ in 0..<3 {
                requests += 1
                if control.requestKeyFrameThroughLimiter() { grantedAtOnce += 1 }
            }
        }
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        let statistics = control.snapshot().keyFrameRequests
        print(
            "signal flood: \(requests) requests in \(String(format: "%.2f", seconds)) s → \(keyFrames) key frames "
                + "(\(grantedAtOnce) granted at once); \(statistics)"
        )
        // The first frame is an IDR anyway; then one per 500 ms at most: 6 in 3 s, one more for a
        // machine that stretched the run.
        let bound = 1 + Int((seconds / 0.5).rounded(.up))
        #expect(keyFrames >= 4 && keyFrames <= bound, "\(keyFrames) key frames in \(seconds) s (at most \(bound))")
        #expect(statistics.requests == requests && statistics.signaled == requests, "\(statistics)")
        #expect(statistics.coalesced >= requests - bound, "\(statistics)")
        #expect(statistics.granted <= bound, "\(statistics)")
    }
}
