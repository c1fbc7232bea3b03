#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension UDPAddress {
    /// Whether this is an IPv6 address (a socket for it must be bound to `::`).
    public var isIPv6: Bool { family == AF_INET6 }

    /// Whether the address is on this machine's loopback (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET {
                let offset = MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_addr) ?? 4
                return raw[offset] == 127
            }
            let offset = MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_addr) ?? 8
            return raw[offset..<offset + 15].allSatisfy { $0 == 0 } && raw[offset + 15] == 1
        }
    }

    /// Whether `other` names the same host (family and IP address; ports may differ), without
    /// building strings: what a receive loop checks per datagram.
    public func hasSameHost(as other: UDPAddress) -> Bool {
        guard family == other.family else { return false }
        return withUnsafeBytes(of: storage) { mine in
            withUnsafeBytes(of: other.storage) { theirs in
                if family == AF_INET {
                    let offset = MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_addr) ?? 4
                    let size = MemoryLayout<in_addr>.size
                    return mine[offset..<offset + size].elementsEqual(theirs[offset..<offset + size])
                }
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_addr) ?? 8
                let size = MemoryLayout<in6_addr>.size
                return mine[offset..<offset + size].elementsEqual(theirs[offset..<offset + size])
            }
        }
    }
}
