import Foundation
import Media
import RTP
import SRTP
import SendEngine
import TestSupport
import Transport

/// Real x264 access units of the synthetic screen, encoded once for every test in the target:
/// 640x360 at 1.5 Mbit/s, one IDR at the start and none after (a lost packet stays visible).
enum EncodedClip {
    static let frameRate = 30
    static let origin: UInt64 = 1_000_000_000

    static let units: Result<[Media.H264AccessUnit], MediaError> = {
        do throws(MediaError) {
            let source = try SyntheticScreenSource(width: 640, height: 360, frameRate: frameRate)
            let encoder = try H264Encoder(
                .init(width: 640, height: 360, frameRate: frameRate, bitrateKbps: 1500, keyFrameInterval: 3600)
            )
            var units: [Media.H264AccessUnit] = []
            for index in 0..<120 {
                let capture = origin + UInt64(index) * 1_000_000_000 / UInt64(frameRate)
                if let unit = try encoder.encode(source.videoFrame(index: index, captureTime: capture)) {
                    units.append(unit)
                }
            }
            return .success(units)
        } catch {
            return .failure(error)
        }
    }()
}

/// One publisher → (lossy relay) → feedback receiver run over loopback.
struct FeedbackRun {
    var options = DestinationOptions()
    var rtcpMux = true
    var forward = LossyUDPRelay.Impairment.none
    var backward = LossyUDPRelay.Impairment.none
    var seed: UInt64 = 7
    /// Extra milliseconds after the last frame for late NACKs to be answered.
    var tailMilliseconds = 700

    struct Outcome {
        var receiver: FeedbackTestReceiver.Report
        var feedback: FeedbackStatistics
        var forward: LossyUDPRelay.Counts
        var backward: LossyUDPRelay.Counts
        var keyFrameRequests: Int
    }

    /// Sends the clip paced at 12 ms a frame, letting the receiver and the sender's feedback
    /// poll run between frames, then waits out the tail and collects the counts.
    func run() throws -> Outcome {
        let units = try EncodedClip.units.get()
        let sender = try MediaSender(configuration: .init(cname: "feedback"), origin: EncodedClip.origin)
        var receiverConfiguration = FeedbackTestReceiver.Configuration(rtcpMux: rtcpMux)
        if options.retransmission == .rtx {
            receiverConfiguration.rtxPayloadType = sender.configuration.feedback.rtxPayloadType
        }
        let receiver = try FeedbackTestReceiver(configuration: receiverConfiguration)
        let relay = try LossyUDPRelay(
            target: UDPAddress(host: "127.0.0.1", port: receiver.videoPort),
            forward: forward,
            backward: backward,
            seed: seed,
            lifetime: 30
        )
        defer { relay.stop() }
        let destination = try sender.addDestination(
            id: "receiver",
            address: DestinationAddress(
                host: "127.0.0.1",
                videoPort: relay.frontAddress.port,
                audioPort: nil,
                rtcpMux: rtcpMux
            ),
            options: options
        )
        try receiver.setKeys(destination.keys)
        var keyFrameRequests = 0
        for unit in units {
            try sender.send(video: unit)
            receiver.service(milliseconds: 12)
            if sender.pollFeedback(now: MonotonicClock.now()).keyFrameRequested { keyFrameRequests += 1 }
        }
        let end = MonotonicClock.now() + UInt64(tailMilliseconds) * 1_000_000
        while MonotonicClock.now() < end {
            receiver.service(milliseconds: 10)
            if sender.pollFeedback(now: MonotonicClock.now()).keyFrameRequested { keyFrameRequests += 1 }
        }
        return Outcome(
            receiver: receiver.finish(),
            feedback: destination.feedbackStatistics,
            forward: relay.forwardCounts,
            backward: relay.backwardCounts,
            keyFrameRequests: keyFrameRequests
        )
    }
}
