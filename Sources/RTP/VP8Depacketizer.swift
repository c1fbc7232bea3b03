/// One VP8 frame reassembled from RTP: the frame's bytes as the encoder wrote them, ready for a
/// decoder when `isComplete`.
public struct VP8Frame: Sendable, Hashable {
    public var timestamp: UInt32
    /// The descriptor's PictureID, if the frame's first packet that arrived had one.
    public var pictureID: UInt16?
    public var data: [UInt8]
    /// The frame's first packet said so: P=0 in the VP8 payload header (RFC 7741 §4.3).
    public var isKeyFrame: Bool
    /// False when the start packet or a later packet was lost, the frame ended without its
    /// marker packet, or a packet of it was malformed.
    public var isComplete: Bool

    public init(timestamp: UInt32, pictureID: UInt16?, data: [UInt8], isKeyFrame: Bool, isComplete: Bool) {
        self.timestamp = timestamp
        self.pictureID = pictureID
        self.data = data
        self.isKeyFrame = isKeyFrame
        self.isComplete = isComplete
    }
}

/// Reassembles RFC 7741 payloads into VP8 frames: the receiving half of `VP8Payloader`, for
/// tests and test receivers.
///
/// RFC 7741 §4.4: a frame starts with the packet whose descriptor has S=1 and PID=0, and ends
/// with the packet carrying the RTP marker bit (§4.1); all its packets share the timestamp and
/// the PictureID. Each descriptor is parsed strictly (`VP8PayloadDescriptor.parse`): a packet
/// whose descriptor announces fields it lacks throws, counts as malformed and makes the frame
/// it belongs to incomplete, and the depacketizer stays usable.
///
/// A frame is handed out when its marker packet arrives, or, incomplete, when a packet shows it
/// is over without one: a new start packet, another timestamp, another PictureID.
public struct VP8Depacketizer: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maximumFrameLength: Int

        /// 16 MiB: far beyond any VP8 frame (RFC 6386 caps a picture at 16383x16383).
        public init(maximumFrameLength: Int = 16 << 20) {
            self.maximumFrameLength = maximumFrameLength
        }
    }

    /// Lost, duplicate, late and malformed packets; incomplete frames.
    public typealias Statistics = VPXDepacketizerStatistics

    public let limits: Limits
    public private(set) var statistics = Statistics()
    private var assembly = VPXFrameAssembly()

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// True when `payload` starts a VP8 key frame: its descriptor parses, S=1 and PID=0, and the
    /// P bit (the lowest bit of the first octet after the descriptor, RFC 7741 §4.3) is 0.
    public static func startsKeyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
        guard let (descriptor, length) = try? VP8PayloadDescriptor.parse(payload), descriptor.startsFrame else {
            return false
        }
        return payload[payload.startIndex + length] & 0x01 == 0
    }

    /// Feeds one RTP packet; returns the frames it completed (usually none or one).
    public mutating func push(_ packet: RTPPacket) throws(RTPError) -> [VP8Frame] {
        try push(
            payload: packet.payload[...],
            sequenceNumber: packet.header.sequenceNumber,
            timestamp: packet.header.timestamp,
            marker: packet.header.marker
        )
    }

    /// Feeds one RTP payload with its header fields. A malformed payload throws `RTPError`; the
    /// depacketizer counts it, treats it as a lost packet and stays usable.
    public mutating func push(
        payload: ArraySlice<UInt8>,
        sequenceNumber: UInt16,
        timestamp: UInt32,
        marker: Bool
    ) throws(RTPError) -> [VP8Frame] {
        guard assembly.admit(sequenceNumber, counting: &statistics) else { return [] }

        let descriptor: VP8PayloadDescriptor
        let length: Int
        do {
            (descriptor, length) = try VP8PayloadDescriptor.parse(payload)
        } catch {
            statistics.malformedPackets += 1
            assembly.markIncomplete()
            throw error
        }
        let data = payload.dropFirst(length)
        let pictureID = descriptor.pictureID?.value

        var completed: [VP8Frame] = []
        if let open = assembly.open,
            open.timestamp != timestamp || descriptor.startsFrame
                || (pictureID != nil && open.pictureID != nil && pictureID != open.pictureID)
        {
            finish(complete: false, into: &completed)
        }
        if assembly.open == nil {
            let isKeyFrame = data.first.map { $0 & 0x01 == 0 } ?? false
            assembly.begin(
                timestamp: timestamp,
                pictureID: pictureID,
                started: descriptor.startsFrame,
                isKeyFrame: isKeyFrame,
                capacityHint: min(data.count * 8, limits.maximumFrameLength)
            )
        }
        do {
            try assembly.append(data, limit: limits.maximumFrameLength, codec: "VP8")
        } catch {
            statistics.malformedPackets += 1
            throw error
        }
        if marker {
            finish(complete: true, into: &completed)
        }
        return completed
    }

    /// Hands out what is held: the frame in progress, marked incomplete (its marker packet has
    /// not arrived), or nil.
    public mutating func flush() -> VP8Frame? {
        var completed: [VP8Frame] = []
        finish(complete: false, into: &completed)
        return completed.first
    }

    private mutating func finish(complete: Bool, into completed: inout [VP8Frame]) {
        guard let frame = assembly.finish(complete: complete) else { return }
        if !frame.isComplete { statistics.incompleteFrames += 1 }
        completed.append(
            VP8Frame(
                timestamp: frame.timestamp,
                pictureID: frame.pictureID,
                data: frame.data,
                isKeyFrame: frame.isKeyFrame,
                isComplete: frame.isComplete
            )
        )
    }
}
