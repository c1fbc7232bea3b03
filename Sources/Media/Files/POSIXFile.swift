#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file descriptor, closed in `deinit`: the file readers and writers (WAV, Y4M, Ogg,
/// H.264) stream through it with positioned reads and writes instead of loading whole files
/// (an hour of 48 kHz stereo float is over a gigabyte; of 720p I420, 140 GB).
///
/// Errors carry the file's name, so a caller can show them as they are.
public final class POSIXFile {
    let path: String
    /// Name used in messages: the last path component, as a user recognises it.
    let displayName: String
    private let fd: Int32

    public enum Mode {
        case read
        /// Creates or truncates.
        case write
    }

    public init(path: String, mode: Mode) throws(MediaError) {
        self.path = path
        self.displayName = path.split(separator: "/").last.map(String.init) ?? path
        let flags: Int32 =
            switch mode {
            case .read: O_RDONLY | O_CLOEXEC
            case .write: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
            }
        let opened = open(path, flags, 0o644)
        guard opened >= 0 else {
            throw MediaError(.io, "\(path): cannot open: \(POSIXFile.describe(errno))")
        }
        fd = opened
    }

    deinit {
        close(fd)
    }

    /// Size in bytes, from `fstat`.
    func size() throws(MediaError) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw MediaError(.io, "\(displayName): cannot stat: \(POSIXFile.describe(errno))")
        }
        return Int(st.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at
    /// end of file). Retries short reads and `EINTR`.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(MediaError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(
                    .io,
                    "\(displayName): read failed at byte \(offset + done): \(POSIXFile.describe(errno))"
                )
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and `EINTR`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(MediaError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, base + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(
                    .io,
                    "\(displayName): write failed at byte \(offset + done): \(POSIXFile.describe(errno))"
                )
            }
            done += n
        }
    }

    /// Reads `count` bytes at `offset` into a new array (shorter only at end of file).
    func read(count: Int, at offset: Int) throws(MediaError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBufferPointer { (buffer) throws(MediaError) in
            try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
        }
        bytes.removeLast(count - got)
        return bytes
    }

    /// Reads a line at `offset`, up to and excluding '\n', at most `limit` bytes. Returns the
    /// line and the offset after its newline; nil at end of file. `what` names the line in errors.
    func readLine(at offset: Int, limit: Int, what: String) throws(MediaError) -> (line: [UInt8], next: Int)? {
        let block = try read(count: limit + 1, at: offset)
        if block.isEmpty { return nil }
        guard let newline = block.firstIndex(of: 0x0A) else {
            if block.count > limit {
                throw MediaError(.badHeader, "\(path): \(what) is longer than \(limit) bytes")
            }
            throw MediaError(.truncated, "\(path): \(what) ends without a newline")
        }
        return (Array(block[..<newline]), offset + newline + 1)
    }

    func write(_ bytes: [UInt8], at offset: Int) throws(MediaError) {
        // withUnsafeBufferPointer has typed throws; withUnsafeBytes does not (yet).
        try bytes.withUnsafeBufferPointer { (buffer) throws(MediaError) in
            try write(UnsafeRawBufferPointer(buffer), at: offset)
        }
    }

    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}

/// Appends to a new file from the start: the writers of streams (Y4M, Annex B) keep no offsets.
final class SequentialWriter {
    private let file: POSIXFile
    private var offset = 0
    var path: String { file.path }

    init(path: String) throws(MediaError) {
        file = try POSIXFile(path: path, mode: .write)
    }

    func write(_ bytes: [UInt8]) throws(MediaError) {
        try file.write(bytes, at: offset)
        offset += bytes.count
    }
}
