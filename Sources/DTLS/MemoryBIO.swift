import COpenSSL

/// Reading and writing OpenSSL memory BIOs (`BIO_s_mem`), the in-memory pipes a session's DTLS
/// runs over instead of a socket.
enum MemoryBIO {
    /// Takes every byte waiting in `bio` (what OpenSSL wrote since the last call).
    static func readAll(_ bio: OpaquePointer) -> [UInt8] {
        let pending = Int(rtc_BIO_ctrl_pending()(bio))
        guard pending > 0, pending <= Int(Int32.max) else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { rtc_BIO_read()(bio, $0.baseAddress, Int32(pending)) }
        return read > 0 ? Array(bytes.prefix(Int(read))) : []
    }

    /// Replaces whatever `bio` holds with `bytes`; false if OpenSSL could not take them all.
    static func replaceContents(of bio: OpaquePointer, with bytes: UnsafeRawBufferPointer) -> Bool {
        // A memory BIO is a byte stream: bytes OpenSSL left unread would join the next datagram
        // and break DTLS's one-read-per-datagram framing, so each datagram starts from empty.
        _ = rtc_BIO_ctrl()(bio, BIO_CTRL_RESET, 0, nil)
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return bytes.isEmpty }
        return rtc_BIO_write()(bio, bytes.baseAddress, Int32(bytes.count)) == Int32(bytes.count)
    }
}
