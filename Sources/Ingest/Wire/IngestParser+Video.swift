import Media

/// The geometry a video body's fixed fields describe, checked.
struct VideoLayout {
    var format: PixelFormat
    var rotation: Rotation
    var width: Int
    var height: Int
    var strides: [Int]
    /// Bytes of each plane on the wire: stride × rows.
    var planeBytes: [Int]
}

extension IngestParser {
    /// Offset of the body's first byte from the start of the message.
    static var body: Int { IngestProtocol.headerSize }

    func videoLayout(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> VideoLayout {
        let b = Self.body
        let formatCode: UInt8 = try bytes.integer(b, "video.format")
        guard let format = PixelFormat(wireCode: formatCode) else {
            throw .field(
                .invalidField,
                "video.format",
                at: b,
                "code \(formatCode) is not 1 (NV12 full range), 2 (NV12 video range), 3 (I420) or 4 (BGRA)"
            )
        }
        let reserved: UInt8 = try bytes.integer(b + 1, "video.reserved")
        guard reserved == 0 else {
            throw .field(.invalidField, "video.reserved", at: b + 1, "must be 0, got \(reserved)")
        }
        let degrees: UInt16 = try bytes.integer(b + 2, "video.rotation")
        guard let rotation = Rotation(rawValue: Int(degrees)) else {
            throw .field(.invalidField, "video.rotation", at: b + 2, "\(degrees)° is not 0, 90, 180 or 270")
        }
        let width = Int(try bytes.integer(b + 4, "video.width", as: UInt16.self))
        let height = Int(try bytes.integer(b + 6, "video.height", as: UInt16.self))
        try checkSize(width: width, height: height)

        let planes = format.planeGeometry(width: width, height: height)
        var strides: [Int] = []
        var planeBytes: [Int] = []
        for slot in 0..<IngestVideo.strideSlots {
            let offset = b + 8 + 4 * slot
            let stride = Int(try bytes.integer(offset, "video.strides[\(slot)]", as: UInt32.self))
            guard slot < planes.count else {
                guard stride == 0 else {
                    throw .field(
                        .invalidField,
                        "video.strides[\(slot)]",
                        at: offset,
                        "must be 0: \(format) has \(planes.count) planes, got \(stride)"
                    )
                }
                continue
            }
            let plane = planes[slot]
            let field = "video.strides[\(slot)] (\(plane.name) plane)"
            guard stride >= plane.minStride else {
                throw .field(
                    .strideTooSmall,
                    field,
                    at: offset,
                    "stride \(stride) is less than the \(plane.minStride) bytes of one row of a \(width)-wide picture"
                )
            }
            guard stride - plane.minStride <= limits.maxStridePadding else {
                throw .field(
                    .invalidField,
                    field,
                    at: offset,
                    "stride \(stride) exceeds the \(plane.minStride) bytes of a row by more than the "
                        + "\(limits.maxStridePadding)-byte padding limit"
                )
            }
            strides.append(stride)
            planeBytes.append(stride * plane.rows)
        }
        let expected = IngestVideo.fixedSize + planeBytes.reduce(0, +)
        guard header.payloadLength == expected else {
            throw .field(
                .lengthMismatch,
                "length",
                at: 8,
                "a payload of \(header.payloadLength) bytes disagrees with the \(expected) bytes a \(width)x\(height) "
                    + "\(format) picture with strides \(strides) needs (\(IngestVideo.fixedSize) + planes "
                    + "\(planeBytes.map(String.init).joined(separator: " + ")))"
            )
        }
        return VideoLayout(
            format: format,
            rotation: rotation,
            width: width,
            height: height,
            strides: strides,
            planeBytes: planeBytes
        )
    }

    private func checkSize(width: Int, height: Int) throws(IngestError) {
        let b = Self.body
        guard width > 0 else { throw .field(.invalidField, "video.width", at: b + 4, "a picture cannot be 0 wide") }
        guard height > 0 else { throw .field(.invalidField, "video.height", at: b + 6, "a picture cannot be 0 high") }
        guard width <= limits.maxWidth else {
            throw .field(
                .dimensionsTooLarge,
                "video.width",
                at: b + 4,
                "\(width) is over the limit of \(limits.maxWidth)"
            )
        }
        guard height <= limits.maxHeight else {
            throw .field(
                .dimensionsTooLarge,
                "video.height",
                at: b + 6,
                "\(height) is over the limit of \(limits.maxHeight)"
            )
        }
    }

    func video(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> IngestVideo {
        let layout = try videoLayout(header, bytes)
        var planes: [[UInt8]] = []
        var offset = Self.body + IngestVideo.fixedSize
        for (index, count) in layout.planeBytes.enumerated() {
            planes.append(try bytes.bytes(offset, count: count, "video.planes[\(index)]"))
            offset += count
        }
        let frame: RawVideoFrame
        do {
            frame = try RawVideoFrame(
                format: layout.format,
                width: layout.width,
                height: layout.height,
                planes: planes,
                strides: layout.strides,
                rotation: layout.rotation,
                captureTime: 0
            )
        } catch {
            throw .field(.invalidField, "video", at: Self.body, error.message)
        }
        return IngestVideo(frame: frame, timestamp: header.timestamp, flags: header.flags)
    }
}
