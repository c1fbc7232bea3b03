/// When to probe for more capacity, and at what rate (this project's policy, after libwebrtc's
/// `ProbeController`): the delay-based estimate only grows 8 %/s far from a known capacity, so
/// after a capacity drop it would take over 10 s to find 3 Mbit/s again from 1 (`SimulationTests`).
/// A probe finds out within a round trip.
///
/// - The first probe goes once transport feedback gave an acknowledged rate (the sender asks
///   only then: `SendSideBandwidthEstimator.mayProbe`), at twice the estimate, or at 3× an
///   unknown path's 300 kbit/s start (`firstScale`; libwebrtc probes 3× and 6× its start).
/// - A probe whose result reached 80 % of its rate found room: the next one goes at once, at
///   twice the result (libwebrtc's further probing, kRepeatedProbeMinPercentage 70 %).
/// - Otherwise probing waits `intervalUs` (2 s), and after a decrease `afterDecreaseUs` (1 s;
///   libwebrtc probes an application-limited link every 5 s), so that the decreases of the
///   sawtooth near a known capacity do not keep pushing the next probe out. A probe costs a few
///   tens of milliseconds of queue on a full link.
///   Decision D26 (Docs/congestion.md): probes 2 s apart, 1 s after a decrease.
/// - No probe while the estimate is within 5 % of the ceiling, nor while one is in flight
///   (its result, or 1 s, ends it).
struct ProbeController: Sendable {
    var intervalUs: Int64
    /// How long a decrease holds probing off, µs.
    var afterDecreaseUs: Int64
    /// The highest rate worth probing for (the encoder's ceiling), bits per second.
    var maximum: Int
    /// What the first probe multiplies, instead of 2: 3 from an unknown path's start
    /// (libwebrtc's first exponential probe is 3× its start rate), so that a fast path is found
    /// in a few round trips and a small probe's few packets do not decide it.
    /// Decision D33 (Docs/congestion.md): an unknown path starts at 300 kbit/s.
    var firstScale = 2.0
    private(set) var nextProbeUs: Int64 = 0
    private var inFlight: (id: Int, rate: Int, sentUs: Int64)?
    private var nextID = 1

    static let successRatio = 0.8
    static let flightTimeoutUs: Int64 = 1_000_000
    static let headroom = 0.95

    init(maximum: Int, intervalUs: Int64 = 2_000_000, afterDecreaseUs: Int64 = 1_000_000) {
        self.maximum = maximum
        self.intervalUs = intervalUs
        self.afterDecreaseUs = afterDecreaseUs
    }

    /// A probe to send now, (cluster id, rate in bits per second), or nil. It goes at twice
    /// `base` when that is higher than the estimate (the sender passes the link's capacity
    /// estimate), else twice the estimate; whether the ceiling is near is the estimate's
    /// question alone, so a capacity estimate near the ceiling cannot stop probing while the
    /// estimate is far below it.
    /// Decision D25 (Docs/congestion.md): twice the larger of estimate and capacity.
    mutating func probe(at nowUs: Int64, estimate: Int, base: Int = 0) -> (id: Int, rate: Int)? {
        if let flight = inFlight {
            guard nowUs - flight.sentUs >= Self.flightTimeoutUs else { return nil }
            inFlight = nil
            nextProbeUs = max(nextProbeUs, nowUs + intervalUs)
        }
        guard nowUs >= nextProbeUs, Double(estimate) < Self.headroom * Double(maximum) else { return nil }
        let scale = nextID == 1 ? firstScale : 2
        return start(rate: min(Int(scale * Double(max(estimate, base))), maximum), at: nowUs)
    }

    private mutating func start(rate: Int, at nowUs: Int64) -> (id: Int, rate: Int) {
        let id = nextID
        nextID += 1
        inFlight = (id, rate, nowUs)
        return (id, rate)
    }

    /// Whether cluster `id`, the one in flight, came back at 80 % of its rate or more: the link
    /// was not full at that rate.
    func foundRoom(_ rate: Int, cluster id: Int) -> Bool {
        guard let flight = inFlight, flight.id == id else { return false }
        return Double(rate) >= Self.successRatio * Double(flight.rate)
    }

    /// Cluster `id` measured `rate`: probe again at once if it found room.
    mutating func record(result rate: Int, cluster id: Int, at nowUs: Int64) {
        guard inFlight?.id == id else { return }
        let room = foundRoom(rate, cluster: id)
        inFlight = nil
        nextProbeUs = room ? nowUs : nowUs + intervalUs
    }

    /// The estimate went down (over-use or loss): no probe for an interval.
    mutating func recordDecrease(at nowUs: Int64) {
        nextProbeUs = max(nextProbeUs, nowUs + afterDecreaseUs)
    }
}
