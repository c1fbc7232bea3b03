import Foundation
import Media
import TestSupport
import Testing

/// A stock ffmpeg playing one SDP file, keeping what a viewer would see: every decoded picture
/// (gray, for the timecode strip), its timestamps (framecrc), and the decoded audio.
final class Receiver {
    let ffmpeg: FFmpegRun
    let base: String
    let width: Int
    let height: Int

    init(sdp: String, width: Int, height: Int, directory: TemporaryDirectory, name: String) throws {
        base = directory.path + "/" + name
        self.width = width
        self.height = height
        ffmpeg = try FFmpegRun(
            arguments: Self.arguments(sdp: sdp, base: base),
            directory: directory
        )
    }

    /// Waits until ffmpeg listens on `port` (its video port); returns whether that took less than
    /// `seconds` (a publisher's `--start-delay`: was the player there for the first packet?).
    func listens(on port: Int, within seconds: Double) throws -> Bool {
        let start = Date()
        while !udpPortIsBound(port) {
            guard Date().timeIntervalSince(start) < 20 else {
                throw InteropFailure("ffmpeg did not listen on UDP \(port) within 20 s: \(ffmpeg.standardError)")
            }
            usleep(10_000)
        }
        return Date().timeIntervalSince(start) < seconds
    }

    /// The ffmpeg command line, shared with `--play` commands (`{sdp}` stands for the file).
    static func arguments(sdp: String, base: String) -> [String] {
        [
            "-protocol_whitelist", "file,udp,rtp", "-i", sdp,
            "-map", "0:v", "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", base + ".gray",
            "-map", "0:v", "-vsync", "passthrough", "-f", "framecrc", base + ".crc",
            "-map", "0:a", "-f", "s16le", "-ac", "2", "-ar", "48000", base + ".pcm",
        ]
    }

    static func playCommand(base: String) -> String {
        "ffmpeg -hide_banner -nostdin -v error " + arguments(sdp: "{sdp}", base: base).joined(separator: " ")
    }
}

/// What a receiver got, read from its output files.
struct Received: CustomStringConvertible {
    var timecodes = TimecodeReport()
    var framesByTimestamp = 0
    var framesPerSecond: Double?
    var audioSeconds = 0.0
    /// Presentation times of the decoded pictures, in seconds from the first.
    var pictureTimes: [Double] = []
    /// The decoded audio, 48 kHz stereo interleaved.
    var pcm: [Int16] = []
    /// Each decoded picture's timecode (nil where unreadable), in decoding order, aligned with
    /// ``pictureTimes`` when every picture has a timestamp.
    var values: [TimecodeStrip.Value?] = []

