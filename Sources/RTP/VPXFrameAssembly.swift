/// What `VP8Depacketizer` and `VP9Depacketizer` share: the sequence-number bookkeeping and the
/// frame being put together.
///
/// Packets are expected in sequence-number order (a jitter buffer's job comes first). A
/// duplicate or a packet older than the last one is ignored; a gap marks the frame being
/// assembled incomplete, since a VP8 or VP9 frame with a hole in it cannot be decoded.
struct VPXFrameAssembly: Sendable {
    /// The frame being assembled.
    struct Open: Sendable {
        var timestamp: UInt32
        var pictureID: UInt16?
        var data: [UInt8]
        var isKeyFrame: Bool
        /// It began with its start packet and nothing of it has gone missing so far.
        var isComplete: Bool
    }

    enum Arrival {
        case duplicate
        case late
        /// In order, after `lost` missing packets.
        case next(lost: Int)
    }

    private var lastSequenceNumber: UInt16?
    var open: Open?

    mutating func arrive(_ sequenceNumber: UInt16) -> Arrival {
        guard let last = lastSequenceNumber else {
            lastSequenceNumber = sequenceNumber
            return .next(lost: 0)
        }
        let distance = sequenceNumber &- last
        if distance == 0 { return .duplicate }
        if distance >= 0x8000 { return .late }
        lastSequenceNumber = sequenceNumber
        return .next(lost: Int(distance) - 1)
    }

    /// Counts `sequenceNumber`'s arrival in `statistics`: false for a duplicate or a late
    /// packet (ignored); after a gap the open frame is incomplete.
    mutating func admit(_ sequenceNumber: UInt16, counting statistics: inout VPXDepacketizerStatistics) -> Bool {
        switch arrive(sequenceNumber) {
        case .duplicate:
            statistics.duplicatePackets += 1
            return false
        case .late:
            statistics.latePackets += 1
            return false
        case .next(let lost):
            if lost > 0 {
                statistics.lostPackets += lost
                markIncomplete()
            }
            return true
        }
    }

    mutating func markIncomplete() {
        open?.isComplete = false
    }

    /// Opens a frame; `started` says whether this packet is the frame's start.
    mutating func begin(timestamp: UInt32, pictureID: UInt16?, started: Bool, isKeyFrame: Bool, capacityHint: Int) {
        var data: [UInt8] = []
        data.reserveCapacity(capacityHint)
        open = Open(
            timestamp: timestamp,
            pictureID: pictureID,
            data: data,
            isKeyFrame: started && isKeyFrame,
            isComplete: started
        )
    }

    /// Appends a packet's frame bytes; past `limit` the frame's bytes are dropped and it is
    /// marked incomplete.
    mutating func append(_ bytes: ArraySlice<UInt8>, limit: Int, codec: String) throws(RTPError) {
        guard var frame = open else { return }
        open = nil  // keep the array uniquely referenced while appending
        guard frame.data.count + bytes.count <= limit else {
            frame.data = []
            frame.isComplete = false
            open = frame
            throw RTPError(
                .tooLarge,
                "\(codec) frame at timestamp \(frame.timestamp) would exceed \(limit) bytes; its bytes are dropped"
            )
        }
        frame.data.append(contentsOf: bytes)
        open = frame
    }

    /// Takes the open frame, complete only if it was so far and `complete` says it ended well.
    mutating func finish(complete: Bool) -> Open? {
        guard var frame = open else { return nil }
        open = nil
        frame.isComplete = frame.isComplete && complete
        return frame
    }
}

/// What `VP8Depacketizer` and `VP9Depacketizer` count.
public struct VPXDepacketizerStatistics: Sendable, Hashable {
    /// Packets missing from the sequence-number series.
    public var lostPackets = 0
    /// Same sequence number as the previous packet.
    public var duplicatePackets = 0
    /// Sequence number behind the previous packet.
    public var latePackets = 0
    /// Packets rejected as malformed.
    public var malformedPackets = 0
    /// Frames handed out incomplete.
    public var incompleteFrames = 0

    public init() {}
}
