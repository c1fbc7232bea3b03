/// Summarises the timecode strips read from a run of decoded pictures: are the frame numbers in
/// order, how many are missing, and at what rate were the frames captured.
public struct TimecodeReport: Sendable, Equatable, CustomStringConvertible {
    public private(set) var pictures = 0
    public private(set) var readable = 0
    public private(set) var firstFrame: UInt32?
    public private(set) var lastFrame: UInt32?
    public private(set) var outOfOrder = 0
    public private(set) var repeated = 0
    /// Readable pictures that showed an earlier frame than their RTP time says: a decoder
    /// concealing a lost packet by repainting from an older picture. Kept out of the order.
    public private(set) var stale = 0
    public private(set) var firstTimeMs: UInt32?
    public private(set) var lastTimeMs: UInt32?

    public init() {}

    /// Adds one decoded picture (its value, or nil when the strip could not be read); a `stale`
    /// picture counts as readable but not towards the order.
    public mutating func add(_ value: TimecodeStrip.Value?, stale isStale: Bool = false) {
        pictures += 1
        guard let value else { return }
        readable += 1
        if isStale {
            stale += 1
            return
        }
        if let last = lastFrame {
            if value.frame == last {
                repeated += 1
            } else if value.frame < last {
                outOfOrder += 1
            }
        }
        if firstFrame == nil {
            firstFrame = value.frame
            firstTimeMs = value.timeMs
        }
        lastFrame = value.frame
        lastTimeMs = value.timeMs
    }

    /// Frames the sender numbered between the first and last seen that never showed up.
    public var missing: Int {
        guard let first = firstFrame, let last = lastFrame, last >= first else { return 0 }
        return max(0, Int(last - first) + 1 - (readable - repeated - stale))
    }

    /// Capture rate implied by the timecodes: frames advanced over capture time elapsed.
    public var captureFrameRate: Double? {
        guard let f0 = firstFrame, let f1 = lastFrame, let t0 = firstTimeMs, let t1 = lastTimeMs, t1 > t0 else {
            return nil
        }
        return Double(f1 &- f0) / (Double(t1 &- t0) / 1000)
    }

    public var description: String {
        guard let first = firstFrame, let last = lastFrame else {
            return "timecodes: none readable in \(pictures) pictures"
        }
        let order = outOfOrder == 0 ? "in order" : "\(outOfOrder) out of order"
        let rate = captureFrameRate.map { String(format: "%.2f", $0) } ?? "?"
        let staleText = stale == 0 ? "" : "\(stale) stale, "
        return "timecodes: \(readable)/\(pictures) pictures readable, frames \(first)…\(last) \(order), "
            + "\(missing) missing, \(repeated) repeated, \(staleText)capture rate \(rate) fps"
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension String {
    /// `String(format:)` without Foundation, for the two decimals a report needs.
    init(format: String, _ value: Double) {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, format, $0) }
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
