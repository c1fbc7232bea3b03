import Foundation
import Media
import RTP
import SendEngine
import TestSupport
import Transport

/// One live run against a GStreamer receiver: the synthetic screen encoded by x264 in real
/// time, sent by `MediaSender` through a `LossyUDPRelay` on the RTP path to `gst-launch-1.0`.
/// RTCP goes both ways directly: our reports from the destination's RTCP socket to
/// GStreamer's RTCP port, GStreamer's RR, NACK and PLI back to that socket.
///
/// Frames are paced at 30 fps by the monotonic clock; between frames the sender's feedback
/// poll runs every 2 ms, as the media loop does, so NACKs are answered within a few ms. A
/// key-frame request from the poll goes to the encoder, as the media loop does it.
final class PeerRun {
    static let width = 640
    static let height = 360
    static let frameRate = 30

    let sender: MediaSender
    let destination: Destination
    let relay: LossyUDPRelay
    let receiver: GStreamerReceiver
    private let encoder: H264Encoder
    private let source: SyntheticScreenSource
    private let start: UInt64
    private let directory: TemporaryDirectory

    /// What happened on our side, frame by frame.
    struct Log {
        var framesSent = 0
        /// Frame indices that were IDRs.
        var keyFrames: [Int] = []
        /// For each poll that asked for a key frame: the index of the frame sent last.
        var keyFrameRequests: [Int] = []
        /// The highest fraction lost any of the receiver's reports gave, and how many
        /// different reports (by extended highest sequence number) arrived.
        var highestFractionLost = 0.0
        var reportsSeen = 0
        private var lastReport: UInt32?

        mutating func record(_ report: ReceiverReportSummary?) {
            guard let report, report.extendedHighestSequenceNumber != lastReport else { return }
            lastReport = report.extendedHighestSequenceNumber
            reportsSeen += 1
            highestFractionLost = max(highestFractionLost, report.fractionLost)
        }
    }

    private(set) var log = Log()

    init(options: DestinationOptions, forward: LossyUDPRelay.Impairment, seed: UInt64) throws {
        directory = try TemporaryDirectory()
        start = MonotonicClock.now()
        sender = try MediaSender(configuration: .init(cname: "gstreamer-peer"), origin: start)
        source = try SyntheticScreenSource(width: Self.width, height: Self.height, frameRate: Self.frameRate)
        // One IDR at the start and none after unless asked for: damage stays visible, and a
        // key frame that comes later is the answer to a PLI.
        encoder = try H264Encoder(
            .init(
                width: Self.width,
                height: Self.height,
                frameRate: Self.frameRate,
                bitrateKbps: 1500,
                keyFrameInterval: 3600
            )
        )
        // GStreamer's ports are chosen first (it binds them when it starts, below): the relay
        // forwards to them, and GStreamer needs the destination's key and RTCP port.
        let receiverPort = Int(try LoopbackUDPSocket.freePortPairs(1)[0])
        relay = try LossyUDPRelay(
            target: UDPAddress(host: "127.0.0.1", port: receiverPort),
            forward: forward,
            seed: seed,
            lifetime: 90
        )
        var address = try DestinationAddress(host: "127.0.0.1", videoPort: relay.frontAddress.port, audioPort: nil)
        // Only RTP goes through the relay; our sender reports go straight to GStreamer.
        address.videoRTCP = try UDPAddress(host: "127.0.0.1", port: receiverPort + 1)
        destination = try sender.addDestination(id: "gstreamer", address: address, options: options)
        receiver = try GStreamerReceiver(
            rtpPort: receiverPort,
            ssrc: sender.video.ssrc,
            keys: destination.keys,
            feedbackPort: destination.localRTCPPort,
            directory: directory
        )
    }

    deinit {
        receiver.stop()
        relay.stop()
    }

    /// Encodes and sends `count` more frames in real time, polling feedback between them.
    func send(frames count: Int) throws {
        for _ in 0..<count {
            let index = log.framesSent
            let capture = start + UInt64(index) * 1_000_000_000 / UInt64(Self.frameRate)
            try pollFeedback(until: capture)
            guard let unit = try encoder.encode(source.videoFrame(index: index, captureTime: capture)) else {
                throw InteropFailure("x264 returned no access unit for frame \(index) (zerolatency holds none)")
            }
            if unit.isKeyFrame { log.keyFrames.append(index) }
            try sender.send(video: unit)
            log.framesSent += 1
        }
    }

    /// Keeps answering feedback (no new frames) for `milliseconds`: late NACKs and reports.
    func drain(milliseconds: Int) throws {
        try pollFeedback(until: MonotonicClock.now() + UInt64(milliseconds) * 1_000_000)
    }

    private func pollFeedback(until deadline: UInt64) throws {
        repeat {
            let now = MonotonicClock.now()
            // The sender reports on the RFC 3550 schedule even between frames.
            sender.sendReportsIfDue(now: now)
            let actions = sender.pollFeedback(now: now)
            if actions.keyFrameRequested {
                log.keyFrameRequests.append(log.framesSent - 1)
                encoder.requestKeyFrame()
            }
            // What the media loop does with a new target (GStreamer's RRs move it).
            if let target = actions.targetBitrate { try encoder.setBitrate(kbps: target / 1000) }
            log.record(destination.feedbackStatistics.video)
            usleep(2000)
        } while MonotonicClock.now() < deadline
    }

    /// The feedback counters of the one destination.
    var feedback: FeedbackStatistics { destination.feedbackStatistics }
}
