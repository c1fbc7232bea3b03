import Foundation
import TestSupport
import Testing

/// What the WebRTC end-to-end tests read besides the peers: the publisher's feedback counters
/// and the server's replies to offers sent by hand.
extension PublishEndToEndTests {
    /// The largest feedback counters `destination` ever had in the stats file (a destination's
    /// entry goes when it is removed).
    /// A destination that left has its counters as they stood then under `departedFeedback`.
    static func finalFeedback(_ directory: TemporaryDirectory, destination: String) throws -> [String: Any] {
        let departed = try lastStatsEntry(directory, table: "departedFeedback", key: destination)
        return departed.isEmpty ? try lastStatsEntry(directory, table: "feedback", key: destination) : departed
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

    /// A well-formed WebRTC offer (BUNDLE, ICE, DTLS, rtcp-mux) whose video is AV1 only.
    static let offerWithNoCodecWeSend = [
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
        "a=msid-semantic: WMS", "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
        "a=ice-ufrag:Xq3b", "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u", "a=ice-options:trickle",
        "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"),
        "a=setup:actpass", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:96 AV1/90000",
        "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli",
        "a=candidate:1 1 udp 2130706431 127.0.0.1 9 typ host", "a=end-of-candidates",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0", "a=ice-ufrag:Xq3b",
        "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u",
        "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"),
        "a=setup:actpass", "a=mid:1", "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2", "",
    ].joined(separator: "\r\n")
}

/// A member of room 123456 on a plain TCP connection that stays joined (so the publisher keeps
/// its subscription) and reads what the server relays: a subscriber that sent its offer and
/// then does nothing on the media side, as a browser whose answer was lost.
final class HeldSubscriber {
    let client: RawTCPClient
    let uid: String
    private var pending = [UInt8]()
    /// Messages read while waiting for something else, oldest first.
    private var backlog: [[String: Any]] = []

    init(port: Int, uid: String) throws {
        client = try RawTCPClient(port: port)
        self.uid = uid
        try send(["type": "join", "id": 1, "version": 1, "room": "123456", "uid": uid, "role": "subscriber"])
        let joined = try next(deadlineSeconds: 20) { ($0["id"] as? Int) == 1 }
        guard joined["type"] as? String == "joined" else { throw InteropFailure("join refused: \(joined)") }
    }

    /// When this member last sent anything: rtc-signal drops a member silent for its idle
    /// timeout (30 s), so `next` pings while it waits.
    private var lastSent = Date()
    private var pings = 1000

    func send(_ object: [String: Any]) throws {
        try client.send(Array(try JSONSerialization.data(withJSONObject: object)) + [UInt8(ascii: "\n")])
        lastSent = Date()
    }

    /// The publisher's answer to the last subscribe that was answered.
    private(set) var answer: String?

    /// Subscribes to alice_sub with `offer`; "answered" (the SDP in `answer`), or "code: message"
    /// for an error.
    func subscribe(offer: String, id: Int = 10) throws -> String {
        try send(["type": "subscribe", "id": id, "publisher": "alice_sub", "receive": ["offer": offer]])
        let reply = try next(deadlineSeconds: 20) { ($0["id"] as? Int) == id }
        guard reply["type"] as? String == "error" else {
            answer = reply["sdp"] as? String
            return "answered"
        }
        return "\(reply["code"] as? String ?? "?"): \(reply["message"] as? String ?? "?")"
    }

    /// The next message `matching` (earlier ones kept for later calls), or a failure past the
    /// deadline.
    func next(deadlineSeconds: Double, matching: ([String: Any]) -> Bool) throws -> [String: Any] {
        if let index = backlog.firstIndex(where: matching) { return backlog.remove(at: index) }
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while Date() < deadline {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                guard let message = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                if matching(message) { return message }
                backlog.append(message)
                continue
            }
            if Date().timeIntervalSince(lastSent) > 8 {
                pings += 1
                try send(["type": "ping", "id": pings])
            }
            let (bytes, end) = client.receive(waitingMilliseconds: 100)
            if let end { throw InteropFailure("\(uid): rtc-signal ended the connection (\(end))") }
            pending += bytes
        }
        throw InteropFailure("\(uid): nothing matching within \(deadlineSeconds) s; read \(backlog)")
    }

    /// The publisher's `{"event": "webrtc-ended", …}` signal to this member, within `seconds`.
    func webRTCEnded(withinSeconds seconds: Double) throws -> [String: Any] {
        let message = try next(deadlineSeconds: seconds) { message in
            guard message["type"] as? String == "signal", let payload = message["payload"] as? [String: Any] else {
                return false
            }
            return payload["event"] as? String == "webrtc-ended"
        }
        return message["payload"] as? [String: Any] ?? [:]
    }
}

extension PublishEndToEndTests {
    /// A well-formed H.264 + Opus WebRTC offer (BUNDLE, ICE, DTLS, rtcp-mux) whose only candidate
    /// is 127.0.0.1:`port`: a socket the test holds and never reads, so no check is ever answered
    /// and none ever comes from there. Its fingerprint matches no certificate.
    static func offerGoingNowhere(candidatePort port: UInt16, ufrag: String = "Xq3b") -> String {
        let fingerprint = "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
        return [
            "v=0", "o=- 4611731400430051337 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
            "a=msid-semantic: WMS", "m=video 9 UDP/TLS/RTP/SAVPF 102", "c=IN IP4 0.0.0.0",
            "a=rtcp:9 IN IP4 0.0.0.0", "a=ice-ufrag:\(ufrag)", "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u",
            "a=ice-options:trickle", fingerprint, "a=setup:actpass", "a=mid:0", "a=recvonly", "a=rtcp-mux",
            "a=rtcp-rsize", "a=rtpmap:102 H264/90000", "a=rtcp-fb:102 nack", "a=rtcp-fb:102 nack pli",
            "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
            "a=candidate:1 1 udp 2130706431 127.0.0.1 \(port) typ host", "a=end-of-candidates",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:\(ufrag)", "a=ice-pwd:ZaJ4vW3iW4mKkTVF3O0pQX0u", fingerprint, "a=setup:actpass", "a=mid:1",
            "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2", "",
        ].joined(separator: "\r\n")
    }
}
