import Media
import RTP

/// A picture's way from the media thread to the wire: conversion to the encoder's size (and
/// upright), the encoder, key-frame requests, packetizing and fan-out through the sender, and
/// the two per-frame timings the benchmarks report (frame in → last packet sent; the encoder
/// call alone). Owned by the media thread.
final class VideoPath {
    let encoder: H264Encoder
    private let converter = VideoConverter()
    private let control: MediaControl
    private(set) var latency = LatencyHistogram()
    private(set) var encodeTime = LatencyHistogram()

    init(encoder: H264Encoder, control: MediaControl) {
        self.encoder = encoder
        self.control = control
    }

    var width: Int { encoder.configuration.width }
    var height: Int { encoder.configuration.height }

    /// The picture as the encoder takes it: an upright I420 picture of the right size goes
    /// straight in; anything else through libyuv (NV12 of either range, BGRA, rotation, another
    /// size, letterboxed when the shape differs). Errors here are the picture's fault.
    func prepare(_ raw: RawVideoFrame) throws -> VideoFrame {
        if raw.format == .i420, raw.rotation == .none, raw.width == width, raw.height == height,
            raw.planes.count == 3, raw.strides.count == 3
        {
            return try VideoFrame(
                width: width,
                height: height,
                y: raw.planes[0],
                strideY: raw.strides[0],
                u: raw.planes[1],
                strideU: raw.strides[1],
                v: raw.planes[2],
                strideV: raw.strides[2],
                captureTime: raw.captureTime
            )
        }
        return try converter.convert(raw, width: width, height: height)
    }

    /// Encodes and sends an upright I420 picture, converting it first if its size differs.
    func send(_ picture: VideoFrame, receivedAt: UInt64) throws {
        var frame = picture
        if frame.width != width || frame.height != height {
            frame = try converter.convert(RawVideoFrame(frame), width: width, height: height)
        }
        control.statistics.withLock { $0.framesIn += 1 }
        if control.takeKeyFrameRequest() { encoder.requestKeyFrame() }
        let encodeStart = MonotonicClock.now()
        let encoded = try encoder.encode(frame)
        encodeTime.record(nanoseconds: MonotonicClock.now() &- encodeStart)
        guard let unit = encoded else { return }
        try control.sender.withLock { try $0.send(video: unit) }
        latency.record(nanoseconds: MonotonicClock.now() &- receivedAt)
        control.statistics.withLock {
            $0.framesOut += 1
            $0.videoBytes += unit.data.count
            if unit.isKeyFrame { $0.keyFrames += 1 }
        }
    }

    /// Reads what receivers sent back (RR, NACK, PLI/FIR, REMB; `MediaSender.pollFeedback`),
    /// lets the sender resend what was NACKed, and applies the rest to the encoder: an IDR for
    /// a picture loss, a new bitrate when the receivers' loss moved it. Called between frames
    /// and while waiting for one, so a NACK waits at most ~10 ms for its answer.
    func serviceFeedback(now: UInt64) {
        let actions = control.sender.withLock { $0.pollFeedback(now: now) }
        if actions.keyFrameRequested { control.requestKeyFrame() }
        if let target = actions.targetBitrate {
            let kbps = target / 1000
            do {
                try encoder.setBitrate(kbps: kbps)
                control.statistics.withLock { $0.videoBitrateTargetKbps = kbps }
            } catch {
                // Out of the encoder's range: the policy's bounds come from validated options,
                // so this is a bug; keep the current rate rather than stop the stream.
                control.statistics.withLock { $0.bitrateChangesRefused += 1 }
            }
        }
    }

    /// The encoder's first IDR carries these; the SDP's `sprop-parameter-sets` too.
    func parameterSets() throws -> (sps: [UInt8], pps: [UInt8]) { try encoder.parameterSets() }
}
