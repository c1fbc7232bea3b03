import Foundation
import Transport

/// Local ports for a viewer: video on an even port P with RTCP on P + 1, audio on P + 2 with RTCP
/// on P + 3 — the layout ffmpeg and ffplay expect from an SDP (RTCP always on RTP port + 1).
public enum ViewerPorts {
    /// Checks that P…P+3 are free on `host` by binding them (and letting go).
    public static func check(_ port: Int, host: String) throws(TransportError) {
        guard port % 2 == 0, (1024...65528).contains(port) else {
            throw TransportError(.invalidAddress, "port \(port) must be even and within 1024...65528")
        }
        var held: [UDPSocket] = []
        for p in port...(port + 3) {
            do {
                held.append(try UDPSocket(bindingTo: UDPAddress(host: host, port: p)))
            } catch {
                throw TransportError(.bind, "port \(p) on \(host) is in use")
            }
        }
    }

    /// Whether some socket is bound to UDP `port` (IPv4 or IPv6), read from /proc/net/udp{,6}.
    public static func isBound(_ port: Int) -> Bool {
        // Four upper-case hex digits, as the kernel writes local ports there.
        let digits = String(port, radix: 16, uppercase: true)
        let wanted = ":" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        for table in ["/proc/net/udp", "/proc/net/udp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                if fields.count > 1, fields[1].hasSuffix(wanted) { return true }
            }
        }
        return false
    }

    /// Finds a free block of four ports starting at an even port, below Linux's ephemeral range
    /// (32768–60999): a port the kernel hands out for `bind(0)` (the publisher's own sockets on
    /// this host, ffmpeg's) can then never take the block between this check and the player's bind.
    public static func pick(host: String) throws(TransportError) -> Int {
        for _ in 0..<200 {
            let port = 20_000 + Int.random(in: 0..<6_000) * 2
            if (try? check(port, host: host)) != nil { return port }
        }
        throw TransportError(.bind, "no free block of four UDP ports on \(host)")
    }
}
