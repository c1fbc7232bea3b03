import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the WebRTC end-to-end tests read besides the peers: the publisher's feedback counters
/// and the server's replies to offers sent by hand.
extension PublishEndToEndTests {
    /// The largest feedback counters `destination` ever had in the stats file (a destination's
    /// entry goes when it is removed).
    static func finalFeedback(_ directory: TemporaryDirectory, destination: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        var last: [String: Any] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let totals = record["totals"] as? [String: Any],
                let feedback = totals["feedback"] as? [String: Any],
                let entry = feedback[destination] as? [String: Any]
            else { continue }
            last = entry
        }
        return last
    }

    /// Joins `port`'s room 123456 as a subscriber over a plain TCP connection and subscribes to
    /// alice_sub with each offer in turn; returns each reply as "code: message" for an error, or
    /// "answered". JSON lines, as Docs/signaling.md describes them.
    static func subscribeWithOffers(port: Int, _ offers: [String]) throws -> [String] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw InteropFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw InteropFailure("connect to rtc-signal: \(errno)") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending = [UInt8]()
        func send(_ object: [String: Any]) throws {
            let line = try JSONSerialization.data(withJSONObject: object) + Data("\n".utf8)
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count else { throw InteropFailure("write to rtc-signal failed") }
        }
        func reply(to id: Int) throws -> [String: Any] {
            while true {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Data(pending[..<newline])
                    pending.removeSubrange(...newline)
                    if let message = try JSONSerialization.jsonObject(with: line) as? [String: Any],
                        (message["id"] as? Int) == id
                    {
                        return message
                    }
                    continue
                }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = read(fd, &chunk, chunk.count)
                guard count > 0 else { throw InteropFailure("rtc-signal sent no reply to request \(id)") }
                pending += chunk[0..<count]
            }
        }
        try send(["type": "join", "id": 1, "version": 1, "room": "123456", "uid": "probe_sub", "role": "subscriber"])
        let joined = try reply(to: 1)
        guard joined["type"] as? String == "joined" else { throw InteropFailure("join refused: \(joined)") }
        return try offers.enumerated().map { index, offer in
            let id = 10 + index
            try send(["type": "subscribe", "id": id, "publisher": "alice_sub", "receive": ["offer": offer]])
            let answer = try reply(to: id)
            guard answer["type"] as? String == "error" else { return "answered" }
            return "\(answer["code"] as? String ?? "?"): \(answer["message"] as? String ?? "?")"
        }
    }

    /// A well-formed WebRTC offer (BUNDLE, ICE, DTLS, rtcp-mux) whose video is VP8 only.
    static let offerWithoutH264 = [
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
        "a=msid-semantic: WMS", "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
        "a=ice-ufrag:Xq3b", "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u", "a=ice-options:trickle",
        "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"),
        "a=setup:actpass", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:96 VP8/90000",
        "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli",
        "a=candidate:1 1 udp 2130706431 127.0.0.1 9 typ host", "a=end-of-candidates",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0", "a=ice-ufrag:Xq3b",
        "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u",
        "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"),
        "a=setup:actpass", "a=mid:1", "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2", "",
    ].joined(separator: "\r\n")
}
