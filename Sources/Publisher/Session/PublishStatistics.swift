import MediaPipeline
import ProcessSupport
import SendEngine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the status line and `--stats-json` report: the media threads' counters
/// (`MediaStatistics`, read through as if they were this struct's own) and the sessions' room,
/// viewers and WHIP. Encoded flat, as one object, so the JSON keys do not depend on which side
/// counts what.
@dynamicMemberLookup
public struct PublishStatistics: Sendable, Codable, Equatable {
    /// The media threads' part, as of the last snapshot.
    public var media = MediaStatistics()
    public var subscribers = 0
    public var signaling = "off"
    /// Each WebRTC viewer's transport, by uid: its state ("ice checking", "dtls-handshake",
    /// "connected", …), path and counters.
    public var webRTCViewers: [String: WebRTCViewerStatistics] = [:]
    /// The WHIP session (`--whip`): state, attempts, resource, the endpoint's RTT, loss and cap.
    public var whip: WHIPStatistics?

    public init() {}

    public subscript<T>(dynamicMember keyPath: KeyPath<MediaStatistics, T>) -> T { media[keyPath: keyPath] }

    private enum CodingKeys: String, CodingKey {
        case subscribers, signaling, webRTCViewers, whip
    }

    public init(from decoder: any Decoder) throws {
        media = try MediaStatistics(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subscribers = try container.decode(Int.self, forKey: .subscribers)
        signaling = try container.decode(String.self, forKey: .signaling)
        webRTCViewers = try container.decode([String: WebRTCViewerStatistics].self, forKey: .webRTCViewers)
        whip = try container.decodeIfPresent(WHIPStatistics.self, forKey: .whip)
    }

    /// The media part's keys and the sessions' in one object (`JSONEncoder` merges the two
    /// keyed containers asked of one encoder).
    public func encode(to encoder: any Encoder) throws {
        try media.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subscribers, forKey: .subscribers)
        try container.encode(signaling, forKey: .signaling)
        try container.encode(webRTCViewers, forKey: .webRTCViewers)
        try container.encodeIfPresent(whip, forKey: .whip)
    }

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
            ? " | target \(new.videoBitrateTargetKbps) kbit/s, VBV \(new.videoVBVBufferKbit) kbit" : ""
        // The cadence once it matters: a still screen, or one sharpening after a change.
        let cadence =
            new.cadence == "changing" && new.framesStill == 0 && new.refreshes == 0
            ? "" : " (\(new.cadence)\(new.lastQuantizer.map { " qp \($0)" } ?? ""))"
        // The frame rate `--content-hint detail|text` holds changed pictures to.
        let governed = new.governedFrameRate.map { " (held to \(fixedDecimal($0, places: 1)) fps)" } ?? ""
        // The second encoders: each codec's rate and viewers while it runs.
        let encoders = new.encoders.enumerated().map { index, encoder -> String in
            guard encoder.running else { return " | \(encoder.codec) off" }
            let before = old.encoders.indices.contains(index) ? old.encoders[index] : EncoderStatistics(codec: "")
            let fps = Double(encoder.frames - before.frames) / s
            let kbps = Double(encoder.bytes - before.bytes) * 8 / s / 1000
            // Its own cadence once a still picture was seen, as H.264's above.
            let state =
                encoder.cadence.map { $0 == "changing" && encoder.stillPictures == 0 ? "" : " (\($0))" } ?? ""
            return
                " | \(encoder.codec) \(fixedDecimal(fps, places: 1)) fps\(state) \(fixedDecimal(kbps, places: 0)) kbit/s"
                + " to \(encoder.viewers) viewer\(encoder.viewers == 1 ? "" : "s")"
        }
        .joined()
        // The lower simulcast layers: each one's rate while someone takes them, the room's
        // viewers on each, and the layers an SFU's estimate made us drop.
        func watchers(_ count: Int) -> String { count > 0 ? " \(count) viewer\(count == 1 ? "" : "s")" : "" }
        let lower = new.layers.enumerated().map { index, layer -> String in
            guard !layer.paused else { return " | \(layer.rid) paused" }
            let before = old.layers.indices.contains(index) ? old.layers[index] : LayerStatistics(rid: "")
            let fps = Double(layer.frames - before.frames) / s
            let kbps = Double(layer.bytes - before.bytes) * 8 / s / 1000
            let state = layer.cadence.map { $0 == "still" ? " (still)" : "" } ?? ""
            return " | \(layer.rid) \(layer.width)x\(layer.height) \(fixedDecimal(fps, places: 1)) fps\(state)"
                + " \(fixedDecimal(kbps, places: 0)) kbit/s\(watchers(layer.viewers))"
        }
        .joined()
        let dropped = new.media.feedback.sorted { $0.key < $1.key }.compactMap { id, statistics in
            statistics.droppedLayers.isEmpty
                ? nil
                : " | \(id) dropped \(statistics.droppedLayers.joined(separator: ",")) (estimate \((statistics.bitrateEstimate ?? 0) / 1000) kbit/s)"
        }
        .joined()
        let layers = (new.layers.isEmpty ? "" : watchers(new.topLayerViewers)) + lower + dropped
        return "fps in \(fixedDecimal(fpsIn, places: 1)) out \(fixedDecimal(fpsOut, places: 1))\(cadence)\(governed)"
            + " | video \(fixedDecimal(vkbps, places: 0)) kbit/s\(layers)\(encoders) | audio \(fixedDecimal(akbps, places: 0)) kbit/s"
            + " | packets \(new.packetsSent) | destinations \(new.destinations) (subscribers \(new.subscribers))"
            + " | dropped \(new.framesDropped)\(new.framesHeldByPacer > 0 ? " held \(new.framesHeldByPacer)" : "")"
            + " | signaling \(new.signaling)\(capture)\(sound)\(whip)\(viewers)\(rate)\(feedback)"
    }

    /// The destination whose receiver reports the most loss (ties: the longest round trip), the
    /// one the status line shows; nil while no receiver has reported.
    public var worstFeedback: (id: String, statistics: FeedbackStatistics)? {
        media.feedback.filter { $0.value.video != nil || $0.value.rtcpPackets > 0 }
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
            fpsIn: Double(media.framesIn - old.framesIn) / s,
            fpsOut: Double(media.framesOut - old.framesOut) / s,
            videoKbps: Double(media.videoBytes - old.videoBytes) * 8 / s / 1000,
            audioKbps: Double(media.audioBytes - old.audioBytes) * 8 / s / 1000,
            totals: self
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// What `PublishSession.run()` returns: the final counters, by reference (see `run()` for why).
public final class PublishResult: Sendable {
    public let statistics: PublishStatistics

    public init(_ statistics: PublishStatistics) { self.statistics = statistics }
}
