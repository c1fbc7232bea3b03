/// Reads YUV4MPEG2 files, what `ffmpeg -f yuv4mpegpipe` writes: 8-bit 4:2:0 progressive.
///
/// Format: a header line `YUV4MPEG2 W<width> H<height> F<num>:<den> I<p|t|b|m> A<n>:<d> C<space>
/// X<ext>` (only W and H required), then per frame a `FRAME[ params]` line and the Y, U, V planes
/// packed tight. Every size comes from the header, so it is bounded before anything is allocated.
public final class Y4MReader {
    public let width: Int
    public let height: Int
    /// Frame rate as num/den (30/1 when the header has none).
    public let frameRateNum: Int
    public let frameRateDen: Int
    public let path: String
    public let loop: Bool
    /// Frames returned so far (counting loops).
    public private(set) var framesRead = 0

    private let file: POSIXFile
    private let dataStart: Int
    private var offset: Int
    private var framesInPass = 0
    /// The planes frames are read into, reused: a frame the caller has let go of by the next
    /// read is overwritten in place (one `pread` per plane, no allocation, no zero-fill), and a
    /// frame still held is kept intact by copy-on-write.
    private var y: [UInt8] = []
    private var u: [UInt8] = []
    private var v: [UInt8] = []

    static let maxLine = 1024
    /// Colour spaces with 8-bit 4:2:0 planes (they differ only in chroma siting).
    static let supportedSpaces = ["420", "420jpeg", "420paldv", "420mpeg2"]

    public init(path: String, loop: Bool = false) throws(MediaError) {
        self.path = path
        self.loop = loop
        file = try POSIXFile(path: path, mode: .read)
        guard let (line, next) = try file.readLine(at: 0, limit: Self.maxLine, what: "header") else {
            throw MediaError(.badHeader, "\(path): empty file, expected a YUV4MPEG2 header")
        }
        let header = try Self.parseHeader(line, path: path)
        (width, height, frameRateNum, frameRateDen) = header
        dataStart = next
        offset = next
    }

    /// Frame rate as a Double, for pacing.
    public var frameRate: Double { Double(frameRateNum) / Double(frameRateDen) }

    static func parseHeader(_ line: [UInt8], path: String) throws(MediaError) -> (Int, Int, Int, Int) {
        let text = String(decoding: line, as: UTF8.self)
        let tokens = text.split(separator: " ")
        guard tokens.first == "YUV4MPEG2" else {
            throw MediaError(.badHeader, "\(path): header: not a YUV4MPEG2 file (starts with '\(text.prefix(16))')")
        }
        var w: Int?
        var h: Int?
        var rate = (30, 1)
        for token in tokens.dropFirst() {
            let key = token.first
            let value = String(token.dropFirst())
            switch key {
            case "W": w = Int(value)
            case "H": h = Int(value)
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 else {
                    throw MediaError(.badHeader, "\(path): header: bad frame rate 'F\(value)'")
                }
                rate = (n, d)
            case "I":
                guard value == "p" || value == "?" else {
                    throw MediaError(.badHeader, "\(path): header: interlaced video 'I\(value)' is not supported")
                }
            case "C":
                guard supportedSpaces.contains(value) else {
                    throw MediaError(
                        .badHeader,
                        "\(path): header: colour space 'C\(value)' is not supported; only 8-bit 4:2:0 (C420*)"
                    )
                }
            default: continue  // A (aspect), X (extensions): informational.
            }
        }
        guard let width = w else { throw MediaError(.badHeader, "\(path): header: missing or bad width (W)") }
        guard let height = h else { throw MediaError(.badHeader, "\(path): header: missing or bad height (H)") }
        do {
            try VideoFrame.validate(width: width, height: height)
        } catch {
            throw MediaError(.badHeader, "\(path): header: \(error.message)")
        }
        return (width, height, rate.0, rate.1)
    }

    /// Reads the next frame, stamped with `captureTime`; nil at the end (or, with `loop`, wraps
    /// to the first frame). A frame cut short by the end of the file is an error.
    public func nextFrame(captureTime: UInt64) throws(MediaError) -> VideoFrame? {
        guard
            let (marker, next) = try file.readLine(at: offset, limit: Self.maxLine, what: "frame \(framesRead) header")
        else {
            guard loop, framesInPass > 0 else { return nil }
            offset = dataStart
            framesInPass = 0
            return try nextFrame(captureTime: captureTime)
        }
        guard marker.starts(with: Array("FRAME".utf8)) else {
            throw MediaError(
                .badHeader,
                "\(path): frame \(framesRead): expected 'FRAME', found '\(String(decoding: marker.prefix(16), as: UTF8.self))'"
            )
        }
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        let lumaBytes = width * height
        let chromaBytes = cw * ch
        let got =
            try Self.fill(&y, count: lumaBytes, from: file, at: next)
            + Self.fill(&u, count: chromaBytes, from: file, at: next + lumaBytes)
            + Self.fill(&v, count: chromaBytes, from: file, at: next + lumaBytes + chromaBytes)
        guard got == lumaBytes + 2 * chromaBytes else {
            throw MediaError(
                .truncated,
                "\(path): frame \(framesRead) is truncated: \(got) of \(lumaBytes + 2 * chromaBytes) bytes"
            )
        }
        offset = next + got
        framesRead += 1
        framesInPass += 1
        return VideoFrame(uncheckedWidth: width, height: height, y: y, u: u, v: v, captureTime: captureTime)
    }

    /// Reads `count` bytes at `offset` into `plane`, sized once; returns the bytes read.
    private static func fill(
        _ plane: inout [UInt8],
        count: Int,
        from file: POSIXFile,
        at offset: Int
    ) throws(MediaError) -> Int {
        if plane.count != count { plane = [UInt8](repeating: 0, count: count) }
        return try plane.withUnsafeMutableBufferPointer { (buffer) throws(MediaError) in
            try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
        }
    }
}

/// Writes YUV4MPEG2 (C420jpeg, progressive) so ffmpeg and tests can read frames we produced.
public final class Y4MWriter {
    private let file: SequentialWriter
    public let width: Int
    public let height: Int

    public init(path: String, width: Int, height: Int, frameRate: Int) throws(MediaError) {
        try VideoFrame.validate(width: width, height: height)
        file = try SequentialWriter(path: path)
        self.width = width
        self.height = height
        try file.write(Array("YUV4MPEG2 W\(width) H\(height) F\(frameRate):1 Ip A1:1 C420jpeg\n".utf8))
    }

    public func write(_ frame: VideoFrame) throws(MediaError) {
        guard frame.width == width, frame.height == height else {
            throw MediaError(
                .invalidDimensions,
                "frame \(frame.width)x\(frame.height) in a \(width)x\(height) Y4M file"
            )
        }
        try file.write(Array("FRAME\n".utf8))
        try writePlane(frame.y, stride: frame.strideY, width: width, rows: height)
        try writePlane(frame.u, stride: frame.strideU, width: frame.chromaWidth, rows: frame.chromaHeight)
        try writePlane(frame.v, stride: frame.strideV, width: frame.chromaWidth, rows: frame.chromaHeight)
    }

    private func writePlane(_ plane: [UInt8], stride: Int, width: Int, rows: Int) throws(MediaError) {
        if stride == width {
            try file.write(Array(plane[0..<(width * rows)]))
        } else {
            for r in 0..<rows { try file.write(Array(plane[(r * stride)..<(r * stride + width)])) }
        }
    }

    /// Kept for callers that want to mark the end of writing; every write is already in the file.
    public func flush() {}
}
