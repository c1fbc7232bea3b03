import RTP
import SystemAudio

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the status line and `--stats-json` report, accumulated by the media loop.
public struct PublishStatistics: Sendable, Codable, Equatable {
    public var framesIn = 0
    public var framesOut = 0
    /// Frames skipped because the host fell behind (the encoder slower than the source, or a
    /// capture process sending faster than it can be encoded).
    public var framesDropped = 0
    /// Captured frames left out to keep the stream at its frame rate (a 60 fps source, a flood).
    public var framesOverRate = 0
    /// Frames not encoded while a receiver's pacer held a backlog (a capacity drop; Docs/congestion.md).
    public var framesHeldByPacer = 0
    /// Captured audio chunks dropped: the mixer fell behind, or refused a chunk.
    public var audioChunksDropped = 0
    /// Audio the mixer could not play, per source, in 48 kHz frames: stamped behind the output
    /// (it came too late) or past a full queue. A busy capture process shows here.
    public var appAudioFramesDropped = 0
    public var micAudioFramesDropped = 0
    public var keyFrames = 0
    /// Key-frame requests (PLI, FIR, signaled) and what the limiter made of them: `coalesced`
    /// are those beyond one key frame per interval.
    public var keyFrameRequests = KeyFrameRequestLimiter.Statistics()
    public var videoBytes = 0
    public var audioBytes = 0
    public var audioPackets = 0
    public var packetsSent = 0
    public var destinations = 0
    public var subscribers = 0
    /// Video capture times the clock rules replaced (bogus, backwards, stuck, jumping).
    public var timestampsRepaired = 0
    public var signaling = "off"
    /// The capture: "off" for files and the test source; with `--ingest` waiting, streaming or
    /// paused; with `--video x11` the display, the target and the grab's costs.
    public var capture = "off"
    public var captureSessions = 0
    /// The X11 capture (`--video x11`): nil for every other input.
    public var screen: ScreenCaptureStatistics?
    /// `--audio system`: each source ("app", "mic") as the sound server delivers it.
    public var systemAudio: [String: SystemAudioSourceStatistics] = [:]
    /// The encoder's video bitrate now (moved by receivers' loss reports and REMB).
    public var videoBitrateTargetKbps = 0
    public var bitrateChangesRefused = 0
    /// What each destination's receiver reported back (RTCP RR, NACK, PLI/FIR, REMB), by id.
    public var feedback: [String: FeedbackStatistics] = [:]
    /// Each WebRTC viewer's transport, by uid: its state ("ice checking", "dtls-handshake",
    /// "connected", …), path and counters.
    public var webRTCViewers: [String: WebRTCViewerStatistics] = [:]
    /// The WHIP session (`--whip`): state, attempts, resource, the endpoint's RTT, loss and cap.
    public var whip: WHIPStatistics?
    /// Encoded frames and audio packets waiting for the sender thread now, and the most ever
    /// (a large room after an IDR shows here, not as dropped frames).
    public var sendQueueDepth = 0
    public var sendQueueDeepest = 0

    public init() {}

    /// One status line from two snapshots `seconds` apart.
    public static func line(from old: PublishStatistics, to new: PublishStatistics, seconds: Double) -> String {
        let s = max(seconds, 0.001)
        let fpsIn = Double(new.framesIn - old.framesIn) / s
        let fpsOut = Double(new.framesOut - old.framesOut) / s
        let vkbps = Double(new.videoBytes - old.videoBytes) * 8 / s / 1000
        let akbps = Double(new.audioBytes - old.audioBytes) * 8 / s / 1000
        let capture = new.capture == "off" ? "" : " | capture \(new.capture)"
        let sound =
            new.systemAudio.isEmpty
            ? ""
            : " | sound "
                + new.systemAudio.sorted { $0.key < $1.key }.map { name, source in
                    let gaps =
                        source.underruns + source.overruns > 0
                        ? " (\(source.underruns) holes, \(source.overruns) overruns)" : ""
                    return source.state == "capturing"
                        ? "\(name) \(fixedDecimal(source.levelDBFS, places: 0)) dBFS "
                            + "\(fixedDecimal(source.latencyMilliseconds, places: 0)) ms\(gaps)"
                        : "\(name) \(source.state)\(gaps)"
                }
                .joined(separator: ", ")
        let feedback = new.worstFeedback.map { " | \($0.id): \($0.statistics.statusText)" } ?? ""
        let viewerStates = new.webRTCViewers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.state)" }
        let viewers = viewerStates.isEmpty ? "" : " | webrtc " + viewerStates.joined(separator: ", ")
        let whip = new.whip.map { " | \($0.statusText)" } ?? ""
        let rate =
            new.videoBitrateTargetKbps > 0 && new.feedback.values.contains(where: { $0.video != nil })
            ? " | target \(new.videoBitrateTargetKbps) kbit/s" : ""
        return "fps in \(fixedDecimal(fpsIn, places: 1)) out \(fixedDecimal(fpsOut, places: 1))"
            + " | video \(fixedDecimal(vkbps, places: 0)) kbit/s | audio \(fixedDecimal(akbps, places: 0)) kbit/s"
            + " | packets \(new.packetsSent) | destinations \(new.destinations) (subscribers \(new.subscribers))"
            + " | dropped \(new.framesDropped)\(new.framesHeldByPacer > 0 ? " held \(new.framesHeldByPacer)" : "")"
            + " | signaling \(new.signaling)\(capture)\(sound)\(whip)\(viewers)\(rate)\(feedback)"
    }

    /// The destination whose receiver reports the most loss (ties: the longest round trip), the
    /// one the status line shows; nil while no receiver has reported.
    public var worstFeedback: (id: String, statistics: FeedbackStatistics)? {
        feedback.filter { $0.value.video != nil || $0.value.rtcpPackets > 0 }
            .max { a, b in
                let (la, lb) = (a.value.video?.fractionLost ?? 0, b.value.video?.fractionLost ?? 0)
                if la != lb { return la < lb }
                return (a.value.video?.roundTripMilliseconds ?? 0) < (b.value.video?.roundTripMilliseconds ?? 0)
            }
            .map { (id: $0.key, statistics: $0.value) }
    }

    /// The `--stats-json` record: counters plus the rates over the last interval.
    public func jsonLine(since old: PublishStatistics, seconds: Double, time: Double) -> String {
        struct Record: Encodable {
            var time: Double
            var fpsIn: Double
            var fpsOut: Double
            var videoKbps: Double
            var audioKbps: Double
            var totals: PublishStatistics
        }
        let s = max(seconds, 0.001)
        let record = Record(
            time: time,
            fpsIn: Double(framesIn - old.framesIn) / s,
            fpsOut: Double(framesOut - old.framesOut) / s,
            videoKbps: Double(videoBytes - old.videoBytes) * 8 / s / 1000,
            audioKbps: Double(audioBytes - old.audioBytes) * 8 / s / 1000,
            totals: self
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// A value shared between the media thread and the async side, behind a lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
