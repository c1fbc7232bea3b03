#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A stdio file handle closed in `deinit`; the file readers and writers build on it.
final class CFile {
    let path: String
    private let handle: UnsafeMutablePointer<FILE>

    init(path: String, mode: String) throws(MediaError) {
        guard let h = fopen(path, mode) else {
            let reason = String(cString: strerror(errno))
            throw MediaError(.io, "\(path): cannot open: \(reason)")
        }
        self.path = path
        self.handle = h
    }

    deinit { fclose(handle) }

    /// Reads up to `count` bytes into `buffer` at `offset`; returns how many arrived.
    func read(into buffer: inout [UInt8], offset: Int = 0, count: Int) -> Int {
        buffer.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, count > 0 else { return 0 }
            return fread(base + offset, 1, count, handle)
        }
    }

    func read(count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = read(into: &buffer, count: count)
        if got < count { buffer.removeLast(count - got) }
        return buffer
    }

    /// Reads one byte, or nil at end of file.
    func readByte() -> UInt8? {
        let c = fgetc(handle)
        return c == EOF ? nil : UInt8(c)
    }

    /// Reads up to and excluding '\n', at most `limit` bytes; nil at EOF before any byte, and
    /// an error if no newline comes within the limit.
    func readLine(limit: Int, what: String) throws(MediaError) -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            guard let byte = readByte() else {
                if line.isEmpty { return nil }
                throw MediaError(.truncated, "\(path): \(what) ends without a newline")
            }
            if byte == 0x0A { return line }
            guard line.count < limit else {
                throw MediaError(.badHeader, "\(path): \(what) is longer than \(limit) bytes")
            }
            line.append(byte)
        }
    }

    var position: Int { ftell(handle) }

    func seek(to offset: Int) throws(MediaError) {
        guard fseek(handle, offset, SEEK_SET) == 0 else {
            throw MediaError(.io, "\(path): cannot seek to \(offset)")
        }
    }

    /// File size in bytes, for checking sizes a header claims.
    func size() -> Int {
        let here = ftell(handle)
        fseek(handle, 0, SEEK_END)
        let end = ftell(handle)
        fseek(handle, here, SEEK_SET)
        return end
    }

    func write(_ bytes: [UInt8]) throws(MediaError) {
        let written = bytes.withUnsafeBufferPointer { p in
            p.baseAddress.map { fwrite($0, 1, p.count, handle) } ?? 0
        }
        guard written == bytes.count else {
            throw MediaError(.io, "\(path): write failed: \(String(cString: strerror(errno)))")
        }
    }

    func flush() { fflush(handle) }
}
