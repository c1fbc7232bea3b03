/// The rate a probe cluster found (libwebrtc's `ProbeBitrateEstimator`, the probing of
/// draft-ietf-rmcat-gcc-02 §5's implementation): a cluster is a short run of packets sent at a
/// rate above the estimate; if the receiver got them as fast as they were sent, the path
/// carries at least that rate.
///
/// Per cluster: send rate = bytes but the last packet's / (last send − first send); receive
/// rate = bytes but the first packet's / (last arrival − first arrival). The result is the
/// smaller of the two; when the receive rate is under 90 % of the send rate the path was
/// saturated, and the result is 95 % of the receive rate (libwebrtc
/// kMinRatioForUnsaturatedLink, kTargetUtilizationFraction). A cluster counts only when at least
/// 80 % of its planned packets and bytes were received, both intervals are positive and at most
/// 1 s, and the receive rate is not above twice the send rate (a measurement artefact).
///
/// A few clusters at a time in a fixed array (a new one replaces the oldest): no allocation.
struct ProbeBitrateEstimator: Sendable {
    /// What the sender planned for a cluster: its id and the least it must deliver to count.
    struct Cluster: Sendable, Hashable {
        var id: Int
        var minimumPackets: Int
        var minimumBytes: Int
        init(id: Int, minimumPackets: Int, minimumBytes: Int) {
            self.id = id
            self.minimumPackets = minimumPackets
            self.minimumBytes = minimumBytes
        }
    }

    private struct Aggregate: Sendable {
        var cluster = Cluster(id: -1, minimumPackets: 0, minimumBytes: 0)
        var packets = 0
        var bytes = 0
        var firstSendUs = Int64.max
        var lastSendUs = Int64.min
        var lastSendSize = 0
        var firstArrivalUs = Int64.max
        var lastArrivalUs = Int64.min
        var firstArrivalSize = 0
        var reported = false
    }

    static let minimumReceivedRatio = 0.8
    static let maximumValidRatio = 2.0
    static let unsaturatedRatio = 0.9
    static let targetUtilization = 0.95
    static let maximumIntervalUs: Int64 = 1_000_000

    private var aggregates = [Aggregate](repeating: Aggregate(), count: 4)
    private var oldest = 0

    init() {}

    /// Starts collecting for `cluster` (the sender calls this when it starts sending it).
    mutating func begin(_ cluster: Cluster) {
        aggregates[oldest] = Aggregate(cluster: cluster)
        oldest = (oldest + 1) % aggregates.count
    }

    /// Adds one received packet of cluster `id`; returns the cluster's rate (bits per second)
    /// the first time it has enough to say, else nil.
    mutating func add(_ result: PacketResult, cluster id: Int) -> Int? {
        guard let arrival = result.arrivalTimeUs,
            let index = aggregates.firstIndex(where: { $0.cluster.id == id && id >= 0 })
        else { return nil }
        var aggregate = aggregates[index]
        aggregate.packets += 1
        aggregate.bytes += result.size
        if result.sendTimeUs < aggregate.firstSendUs { aggregate.firstSendUs = result.sendTimeUs }
        if result.sendTimeUs >= aggregate.lastSendUs {
            aggregate.lastSendUs = result.sendTimeUs
            aggregate.lastSendSize = result.size
        }
        if arrival < aggregate.firstArrivalUs {
            aggregate.firstArrivalUs = arrival
            aggregate.firstArrivalSize = result.size
        }
        aggregate.lastArrivalUs = max(aggregate.lastArrivalUs, arrival)
        defer { aggregates[index] = aggregate }
        guard !aggregate.reported,
            Double(aggregate.packets) >= Self.minimumReceivedRatio * Double(aggregate.cluster.minimumPackets),
            Double(aggregate.bytes) >= Self.minimumReceivedRatio * Double(aggregate.cluster.minimumBytes)
        else { return nil }
        let sendInterval = aggregate.lastSendUs - aggregate.firstSendUs
        let receiveInterval = aggregate.lastArrivalUs - aggregate.firstArrivalUs
        guard sendInterval > 0, sendInterval <= Self.maximumIntervalUs, receiveInterval > 0,
            receiveInterval <= Self.maximumIntervalUs
        else { return nil }
        let sendRate = Double(aggregate.bytes - aggregate.lastSendSize) * 8e6 / Double(sendInterval)
        let receiveRate = Double(aggregate.bytes - aggregate.firstArrivalSize) * 8e6 / Double(receiveInterval)
        guard receiveRate <= Self.maximumValidRatio * sendRate else { return nil }
        aggregate.reported = true
        var rate = min(sendRate, receiveRate)
        if receiveRate < Self.unsaturatedRatio * sendRate { rate = Self.targetUtilization * receiveRate }
        return Int(rate)
    }
}
