import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback TCP socket driven by hand, for what NIO's client hides: half-closing,
/// sending on while the server answers, and telling an orderly end of file from a reset.
///
/// Its calls block: from async tests run them through ``offPool(_:)``, or they starve the two
/// cooperative threads the in-process server's connections run on.
public final class RawTCPClient: @unchecked Sendable {
    public let descriptor: Int32

    /// How a read loop ended.
    public enum End: Equatable, Sendable {
        case endOfFile
        case reset
        case timedOut
    }

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw InteropFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw InteropFailure("connect to 127.0.0.1:\(port): errno \(code)")
        }
    }

    deinit { close(descriptor) }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw InteropFailure("send: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends without blocking; returns the bytes the kernel took (0 when its buffer is full).
    public func sendSome(_ bytes: [UInt8]) -> Int {
        let sent = bytes.withUnsafeBytes {
            Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        return max(0, sent)
    }

    public func shutdownWrite() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Whether there is something to read (or the end), waiting up to `milliseconds`; reads nothing.
    public func readable(waitingMilliseconds milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) > 0
    }

    /// Reads what is there now, waiting up to `milliseconds` for the first byte; nil at the end.
    public func receive(waitingMilliseconds milliseconds: Int32) -> (bytes: [UInt8], end: End?) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return ([], nil) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return (Array(buffer[0..<count]), nil) }
        if count == 0 { return ([], .endOfFile) }
        return ([], errno == ECONNRESET ? .reset : .endOfFile)
    }

    /// Reads until the server ends the connection or `seconds` pass; the lines and how it ended.
    public func linesUntilEnd(seconds: Double = 10) -> (lines: [String], end: End) {
        var data: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (bytes, end) = receive(waitingMilliseconds: 100)
            data += bytes
            if let end { return (Self.lines(data), end) }
        }
        return (Self.lines(data), .timedOut)
    }

    public static func lines(_ data: [UInt8]) -> [String] {
        String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
