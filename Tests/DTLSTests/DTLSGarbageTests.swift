import DTLS
import Testing

/// Whatever arrives on the 5-tuple, a session answers with an error for that datagram or a clear
/// handshake failure: never a trap, never a session that silently stops.
@Suite("DTLS input that is not a valid handshake")
struct DTLSGarbageTests {
    /// A DTLS 1.2 record header: type, version {254, 253}, epoch 0, sequence 0, length.
    static func header(type: UInt8 = 22, version: [UInt8] = [254, 253], length: Int) -> [UInt8] {
        [type] + version + [0, 0, 0, 0, 0, 0, 0, 0] + [UInt8(length >> 8), UInt8(length & 0xFF)]
    }

    static let refusals: [([UInt8], DTLSError.Code, String)] = [
        ([], DTLSError.Code.notDTLS, "empty datagram"),
        ([0x00, 0x01, 0x00, 0x00], .notDTLS, "first byte 0 is outside 20...63"),  // STUN binding request
        ([0x80, 0x60, 0x00, 0x01], .notDTLS, "first byte 128"),  // RTP
        ([0x81, 0xC8, 0x00, 0x06], .notDTLS, "first byte 129"),  // RTCP sender report
        ([19], .notDTLS, "first byte 19"),
        ([64], .notDTLS, "first byte 64"),
        ([22], .malformedRecord, "record 1 at byte 0: 1 bytes left, shorter than a 13-byte record header"),
        (Array(header(length: 0).prefix(12)), .malformedRecord, "12 bytes left"),
        (header(type: 26, length: 0), .malformedRecord, "content type 26 is not a DTLS 1.2 record type"),
        (header(type: 63, length: 0), .malformedRecord, "content type 63"),
        (header(version: [3, 3], length: 0), .malformedRecord, "version {3, 3} is neither"),
        (header(version: [254, 254], length: 0), .malformedRecord, "version {254, 254}"),
        (header(length: 5) + [1, 2, 3, 4], .malformedRecord, "length 5 runs past the end of the 17-byte datagram"),
        (header(length: 18_433), .malformedRecord, "length 18433 is above the 18432 bytes"),
        (
            header(length: 2) + [1, 2] + header(type: 21, length: 2) + [2], .malformedRecord,
            "record 2 at byte 15: length 2 runs past the end"
        ),
        (header(length: 1) + [1] + [99], .malformedRecord, "record 2 at byte 14: 1 bytes left"),
    ]

    @Test("refused datagrams: the code and the place named", arguments: refusals)
    func refused(datagram: [UInt8], code: DTLSError.Code, expected: String) throws {
        let pair = try DTLSPair()
        for session in [pair.server, pair.client] {
            if session === pair.client { _ = try session.start() }
            let before = session.state
            let error = #expect(throws: DTLSError.self) { try session.receive(datagram) }
            #expect(error?.code == code)
            #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
            #expect(session.state == before)
        }
    }

    @Test("oversized datagrams are refused before they are read", arguments: [16_385, 65_535, 200_000])
    func oversized(length: Int) throws {
        let pair = try DTLSPair()
        _ = try pair.client.start()
        var datagram = Self.header(length: 16_384 + 2_048)
        datagram += [UInt8](repeating: 0x42, count: length - datagram.count)
        let error = #expect(throws: DTLSError.self) { try pair.client.receive(datagram) }
        #expect(error?.code == .datagramTooLarge)
        #expect(error?.message.contains("\(length)-byte datagram") == true, "\(error?.message ?? "")")
        #expect(pair.client.state == .handshaking)
    }

    /// Every truncation of a real ClientHello is refused, the server stays ready, and the whole
    /// ClientHello afterwards starts a handshake that completes.
    @Test("truncated records are refused and do not wedge the session")
    func truncated() throws {
        let pair = try DTLSPair()
        let hello = try pair.client.start()
        let datagram = try #require(hello.datagrams.first)
        #expect(hello.datagrams.count == 1)
        for length in 1..<datagram.count {
            let error = #expect(throws: DTLSError.self) { try pair.server.receive(Array(datagram.prefix(length))) }
            #expect(error?.code == .malformedRecord)
        }
        #expect(pair.server.state == .new)
        var log = DTLSPair.Log()
        try pair.exchange(hello, from: .client, log: &log)
        #expect(pair.bothConnected, "client \(pair.client.state), server \(pair.server.state)")
    }

