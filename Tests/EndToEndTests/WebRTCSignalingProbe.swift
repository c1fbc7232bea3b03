import Foundation
import TestSupport
import Testing

/// What the WebRTC end-to-end tests read besides the peers: the publisher's feedback counters
/// and the server's replies to offers sent by hand.
extension PublishEndToEndTests {
    /// The largest feedback counters `destination` ever had in the stats file (a destination's
    /// entry goes when it is removed).
    static func finalFeedback(_ directory: TemporaryDirectory, destination: String) throws -> [String: Any] {
        try lastStatsEntry(directory, table: "feedback", key: destination)
    }

    /// The last `webRTCViewers` entry of `uid` in stats.jsonl (state, path, transport counters).
    static func finalWebRTCViewer(_ directory: TemporaryDirectory, uid: String) throws -> [String: Any] {
        try lastStatsEntry(directory, table: "webRTCViewers", key: uid)
    }

    /// The last `totals[table][key]` object among stats.jsonl's records ([:] if none had it).
    static func lastStatsEntry(_ directory: TemporaryDirectory, table: String, key: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        var last: [String: Any] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let totals = record["totals"] as? [String: Any],
                let entries = totals[table] as? [String: Any],
                let entry = entries[key] as? [String: Any]
            else { continue }
            last = entry
        }
        return last
    }

    /// Joins `port`'s room 123456 as a subscriber over a plain TCP connection and subscribes to
    /// alice_sub with each offer in turn; returns each reply as "code: message" for an error, or
    /// "answered". JSON lines, as Docs/signaling.md describes them.
    static func subscribeWithOffers(port: Int, _ offers: [String]) throws -> [String] {
        let client = try RawTCPClient(port: port)
        var pending = [UInt8]()
        func send(_ object: [String: Any]) throws {
            try client.send(Array(try JSONSerialization.data(withJSONObject: object)) + [UInt8(ascii: "\n")])
        }
        func reply(to id: Int) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
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
                let (bytes, end) = client.receive(waitingMilliseconds: 100)
                if let end { throw InteropFailure("rtc-signal ended the connection (\(end)) before replying to \(id)") }
                pending += bytes
            }
            throw InteropFailure("rtc-signal sent no reply to request \(id) in 20 s")
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