    init(base: String, width: Int, height: Int, sourceWidth: Int? = nil) throws {
        let size = width * height
        let gray = (try? Data(contentsOf: URL(fileURLWithPath: base + ".gray"))) ?? Data()
        var report = TimecodeReport()
        var values: [TimecodeStrip.Value?] = []
        [UInt8](gray).withUnsafeBufferPointer { all in
            for f in 0..<(all.count / size) {
                let picture = UnsafeBufferPointer(rebasing: all[(f * size)..<((f + 1) * size)])
                let value = TimecodeStrip.decode(
                    luma: picture,
                    width: width,
                    height: height,
                    stride: width,
                    sourceWidth: sourceWidth
                )
                report.add(value)
                values.append(value)
            }
        }
        timecodes = report
        self.values = values
        let crc = (try? String(contentsOfFile: base + ".crc", encoding: .utf8)) ?? ""
        let lines = crc.split(separator: "\n")
        // "#tb 0: 1/30" or "#tb 0: 1001/30000": ffmpeg picks the time base from the rate it
        // guessed, so both numbers count (seconds per tick = num / den).
        let ticksPerSecond = lines.first { $0.hasPrefix("#tb 0:") }.map { $0.dropFirst(6).split(separator: "/") }
            .flatMap { parts -> Double? in
                guard parts.count == 2, let num = Double(parts[0].trimmingCharacters(in: .whitespaces)),
                    let den = Double(parts[1].trimmingCharacters(in: .whitespaces)), num > 0
                else { return nil }
                return den / num
            }
        let pts = lines.filter { !$0.hasPrefix("#") }.compactMap { line -> Int? in
            let fields = line.split(separator: ",")
            return fields.count > 2 ? Int(fields[2].trimmingCharacters(in: .whitespaces)) : nil
        }
        framesByTimestamp = pts.count
        if let ticksPerSecond, let first = pts.first, let last = pts.last, last > first {
            framesPerSecond = Double(pts.count - 1) / (Double(last - first) / ticksPerSecond)
            pictureTimes = pts.map { Double($0 - first) / ticksPerSecond }
        }
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: base + ".pcm"))) ?? Data()
        audioSeconds = Double(bytes.count / 4) / 48_000
        pcm = bytes.withUnsafeBytes { raw in
            (0..<(bytes.count / 2)).map {
                Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self))
            }
        }
    }

    /// Level of one frequency in one channel (0 left, 1 right) relative to full scale: a single
    /// DFT bin (Goertzel) over the whole decoded audio, so a tone that survived resampling and
    /// mixing stands out and a frequency nobody sent stays near zero.
    func toneLevel(hertz: Double, channel: Int) -> Double {
        let count = pcm.count / 2
        guard count > 0 else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * hertz / 48_000)
        var (s1, s2) = (0.0, 0.0)
        for i in 0..<count {
            let s0 = Double(pcm[2 * i + channel]) / 32768 + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        return 2 * power.squareRoot() / Double(count)
    }

    /// Largest gap between consecutive pictures, in seconds, and the smallest step.
    var largestGap: Double { zip(pictureTimes, pictureTimes.dropFirst()).map { $1 - $0 }.max() ?? 0 }
    /// The typical spacing of pictures in seconds (1/30 for a 30 fps stream): unlike the
    /// average rate, frames a loaded machine dropped do not move it, while wrong timestamps do
    /// (seed 001's bug makes it a second).
    var medianStep: Double {
        let steps = zip(pictureTimes, pictureTimes.dropFirst()).map { $1 - $0 }.sorted()
        return steps.isEmpty ? 0 : steps[steps.count / 2]
    }
    var smallestStep: Double { zip(pictureTimes, pictureTimes.dropFirst()).map { $1 - $0 }.min() ?? 0 }
    func stepsShorter(than seconds: Double) -> Int {
        zip(pictureTimes, pictureTimes.dropFirst()).filter { $1 - $0 < seconds }.count
    }

    /// Consecutive pictures as (time step the receiver saw, frames the timecode advanced, capture
    /// time the timecode advanced): what the clock checks compare. Empty unless every decoded
    /// picture has a timestamp.
    private var steps: [(seconds: Double, frames: Int, captureSeconds: Double)] {
        guard values.count == pictureTimes.count else { return [] }
        var result: [(Double, Int, Double)] = []
        for i in 1..<max(1, values.count) {
            guard let a = values[i - 1], let b = values[i] else { continue }
            let frames = Int(b.frame) - Int(a.frame)
            let capture = Double(Int64(b.timeMs) - Int64(a.timeMs)) / 1000
            result.append((pictureTimes[i] - pictureTimes[i - 1], frames, capture))
        }
        return result
    }

    /// The spacing per source frame (1/30 s for a 30 fps source), from every pair of pictures:
    /// frames the publisher dropped under load widen a step and count as that many frames, so
    /// this holds on a busy machine, while wrong timestamps (seed 001's bug) move it.
    var medianStepPerFrame: Double {
        let perFrame = steps.filter { $0.frames > 0 }.map { $0.seconds / Double($0.frames) }.sorted()
        return perFrame.isEmpty ? 0 : perFrame[perFrame.count / 2]
    }

    /// The largest difference between the time step the receiver saw and the capture time the
    /// timecodes advanced. The 90 kHz RTP clock carries capture time after the clock rules (which
    /// give a picture more than 100 ms off its stamp its arrival time), so seed 001's one-second
    /// steps or a stuck clock show here.
    var worstClockError: Double {
        steps.map { abs($0.seconds - $0.captureSeconds) }.max() ?? .infinity
    }

    /// How far the receiver's clock ran from the capture clock over the whole stream: wrong
    /// units or a clock that drifts show here even where each step looks plausible.
    var clockDrift: Double {
        guard values.count == pictureTimes.count,
            let first = values.indices.first(where: { values[$0] != nil }),
            let last = values.indices.last(where: { values[$0] != nil }),
            let a = values[first], let b = values[last]
        else { return .infinity }
        let capture = Double(Int64(b.timeMs) - Int64(a.timeMs)) / 1000
        return abs((pictureTimes[last] - pictureTimes[first]) - capture)
    }

    var description: String {
        "\(timecodes); \(framesByTimestamp) frames by timestamp at "
            + "\(framesPerSecond.map { String(format: "%.2f", $0) } ?? "?") fps; audio \(String(format: "%.2f", audioSeconds)) s"
    }
}