    /// Refused garbage between the real flights changes nothing: the handshake completes.
    @Test("garbage interleaved with a real handshake is refused and the handshake completes")
    func interleaved() throws {
        let pair = try DTLSPair()
        var generator = SeededGenerator(seed: 0x5EED_0001)
        var output = try pair.client.start()
        var toServer = true
        var refused = 0
        for _ in 0..<10 where !output.datagrams.isEmpty {
            let receiver = toServer ? pair.server : pair.client
            var next = DTLSOutput()
            for datagram in output.datagrams {
                let junk: [[UInt8]] = [
                    [0x00, 0x01] + generator.bytes(18),  // STUN-like
                    [0x80] + generator.bytes(40),  // RTP-like
                    Array(datagram.dropLast()),  // the last record cut short
                    datagram + [22, 254],  // a second record cut short
                ]
                for bytes in junk {
                    #expect(throws: DTLSError.self) { try receiver.receive(bytes) }
                    refused += 1
                }
                let reply = try receiver.receive(datagram)
                next.datagrams += reply.datagrams
                next.events += reply.events
            }
            output = next
            toServer.toggle()
        }
        #expect(refused > 0)
        #expect(pair.bothConnected, "client \(pair.client.state), server \(pair.server.state)")
    }

    /// Seeded random datagrams in four kinds: raw bytes; random content in a record header that
    /// fits; an epoch-0 handshake record (what a ClientHello or ServerHello travels in); and that
    /// with a DTLS handshake header (RFC 6347 §4.2.2) whose lengths agree, so OpenSSL's message
    /// parser runs on the random body. Each datagram is refused, ignored or fails the handshake
    /// with a reason; nothing traps. A failed session is replaced so later datagrams still reach
    /// OpenSSL, and a fresh pair then handshakes as usual.
    @Test("random bytes: errors, never a crash; a fresh session still handshakes", arguments: [UInt64(1), 2, 3])
    func random(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var pair = try DTLSPair()
        _ = try pair.client.start()
        var outcomes: [String: Int] = [:]
        for index in 0..<400 {
            let bytes = Self.randomDatagram(kind: index % 4, using: &generator)
            let receiver = index % 3 == 0 ? pair.client : pair.server
            do {
                let output = try receiver.receive(bytes)
                for event in output.events {
                    guard case .failed(let error) = event else {
                        Issue.record("random bytes produced \(event)")
                        continue
                    }
                    #expect(!error.message.isEmpty)
                    outcomes["failed: \(error.code)", default: 0] += 1
                }
                if output.events.isEmpty { outcomes["ignored", default: 0] += 1 }
            } catch let error as DTLSError {
                #expect(error.code != .invalidState)
                outcomes["refused: \(error.code)", default: 0] += 1
            }
            for session in [pair.client, pair.server] {
                if case .connected = session.state { Issue.record("random bytes connected a session") }
            }
            if isFailed(pair.client.state) || isFailed(pair.server.state) {
                pair = try DTLSPair()
                _ = try pair.client.start()
            }
        }
        #expect(outcomes["refused: not-dtls", default: 0] > 0, "\(outcomes)")
        #expect(outcomes["refused: malformed-record", default: 0] > 0, "\(outcomes)")
        #expect(outcomes["ignored", default: 0] > 0, "\(outcomes)")
        #expect(outcomes.values.reduce(0, +) == 400)

        let fresh = try DTLSPair()
        _ = try fresh.handshake()
        #expect(fresh.bothConnected)
    }

    static func randomDatagram(kind: Int, using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = generator.bytes(Int.random(in: 0...1_400, using: &generator))
        guard kind > 0, bytes.count >= 25 else { return bytes }
        let length = bytes.count - 13
        bytes[0] = UInt8.random(in: 20...23, using: &generator)
        bytes[1] = 254
        bytes[2] = Bool.random(using: &generator) ? 253 : 255
        bytes[11] = UInt8(length >> 8)
        bytes[12] = UInt8(length & 0xFF)
        guard kind > 1 else { return bytes }
        bytes[0] = 22
        bytes[3] = 0
        bytes[4] = 0
        guard kind > 2 else { return bytes }
        // Handshake header: msg_type, length (3), message_seq (2), fragment_offset (3),
        // fragment_length (3); one whole message in one fragment.
        let body = length - 12
        bytes[13] = UInt8.random(in: 0...24, using: &generator)
        bytes[14...16] = [0, UInt8(body >> 8), UInt8(body & 0xFF)]
        bytes[17...18] = [0, UInt8.random(in: 0...2, using: &generator)]
        bytes[19...21] = [0, 0, 0]
        bytes[22...24] = [0, UInt8(body >> 8), UInt8(body & 0xFF)]
        return bytes
    }
}
