#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whether anyone listens where this socket sends (Docs/cadence.md, "Receivers that cannot
/// ask"). A UDP datagram to a port nobody has bound on a host that answers comes back as ICMP
/// port unreachable (RFC 1122 §3.2.2.1, RFC 4443 §3.1 code 4); Linux reports it on a socket
/// that was not `connect`ed only with `IP_RECVERR` / `IPV6_RECVERR` (ip(7), ipv6(7)), as an
/// entry in the socket's error queue (and one failed send or receive, `ECONNREFUSED`). On
/// loopback the kernel answers every such datagram, without its ICMP rate limit.
extension UDPSocket {
    /// Asks the kernel to queue ICMP errors about what this socket sends. True when it took it.
    @discardableResult
    public func reportUnreachable() -> Bool {
        var on: Int32 = 1
        let (level, option) =
            localAddress.isIPv6 ? (Int32(IPPROTO_IPV6), Int32(IPV6_RECVERR)) : (Int32(IPPROTO_IP), Int32(IP_RECVERR))
        return setsockopt(descriptor, level, option, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// Empties the error queue (`MSG_ERRQUEUE`, never blocking, at most `limit` entries); returns
    /// how many entries said `ECONNREFUSED` (port unreachable), with the sends that failed so
    /// since the last call. Each entry is read into a small stack buffer: the offending
    /// datagram's bytes are not needed, only the error.
    public func takeRefusals(limit: Int = 64) -> Int {
        var refusals = refusedSends
        refusedSends = 0
        // The cmsghdr (16 bytes on 64-bit) with a sock_extended_err (16) and the offender's
        // address (up to 28): room for one of each, 8-byte aligned.
        var control = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var payload: UInt64 = 0
        for _ in 0..<limit {
            let got = withUnsafeMutableBytes(of: &control) { controlBytes in
                withUnsafeMutableBytes(of: &payload) { payloadBytes -> Int32? in
                    var vector = iovec(iov_base: payloadBytes.baseAddress, iov_len: payloadBytes.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var message = msghdr()
                        message.msg_iov = vectorPointer
                        message.msg_iovlen = 1
                        message.msg_control = controlBytes.baseAddress
                        message.msg_controllen = controlBytes.count
                        let length = recvmsg(descriptor, &message, Int32(MSG_ERRQUEUE) | Int32(MSG_DONTWAIT))
                        guard length >= 0 else { return nil }
                        return Self.extendedErrno(
                            in: UnsafeRawBufferPointer(controlBytes),
                            length: message.msg_controllen
                        )
                    }
                }
            }
            guard let errno = got else { break }
            if errno == ECONNREFUSED { refusals += 1 }
        }
        return refusals
    }

    /// The `ee_errno` of the first `IP_RECVERR` / `IPV6_RECVERR` control message in `control`
    /// (`length` bytes filled), or 0. Read field by field: `CMSG_FIRSTHDR` and `CMSG_DATA` are
    /// macros Swift does not import (the layout is cmsghdr's: a `size_t` length, then level and
    /// type as `int`, the data at the next 8-byte boundary).
    static func extendedErrno(in control: UnsafeRawBufferPointer, length: Int) -> Int32 {
        let header = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
        let dataOffset = (header + 7) & ~7
        var offset = 0
        while offset + dataOffset + MemoryLayout<UInt32>.size <= min(length, control.count) {
            let messageLength = control.loadUnaligned(fromByteOffset: offset, as: Int.self)
            let level = control.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
            let type = control.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
            let isError =
                (level == Int32(IPPROTO_IP) && type == Int32(IP_RECVERR))
                || (level == Int32(IPPROTO_IPV6) && type == Int32(IPV6_RECVERR))
            if isError {
                return Int32(bitPattern: control.loadUnaligned(fromByteOffset: offset + dataOffset, as: UInt32.self))
            }
            guard messageLength >= header else { return 0 }
            offset += (messageLength + 7) & ~7
        }
        return 0
    }
}
