import Media

/// The `--stats-json` file: JSON lines appended as they come, by one writer at a time (the
/// status task, then the final record once it has stopped), through the `POSIXFile` the file
/// readers and writers use.
final class StatsFile: @unchecked Sendable {
    private let file: POSIXFile
    /// Where the next line goes: the bytes written so far.
    private var offset = 0

    /// Creates or truncates `path`; the error names the file and the system's reason.
    init(path: String) throws(MediaError) {
        file = try POSIXFile(path: path, mode: .write)
    }

    /// Appends `text`; a full disk loses the line, never the stream (stats are a by-product).
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard (try? file.write(UnsafeRawBufferPointer(bytes), at: offset)) != nil else { return }
            offset += bytes.count
        }
    }
}
