/// The VP8 payload descriptor at the start of every VP8 RTP payload, RFC 7741 §4.2:
///
/// ```
///          0 1 2 3 4 5 6 7
///         +-+-+-+-+-+-+-+-+
///         |X|R|N|S|R| PID | (REQUIRED)
///         +-+-+-+-+-+-+-+-+
///    X:   |I|L|T|K| RSV   | (OPTIONAL)
///         +-+-+-+-+-+-+-+-+
///    I:   |M| PictureID   | (OPTIONAL)
///         +-+-+-+-+-+-+-+-+
///         |   PictureID   | (present when M=1: 15 bits in all)
///         +-+-+-+-+-+-+-+-+
///    L:   |   TL0PICIDX   | (OPTIONAL)
///         +-+-+-+-+-+-+-+-+
///    T/K: |TID|Y| KEYIDX  | (OPTIONAL)
///         +-+-+-+-+-+-+-+-+
/// ```
///
/// X: the extension octet follows. N: non-reference frame (may be discarded). S: the first octet
/// of the payload starts a VP8 partition. PID: the partition that octet belongs to (0...7; "MAY
/// be kept at 0 for all packets"). I, L, T, K: PictureID, TL0PICIDX, TID/Y and KEYIDX present;
/// one octet carries TID/Y and KEYIDX whenever T or K is set. R and RSV are reserved: sent as 0,
/// ignored when read (§4.2: "MUST be ignored by the receiver").
public struct VP8PayloadDescriptor: Sendable, Hashable {
    /// N: the frame is not used as a reference by any later frame.
    public var nonReference: Bool
    /// S: the payload's first octet is the start of a VP8 partition.
    public var startOfPartition: Bool
    /// PID: the partition index, 0...7.
    public var partitionIndex: UInt8
    /// I (and M): the running number of the frame.
    public var pictureID: VPXPictureID?
    /// L: TL0PICIDX, the running index of the temporal base layer's frames.
    public var tl0PictureIndex: UInt8?
    /// T: TID, the frame's temporal layer (0...3).
    public var temporalLayer: UInt8?
    /// Y: layer sync, meaningful with T: the frame depends only on the base layer.
    public var layerSync: Bool
    /// K: KEYIDX, the running index of key frames (0...31).
    public var keyIndex: UInt8?
    /// X=1 with I, L, T and K all 0: an extension octet that announces nothing. Legal, and
    /// kept so that such a descriptor's length and bytes come back the same when written.
    public var emptyExtensionOctet: Bool

    public init(
        nonReference: Bool = false,
        startOfPartition: Bool,
        partitionIndex: UInt8 = 0,
        pictureID: VPXPictureID? = nil,
        tl0PictureIndex: UInt8? = nil,
        temporalLayer: UInt8? = nil,
        layerSync: Bool = false,
        keyIndex: UInt8? = nil,
        emptyExtensionOctet: Bool = false
    ) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex & 0x07
        self.pictureID = pictureID
        self.tl0PictureIndex = tl0PictureIndex
        self.temporalLayer = temporalLayer.map { $0 & 0x03 }
        self.layerSync = layerSync
        self.keyIndex = keyIndex.map { $0 & 0x1F }
        self.emptyExtensionOctet = emptyExtensionOctet
    }

    /// The first packet of a frame: S=1 and PID=0 (§4.4: a frame starts there). The VP8 payload
    /// header (the frame's first octets, §4.3) follows its descriptor.
    public var startsFrame: Bool { startOfPartition && partitionIndex == 0 }

    /// X: the extension octet is there.
    var hasExtension: Bool {
        pictureID != nil || tl0PictureIndex != nil || temporalLayer != nil || keyIndex != nil || emptyExtensionOctet
    }

    /// Bytes the descriptor takes.
    public var length: Int {
        guard hasExtension else { return 1 }
        return 2 + (pictureID?.length ?? 0) + (tl0PictureIndex == nil ? 0 : 1)
            + (temporalLayer == nil && keyIndex == nil ? 0 : 1)
    }

    /// The descriptor's bytes (allocates; the payloader writes them in place instead).
    public var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: length)
        result.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            write(to: &writer)
        }
        return result
    }

    func write(to writer: inout ByteWriter) {
        let extended = hasExtension
        var first = partitionIndex & 0x07
        if extended { first |= 0x80 }
        if nonReference { first |= 0x20 }
        if startOfPartition { first |= 0x10 }
        writer.write(first)
        guard extended else { return }
        let hasTK = temporalLayer != nil || keyIndex != nil
        var flags: UInt8 = 0
        if pictureID != nil { flags |= 0x80 }
        if tl0PictureIndex != nil { flags |= 0x40 }
        if temporalLayer != nil { flags |= 0x20 }
        if keyIndex != nil { flags |= 0x10 }
        writer.write(flags)
        pictureID?.write(to: &writer)
        if let tl0PictureIndex { writer.write(tl0PictureIndex) }
        if hasTK {
            var field = (keyIndex ?? 0) & 0x1F
            if let temporalLayer {
                field |= (temporalLayer & 0x03) << 6
                if layerSync { field |= 0x20 }
            }
            writer.write(field)
        }
    }

    /// Reads the descriptor at the start of `payload` and returns it with its length. Every
    /// field a flag announces must be there; a short payload throws `.truncated` naming the field
    /// and its offset. At least one octet of VP8 data must follow (`.invalidVP8Payload`).
    public static func parse(
        _ payload: ArraySlice<UInt8>
    ) throws(RTPError) -> (
        descriptor: VP8PayloadDescriptor, length: Int
    ) {
        let result: Result<(VP8PayloadDescriptor, Int), RTPError> = payload.withUnsafeBytes { raw in
            do throws(RTPError) { return .success(try parse(raw)) } catch { return .failure(error) }
        }
        let (descriptor, length) = try result.get()
        return (descriptor, length)
    }

    static func parse(_ raw: UnsafeRawBufferPointer) throws(RTPError) -> (VP8PayloadDescriptor, Int) {
        var reader = ByteReader(raw, context: "VP8 payload descriptor")
        let first = try reader.readUInt8("first octet (X R N S R PID)")
        var descriptor = VP8PayloadDescriptor(
            nonReference: first & 0x20 != 0,
            startOfPartition: first & 0x10 != 0,
            partitionIndex: first & 0x07
        )
        if first & 0x80 != 0 {
            let flags = try reader.readUInt8("extension octet (I L T K), announced by X=1")
            descriptor.emptyExtensionOctet = flags & 0xF0 == 0
            if flags & 0x80 != 0 {
                descriptor.pictureID = try VPXPictureID.read(&reader)
            }
            if flags & 0x40 != 0 {
                descriptor.tl0PictureIndex = try reader.readUInt8("TL0PICIDX, announced by L=1")
            }
            if flags & 0x30 != 0 {
                let field = try reader.readUInt8("TID/Y/KEYIDX octet, announced by T=1 or K=1")
                if flags & 0x20 != 0 {
                    descriptor.temporalLayer = field >> 6
                    descriptor.layerSync = field & 0x20 != 0
                }
                if flags & 0x10 != 0 {
                    descriptor.keyIndex = field & 0x1F
                }
            }
        }
        guard reader.remaining > 0 else {
            throw RTPError(
                .invalidVP8Payload,
                "VP8 payload: no VP8 data after the \(reader.offset)-byte payload descriptor"
            )
        }
        return (descriptor, reader.offset)
    }
}