/// The publisher's final counters (the last `--stats-json` line): what it sent and what it left
/// out, for the accounting a busy machine's receiver is checked against.
struct PublisherTotals: CustomStringConvertible {
    var framesOut = 0
    var framesDropped = 0
    var framesOverRate = 0
    var audioPackets = 0
    var audioChunksDropped = 0
    var appAudioFramesDropped = 0
    var micAudioFramesDropped = 0
    /// Capture stamps the clock rules replaced (late, bogus, out of order).
    var timestampsRepaired = 0
    /// Key frames the encoder made (the first, requested).
    var keyFrames = 0
    /// Intra-refresh waves for receivers that cannot ask (Docs/cadence.md).
    var refreshWaves = 0
    /// `--content-hint`: changed pictures held back, the mean frame QP, and the frame rate held to.
    var framesGoverned = 0
    var meanQuantizer = 0.0
    var governedFrameRate: Double?

    init(statsFile path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let last = text.split(separator: "\n").last,
            let line = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any],
            let totals = line["totals"] as? [String: Any]
        else { throw InteropFailure("no totals in \(path)") }
        framesOut = totals["framesOut"] as? Int ?? 0
        framesDropped = totals["framesDropped"] as? Int ?? 0
        framesOverRate = totals["framesOverRate"] as? Int ?? 0
        audioPackets = totals["audioPackets"] as? Int ?? 0
        audioChunksDropped = totals["audioChunksDropped"] as? Int ?? 0
        appAudioFramesDropped = totals["appAudioFramesDropped"] as? Int ?? 0
        micAudioFramesDropped = totals["micAudioFramesDropped"] as? Int ?? 0
        timestampsRepaired = totals["timestampsRepaired"] as? Int ?? 0
        keyFrames = totals["keyFrames"] as? Int ?? 0
        refreshWaves = totals["refreshWaves"] as? Int ?? 0
        framesGoverned = totals["framesGoverned"] as? Int ?? 0
        meanQuantizer = Double(totals["quantizerSum"] as? Int ?? 0) / Double(max(1, framesOut))
        governedFrameRate = totals["governedFrameRate"] as? Double
    }

    /// Source pictures the publisher did not send, each counted (late, or over the frame rate).
    var framesLeftOut: Int { framesDropped + framesOverRate }

    var description: String {
        "publisher sent \(framesOut) pictures, left out \(framesDropped) late + \(framesOverRate) over rate; "
            + "\(audioPackets) audio packets, \(audioChunksDropped) capture audio chunks dropped, mixer dropped "
            + "\(appAudioFramesDropped) app and \(micAudioFramesDropped) mic frames; \(timestampsRepaired) stamps repaired"
    }
}

