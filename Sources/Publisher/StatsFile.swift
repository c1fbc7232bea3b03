#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The `--stats-json` file: JSON lines appended as they come, by one writer at a time (the
/// status task, then the final record once it has stopped). Plain `write(2)` on a descriptor
/// this object owns and closes in `deinit`.
final class StatsFile: @unchecked Sendable {
    private let descriptor: Int32
    let path: String

    /// Creates or truncates `path`; nil with the system's reason if that is not possible.
    static func create(path: String) -> Result<StatsFile, StatsFileError> {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            return .failure(StatsFileError(message: String(cString: strerror(errno))))
        }
        return .success(StatsFile(descriptor: descriptor, path: path))
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Appends `text`; a full disk loses the line, never the stream (stats are a by-product).
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = writeDescriptor(descriptor, base + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// `write(2)`, under a name the method above does not shadow.
private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

struct StatsFileError: Error {
    let message: String
}