/// The first octets of a VP8 frame (RFC 6386 §9.1, RFC 7741 §4.3, where the first three are
/// the "VP8 payload header"): the 3-octet frame tag, and on key frames the start code and the
/// picture size.
///
/// ```
///  frame tag (little-endian, 24 bits): | P (1) | VER (3) | show_frame (1) | first_part_size (19) |
///  key frames only:                    | 0x9d 0x01 0x2a | width (14) scale (2) | height (14) scale (2) |
/// ```
///
/// P, the inverse key frame flag, is the low bit of the first octet: 0 for a key frame.
public struct VP8FrameHeader: Sendable, Hashable {
    public var isKeyFrame: Bool
    public var version: UInt8
    public var showFrame: Bool
    public var firstPartitionSize: Int
    /// Key frames only: the picture size in pixels (the scaling bits dropped).
    public var width: Int?
    public var height: Int?

    /// The frame tag of a key frame is followed by this start code (RFC 6386 §9.1).
    public static let startCode: [UInt8] = [0x9D, 0x01, 0x2A]

    /// Reads the header at the start of a VP8 frame (the reassembled frame, or the payload after
    /// the descriptor of a packet that starts one).
    public static func parse(_ frame: ArraySlice<UInt8>) throws(RTPError) -> VP8FrameHeader {
        guard frame.count >= 3 else {
            throw RTPError(.truncated, "VP8 frame header: \(frame.count) bytes, need 3 for the frame tag")
        }
        let start = frame.startIndex
        let tag = UInt32(frame[start]) | UInt32(frame[start + 1]) << 8 | UInt32(frame[start + 2]) << 16
        var header = VP8FrameHeader(
            isKeyFrame: tag & 1 == 0,
            version: UInt8(tag >> 1 & 0x07),
            showFrame: tag >> 4 & 1 == 1,
            firstPartitionSize: Int(tag >> 5),
            width: nil,
            height: nil
        )
        guard header.isKeyFrame else { return header }
        guard frame.count >= 10 else {
            throw RTPError(
                .truncated,
                "VP8 key frame header: \(frame.count) bytes, need 10 for the start code and the picture size"
            )
        }
        guard frame[start + 3..<start + 6].elementsEqual(startCode) else {
            throw RTPError(
                .invalidVP8Payload,
                "VP8 key frame: bytes 3–5 are not the start code 9d 01 2a (RFC 6386 §9.1)"
            )
        }
        header.width = (Int(frame[start + 6]) | Int(frame[start + 7]) << 8) & 0x3FFF
        header.height = (Int(frame[start + 8]) | Int(frame[start + 9]) << 8) & 0x3FFF
        return header
    }
}
