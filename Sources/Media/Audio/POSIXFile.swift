#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file descriptor, closed in `deinit`: the audio file readers and writers stream
/// through it with positioned reads and writes instead of loading whole files (an hour of
/// 48 kHz stereo float is over a gigabyte).
///
/// Errors carry the file's name, so a caller can show them as they are.
final class POSIXFile {
    let path: String
    /// Name used in messages: the last path component, as a user recognises it.
    let displayName: String
    private let fd: Int32

    enum Mode {
        case read
        /// Creates or truncates.
        case write
    }

    init(path: String, mode: Mode) throws(MediaError) {
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
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(MediaError) {
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
