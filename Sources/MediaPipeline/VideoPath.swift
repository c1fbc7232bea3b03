import Media
import RTP

/// A picture's way on the media thread: conversion to the encoder's size (and upright), the
/// requests feedback made of the encoder (key frame, bitrate), the encoder, and the hand-off
/// (`MediaControl.deliver`): packetized and fanned out here for a narrow fan-out, else by the
/// sender thread (`SenderThread`). Times the encoder call alone, and frame in → last packet out
/// for the pictures sent here (the sender thread times those it sends). Owned by the media
/// thread.
public final class VideoPath {
    private(set) var encoder: H264Encoder
    private let converter = VideoConverter()
    private let control: MediaControl
    private(set) var encodeTime = LatencyHistogram()
    /// Frame in → last packet out of the pictures this thread sent itself.
    private(set) var sendLatency = LatencyHistogram()

    init(encoder: H264Encoder, control: MediaControl) {
        self.encoder = encoder
        self.control = control
    }

    /// A capture of another size: the next picture goes to `encoder` (which opens with an IDR
    /// and its own SPS/PPS); the RTP streams and their clocks are the control's, so they go on.
    func replace(_ encoder: H264Encoder) {
        self.encoder = encoder
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
        if control.sender.withLock({ $0.pacedBacklogHoldsVideo() }) {
            control.statistics.withLock { $0.framesHeldByPacer += 1 }
            return
        }
        applyRequests()
        let encodeStart = MonotonicClock.now()
        let encoded = try encoder.encode(frame)
        encodeTime.record(nanoseconds: MonotonicClock.now() &- encodeStart)
        guard let unit = encoded else { return }
        if try control.deliver(video: unit, receivedAt: receivedAt) {
            sendLatency.record(nanoseconds: MonotonicClock.now() &- receivedAt)
        }
        control.statistics.withLock {
            $0.framesOut += 1
            $0.videoBytes += unit.data.count
            if unit.isKeyFrame { $0.keyFrames += 1 }
        }
    }

    /// What receivers' feedback asked of the encoder since the last frame (the sender thread
    /// reads the feedback): an IDR for a picture loss, a new bitrate when their loss moved it.
    private func applyRequests() {
        if control.takeKeyFrameRequest() { encoder.requestKeyFrame() }
        guard let kbps = control.takeBitrateRequest() else { return }
        do {
            try encoder.setBitrate(kbps: kbps)
            control.statistics.withLock { $0.videoBitrateTargetKbps = kbps }
        } catch {
            // Out of the encoder's range: the policy's bounds come from validated options,
            // so this is a bug; keep the current rate rather than stop the stream.
            control.statistics.withLock { $0.bitrateChangesRefused += 1 }
        }
    }

    /// The encoder's first IDR carries these; the SDP's `sprop-parameter-sets` too.
    public func parameterSets() throws -> (sps: [UInt8], pps: [UInt8]) { try encoder.parameterSets() }
}
