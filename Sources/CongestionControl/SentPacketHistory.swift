/// What the sender remembers of each packet it stamped with a transport-wide sequence number
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2): when it left, how big it was, and
/// which probe cluster it belonged to, so a transport feedback message (§3.1), which carries
/// only sequence numbers and arrival times, can be turned into `PacketResult`s.
///
/// The 16-bit numbers are unwrapped against the newest one recorded, to the nearest value (a
/// number up to half the space behind is older, one further behind counts as ahead and finds
/// nothing). A fixed ring of
/// `capacity` entries, allocated at init: recording costs no allocation, and a number older
/// than the ring (or never recorded) simply has no result.
struct SentPacketHistory: Sendable {
    /// One sent packet. `cluster` is the probe cluster's id, or -1.
    struct Entry: Sendable, Hashable {
        var sequenceNumber: Int64
        var sendTimeUs: Int64
        var size: Int
        var cluster: Int
    }

    let capacity: Int
    private var entries: [Entry]
    /// The newest unwrapped number recorded, nil before the first.
    private(set) var newest: Int64?

    /// `capacity` packets remembered (libwebrtc keeps 60 s of them; 8192 is over 5 s at
    /// 10 Mbit/s of full packets, far beyond any feedback delay a live stream survives).
    init(capacity: Int = 8192) throws(CongestionControlError) {
        guard capacity > 0 else { throw CongestionControlError.invalid("sent-packet history needs capacity > 0") }
        self.capacity = capacity
        // Int64.min marks an empty slot: no unwrapped number can be that far below the first.
        entries = Array(
            repeating: Entry(sequenceNumber: .min, sendTimeUs: 0, size: 0, cluster: -1),
            count: capacity
        )
    }

    /// The 16-bit `sequenceNumber` on the timeline of the newest one (nearest in modular
    /// distance); the first number ever seen unwraps to itself.
    func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        guard let newest else { return Int64(sequenceNumber) }
        let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: newest)))
        return newest + delta
    }

    /// Remembers a packet sent with transport-wide number `sequenceNumber`.
    mutating func record(sequenceNumber: UInt16, sendTimeUs: Int64, size: Int, cluster: Int = -1) {
        let unwrapped = unwrap(sequenceNumber)
        if newest.map({ unwrapped > $0 }) ?? true { newest = unwrapped }
        entries[slot(unwrapped)] = Entry(
            sequenceNumber: unwrapped,
            sendTimeUs: sendTimeUs,
            size: size,
            cluster: cluster
        )
    }

    /// The packet sent as `sequenceNumber`, nil when it was never recorded or has left the ring.
    func entry(_ sequenceNumber: UInt16) -> Entry? {
        let unwrapped = unwrap(sequenceNumber)
        guard unwrapped != .min else { return nil }
        let entry = entries[slot(unwrapped)]
        return entry.sequenceNumber == unwrapped ? entry : nil
    }

    /// The result a feedback reports for `sequenceNumber` (`arrivalTimeUs` nil: not received).
    func result(_ sequenceNumber: UInt16, arrivalTimeUs: Int64?) -> (result: PacketResult, cluster: Int)? {
        guard let entry = entry(sequenceNumber), entry.sequenceNumber >= 0 else { return nil }
        return (
            PacketResult(
                sequenceNumber: UInt64(entry.sequenceNumber),
                sendTimeUs: entry.sendTimeUs,
                arrivalTimeUs: arrivalTimeUs,
                size: entry.size
            ),
            entry.cluster
        )
    }

    private func slot(_ unwrapped: Int64) -> Int {
        Int(((unwrapped % Int64(capacity)) + Int64(capacity)) % Int64(capacity))
    }
}
