#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An IPv4 or IPv6 address and UDP port, stored as the `sockaddr` the kernel takes, so sending
/// needs no conversion per packet.
public struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    var storage: sockaddr_storage
    var length: socklen_t

    /// Parses a numeric host (`127.0.0.1`, `::1`) and a port; host names are not resolved here.
    public init(host: String, port: Int) throws(TransportError) {
        guard (0...65535).contains(port) else {
            throw TransportError(.invalidAddress, "port \(port) is outside 0...65535")
        }
        var storage = sockaddr_storage()
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            sin.sin_addr = v4
            withUnsafeBytes(of: &sin) { src in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) }
            }
            self.length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            sin6.sin6_addr = v6
            withUnsafeBytes(of: &sin6) { src in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) }
            }
            self.length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw TransportError(.invalidAddress, "'\(host)' is not a numeric IPv4 or IPv6 address")
        }
        self.storage = storage
    }

    /// The address in a `sockaddr_in` or `sockaddr_in6` (as a C library hands one over).
    public init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Parses `HOST:PORT` or `[V6HOST]:PORT`.
    public init(parsing text: String) throws(TransportError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw TransportError(.invalidAddress, "'\(text)' is not [IPv6]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw TransportError(.invalidAddress, "'\(text)' is not HOST:PORT")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText) else {
            throw TransportError(.invalidAddress, "'\(text)': port '\(portText)' is not a number")
        }
        try self.init(host: String(host), port: port)
    }

    public var family: Int32 { Int32(storage.ss_family) }

    public var port: Int {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
        }
    }

    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET {
                var a = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count))
            } else {
                var a = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The same host with another port (RTCP on RTP port + 1).
    public func withPort(_ port: Int) throws(TransportError) -> UDPAddress {
        try UDPAddress(host: host, port: port)
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public static func == (a: UDPAddress, b: UDPAddress) -> Bool {
        a.length == b.length
            && withUnsafeBytes(of: a.storage) { ra in
                withUnsafeBytes(of: b.storage) { rb in ra.prefix(Int(a.length)).elementsEqual(rb.prefix(Int(b.length)))
                }
            }
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: storage) { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0.prefix(Int(length)))) }
    }
}