/// What a receiver must see however busy the machine is (issue 21). A loaded machine may make
/// the publisher leave pictures out (a late frame is dropped, never burst), so absolute counts
/// and rates belong in `make bench`; these hold regardless, and each fails on a real bug:
/// - every decoded picture is a whole, readable synthetic screen, in order, none repeated
///   (corruption, reordering, a stuck timecode);
/// - every picture missing between the first and the last was left out by the publisher and
///   counted (`--stats-json`) or never sent by the source, and the receiver decoded every
///   picture and Opus packet the publisher sent (but one picture; unless the receiver started
///   after the stream did): a loss on the wire shows as a difference;
/// - the stream covers the source's frames from `firstFrameBefore` to `lastFrameAfter` (a
///   timecode that stops, or a stream that ends early, cannot);
/// - the median spacing per source frame is a 30th of a second, and no step, nor the whole
///   stream, strays from the capture time by half a second: the 90 kHz clock carries capture
///   time, so seed 001's one-second steps, wrong units or a stuck clock show. (Closer bounds
///   would measure the machine: the clock rules give a picture that arrives over 100 ms off its
///   stamp its arrival time, Docs/clock.md, and a loaded machine makes arrival late.)
func expectIntact(
    _ got: Received,
    _ totals: PublisherTotals,
    firstFrameBefore: UInt32,
    lastFrameAfter: UInt32,
    notSentBySource: Int = 0,
    receiverStartedLate: Bool = false,
    clockTolerance: Double = 0.5,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let context = "\(got); \(totals); clock error \(got.worstClockError) s"
    #expect(got.timecodes.readable == got.timecodes.pictures, "\(context)", sourceLocation: sourceLocation)
    #expect(
        got.timecodes.outOfOrder == 0 && got.timecodes.repeated == 0,
        "\(context)",
        sourceLocation: sourceLocation
    )
    #expect(
        got.timecodes.missing <= totals.framesLeftOut + notSentBySource,
        "missing pictures not accounted for: \(context)",
        sourceLocation: sourceLocation
    )
    if !receiverStartedLate {
        #expect(
            got.timecodes.pictures >= totals.framesOut - 1,
            "pictures lost on the way: \(context)",
            sourceLocation: sourceLocation
        )
    }
    #expect((got.timecodes.firstFrame ?? .max) <= firstFrameBefore, "\(context)", sourceLocation: sourceLocation)
    #expect((got.timecodes.lastFrame ?? 0) >= lastFrameAfter, "\(context)", sourceLocation: sourceLocation)
    #expect(got.worstClockError <= clockTolerance, "\(context)", sourceLocation: sourceLocation)
    #expect(got.clockDrift <= 0.5, "drift \(got.clockDrift) s: \(context)", sourceLocation: sourceLocation)
    #expect(abs(got.medianStepPerFrame * 30 - 1) < 0.05, "\(context)", sourceLocation: sourceLocation)
    // Every 20 ms Opus packet sent was decoded (those sent before a late receiver listened aside).
    let audioSent = Double(totals.audioPackets) * 0.02
    #expect(
        got.audioSeconds <= audioSent + 0.1 && (receiverStartedLate || got.audioSeconds >= audioSent - 0.1),
        "audio: \(context)",
        sourceLocation: sourceLocation
    )
}

/// Whether some socket on this machine is bound to UDP `port` (`/proc/net/udp` and `udp6`): how a
/// test knows the player it started listens before media flows.
func udpPortIsBound(_ port: Int) -> Bool {
    let suffix = ":" + String(format: "%04X", port)
    return ["/proc/net/udp", "/proc/net/udp6"].contains { path in
        guard let table = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return table.split(separator: "\n").dropFirst().contains { line in
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first?.hasSuffix(suffix) == true
        }
    }
}

/// The publisher's second-by-second record (`--stats-json`), one short entry per second, for a
/// failure message: when a receiver saw too little, was it the capture, the rate the estimate
/// gave, the quantizer, or the frame-rate governor?
struct PublisherTimeline: CustomStringConvertible {
    var entries: [String] = []

    init(statsFile path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let totals = record["totals"] as? [String: Any]
            else { continue }
            let time = record["time"] as? Double ?? 0
            let fpsIn = record["fpsIn"] as? Double ?? 0
            let fpsOut = record["fpsOut"] as? Double ?? 0
            let kbps = record["videoKbps"] as? Double ?? 0
            entries.append(
                String(format: "%.0fs in %.0f out %.0f fps %.0f kbit/s", time, fpsIn, fpsOut, kbps)
                    + " target \(totals["videoBitrateTargetKbps"] as? Int ?? -1)"
                    + " qp \(totals["lastQuantizer"] as? Int ?? -1)"
                    + " governed \(totals["framesGoverned"] as? Int ?? -1)"
                    + " \(totals["cadence"] as? String ?? "?")"
                    + Self.estimates(totals["feedback"] as? [String: Any] ?? [:])
            )
        }
    }

    /// Each destination's estimate and how it got there (probes, the delay detector's state).
    private static func estimates(_ feedback: [String: Any]) -> String {
        feedback.keys.sorted().map { id in
            let destination = feedback[id] as? [String: Any] ?? [:]
            let congestion = destination["congestion"] as? [String: Any] ?? [:]
            let estimate = (destination["bitrateEstimate"] as? Int).map { "\($0 / 1000)" } ?? "-"
            let probe = (congestion["lastProbeBitrate"] as? Int).map { "\($0 / 1000)" } ?? "-"
            return " \(id) estimate \(estimate) probes \(congestion["probesSent"] as? Int ?? 0) last \(probe)"
                + " \(congestion["delayState"] as? String ?? "-") overuses \(congestion["overuseEvents"] as? Int ?? 0)"
                + " backoffs \(congestion["queueBackoffs"] as? Int ?? 0)"
        }.joined()
    }

    var description: String { "publisher per second: " + entries.joined(separator: "; ") }
}
