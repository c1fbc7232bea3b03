/// One VP9 (layer) frame reassembled from RTP, ready for a decoder when `isComplete`.
public struct VP9Frame: Sendable, Hashable {
    public var timestamp: UInt32
    /// The descriptor's PictureID, if the frame's first packet that arrived had one.
    public var pictureID: UInt16?
    public var data: [UInt8]
    /// The start packet's descriptor said so (`VP9PayloadDescriptor.isKeyFrame`: P=0, D=0).
    public var isKeyFrame: Bool
    /// False when the start (B) or a later packet was lost, the frame ended without its E
    /// packet, or a packet of it was malformed.
    public var isComplete: Bool
    /// The frame's last packet carried the marker bit: the end of the picture (with one spatial
    /// layer, every frame's).
    public var endsPicture: Bool
    /// The start packet's layer indices, if it had any (L=1).
    public var layerIndices: VP9PayloadDescriptor.LayerIndices?
    /// The scalability structure the start packet carried (V=1), usually on key frames.
    public var scalabilityStructure: VP9PayloadDescriptor.ScalabilityStructure?

    public init(
        timestamp: UInt32,
        pictureID: UInt16?,
        data: [UInt8],
        isKeyFrame: Bool,
        isComplete: Bool,
        endsPicture: Bool,
        layerIndices: VP9PayloadDescriptor.LayerIndices? = nil,
        scalabilityStructure: VP9PayloadDescriptor.ScalabilityStructure? = nil
    ) {
        self.timestamp = timestamp
        self.pictureID = pictureID
        self.data = data
        self.isKeyFrame = isKeyFrame
        self.isComplete = isComplete
        self.endsPicture = endsPicture
        self.layerIndices = layerIndices
        self.scalabilityStructure = scalabilityStructure
    }

    /// The frame's resolution from its scalability structure (its spatial layer's entry), if
    /// the structure carried resolutions.
    public var resolution: VP9PayloadDescriptor.Resolution? {
        guard let resolutions = scalabilityStructure?.resolutions else { return nil }
        let layer = Int(layerIndices?.spatialID ?? 0)
        return layer < resolutions.count ? resolutions[layer] : nil
    }
}

/// Reassembles RFC 9628 payloads into VP9 frames: the receiving half of `VP9Payloader`, for
/// tests and test receivers.
///
/// RFC 9628 §4.2: a (layer) frame starts with the packet whose descriptor has B=1 and ends with
/// the one that has E=1; all its packets share the timestamp and the PictureID; the marker bit
/// sits on the last packet of a picture (§4.1), which is the end of a frame too. Each descriptor
/// is parsed strictly (`VP9PayloadDescriptor.parse`): a packet whose descriptor announces fields
/// it lacks throws, counts as malformed and makes its frame incomplete, and the depacketizer
/// stays usable.
///
/// A frame is handed out at its E packet, or, incomplete, when a packet shows it is over
/// without one: the marker without E, a new B packet, another timestamp, another PictureID.
public struct VP9Depacketizer: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maximumFrameLength: Int

        /// 16 MiB: far beyond any VP9 frame this project sends.
        public init(maximumFrameLength: Int = 16 << 20) {
            self.maximumFrameLength = maximumFrameLength
        }
    }

    /// Lost, duplicate, late and malformed packets; incomplete frames.
    public typealias Statistics = VPXDepacketizerStatistics

    public let limits: Limits
    public private(set) var statistics = Statistics()
    private var assembly = VPXFrameAssembly()
    /// The start packet's layer indices and SS, kept for the frame being assembled.
    private var openLayerIndices: VP9PayloadDescriptor.LayerIndices?
    private var openStructure: VP9PayloadDescriptor.ScalabilityStructure?

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// True when `payload` starts a VP9 key frame: its descriptor parses, B=1, P=0 and no
    /// inter-layer dependency (D=0 or no layer indices).
    public static func startsKeyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
        guard let (descriptor, _) = try? VP9PayloadDescriptor.parse(payload) else { return false }
        return descriptor.startOfFrame && descriptor.isKeyFrame
    }

    /// Feeds one RTP packet; returns the frames it completed (usually none or one).
    public mutating func push(_ packet: RTPPacket) throws(RTPError) -> [VP9Frame] {
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
    ) throws(RTPError) -> [VP9Frame] {
        guard assembly.admit(sequenceNumber, counting: &statistics) else { return [] }

        let descriptor: VP9PayloadDescriptor
        let length: Int
        do {
            (descriptor, length) = try VP9PayloadDescriptor.parse(payload)
        } catch {
            statistics.malformedPackets += 1
            assembly.markIncomplete()
            throw error
        }
        let data = payload.dropFirst(length)
        let pictureID = descriptor.pictureID?.value

        var completed: [VP9Frame] = []
        if let open = assembly.open,
            open.timestamp != timestamp || descriptor.startOfFrame
                || (pictureID != nil && open.pictureID != nil && pictureID != open.pictureID)
        {
            finish(complete: false, endsPicture: false, into: &completed)
        }
        if assembly.open == nil {
            assembly.begin(
                timestamp: timestamp,
                pictureID: pictureID,
                started: descriptor.startOfFrame,
                isKeyFrame: descriptor.isKeyFrame,
                capacityHint: min(data.count * 8, limits.maximumFrameLength)
            )
            openLayerIndices = descriptor.layerIndices
            openStructure = descriptor.startOfFrame ? descriptor.scalabilityStructure : nil
        }
        do {
            try assembly.append(data, limit: limits.maximumFrameLength, codec: "VP9")
        } catch {
            statistics.malformedPackets += 1
            throw error
        }
        if descriptor.endOfFrame || marker {
            // §4.1: the marker is set only on a packet that ends a frame; without E the frame
            // did not end as the descriptor says a frame ends.
            finish(complete: descriptor.endOfFrame, endsPicture: marker, into: &completed)
        }
        return completed
    }

    /// Hands out what is held: the frame in progress, marked incomplete (its E packet has not
    /// arrived), or nil.
    public mutating func flush() -> VP9Frame? {
        var completed: [VP9Frame] = []
        finish(complete: false, endsPicture: false, into: &completed)
        return completed.first
    }

    private mutating func finish(complete: Bool, endsPicture: Bool, into completed: inout [VP9Frame]) {
        guard let frame = assembly.finish(complete: complete) else { return }
        if !frame.isComplete { statistics.incompleteFrames += 1 }
        completed.append(
            VP9Frame(
                timestamp: frame.timestamp,
                pictureID: frame.pictureID,
                data: frame.data,
                isKeyFrame: frame.isKeyFrame,
                isComplete: frame.isComplete,
                endsPicture: endsPicture,
                layerIndices: openLayerIndices,
                scalabilityStructure: openStructure
            )
        )
        openLayerIndices = nil
        openStructure = nil
    }
}
