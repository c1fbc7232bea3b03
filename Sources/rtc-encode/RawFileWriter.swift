import Media

#if canImport(Glibc)
    import Glibc
#endif

/// Writes bytes to a new file in order: the headerless `.yuv` and `.pcm` inputs FFmpeg and
/// GStreamer read in the benchmarks. Owns its descriptor and closes it in `deinit`.
final class RawFileWriter {
    let path: String
    private let descriptor: Int32

    init(path: String) throws(MediaError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw MediaError(.io, "\(path): cannot create: \(String(cString: strerror(errno)))")
        }
        self.path = path
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Writes all of `bytes`, retrying short writes and interrupted calls.
    func write(_ bytes: ArraySlice<UInt8>) throws(MediaError) {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress.map { $0 + done }, raw.count - done)
            }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else {
                throw MediaError(.io, "\(path): write failed: \(String(cString: strerror(errno)))")
            }
            done += wrote
        }
    }

    /// Writes `rows` rows of `width` bytes from a plane laid out with `stride` bytes per row.
    func writePlane(_ plane: [UInt8], stride: Int, width: Int, rows: Int) throws(MediaError) {
        if stride == width {
            try write(plane[0..<(width * rows)])
        } else {
            for row in 0..<rows { try write(plane[(row * stride)..<(row * stride + width)]) }
        }
    }
}
