import Foundation
import Media
import RTP
import SendEngine
import TestSupport
import Testing
import Transport

@testable import MediaPipeline

/// The sender thread sleeps in `poll` until feedback arrives or one of the sender's timers falls
/// due; it no longer ticks every 20 ms. A key-frame request the limiter held back must still be
/// granted when its interval ends.
@Suite("Sender thread timers", .serialized)
struct SenderThreadTimerTests {
    @Test("a PLI held back by the limiter is granted when its interval ends, with no housekeeping tick")
    func heldBackPictureLossWakesTheThread() throws {
        let interval: UInt64 = 150_000_000
        var configuration = MediaSender.Configuration(cname: "timers")
        configuration.feedback.keyFrameInterval = interval
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: configuration, origin: start)
        let receiver = try FeedbackTestReceiver(configuration: .init(rtcpMux: false))
        let destination = try sender.addDestination(
            id: "timers",
            address: DestinationAddress(host: "127.0.0.1", videoPort: receiver.videoPort, audioPort: nil)
        )
        try receiver.setKeys(destination.keys)
        let control = MediaControl(sender: sender)
        // Housekeeping an hour apart: only the limiter's own due time can wake the thread.
        let thread = SenderThread(control: control, housekeepingInterval: 3_600_000_000_000)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? thread.run()
            done.signal()
        }
        defer {
            control.outbox.close()
            done.wait()
        }

        // A key frame and its SR, so the receiver knows the SSRC and where feedback goes.
        let encoder = try H264Encoder(.init(width: 320, height: 180))
        let source = try SyntheticScreenSource(width: 320, height: 180)
        let unit = try #require(try encoder.encode(source.videoFrame(index: 0, captureTime: start)))
        let keyFrameSent = MonotonicClock.now()
        #expect(try control.deliver(video: unit, receivedAt: keyFrameSent))
        receiver.service(milliseconds: 50)
        // The key frame just sent opened an interval: this PLI is held back until it ends.
        receiver.sendPictureLossIndication()
        let granted = waitForKeyFrameRequest(control, seconds: 2)
        let elapsed = try #require(granted.map { $0 - keyFrameSent }, "the held-back PLI was never granted")
        #expect(elapsed >= interval, "granted \(elapsed / 1_000_000) ms after the key frame")
        #expect(elapsed < interval + 1_000_000_000, "granted \(elapsed / 1_000_000) ms after the key frame")
        #expect(sender.keyFrameRequestStatistics.coalesced == 1)
    }

    /// Polls the control's key-frame request every 2 ms; the time it was first seen set.
    private func waitForKeyFrameRequest(_ control: MediaControl, seconds: Double) -> UInt64? {
        let end = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < end {
            if control.takeKeyFrameRequest() { return MonotonicClock.now() }
            usleep(2_000)
        }
        return nil
    }
}
