import DTLS
import SRTP

/// A client and a server session that expect each other's certificates (unless told otherwise),
/// joined in memory: every datagram one returns is handed to the other.
struct DTLSPair {
    let client: DTLSSession
    let server: DTLSSession

    init(
        clientProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
        serverProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
        clientExpects: DTLSFingerprint = Certificates.server.fingerprint,
        serverExpects: DTLSFingerprint = Certificates.client.fingerprint,
        mtu: Int = 1200,
        handshakeTimeout: Duration = .seconds(30)
    ) throws {
        client = try DTLSSession(
            .init(
                role: .client,
                certificate: Certificates.client,
                remoteFingerprint: clientExpects,
                srtpProfiles: clientProfiles,
                mtu: mtu,
                handshakeTimeout: handshakeTimeout
            )
        )
        server = try DTLSSession(
            .init(
                role: .server,
                certificate: Certificates.server,
                remoteFingerprint: serverExpects,
                srtpProfiles: serverProfiles,
                mtu: mtu,
                handshakeTimeout: handshakeTimeout
            )
        )
    }

    /// What happened in an exchange: each side's events, and the flights (outputs with datagrams)
    /// each sent, in order.
    struct Log {
        var clientEvents: [DTLSEvent] = []
        var serverEvents: [DTLSEvent] = []
        var clientFlights: [[[UInt8]]] = []
        var serverFlights: [[[UInt8]]] = []
    }

    enum Side { case client, server }

    /// Passes `first` (what `from` just produced) to the other side, and so on, until nobody has
    /// anything more to send. `drop` sees each flight with its side and number (0-based per side)
    /// and may lose it. A datagram the receiver refuses is a test failure (rethrown).
    @discardableResult
    func exchange(
        _ first: DTLSOutput,
        from origin: Side,
        log: inout Log,
        drop: (Side, Int) -> Bool = { _, _ in false }
    ) throws -> Log {
        var pending: [(Side, DTLSOutput)] = [(origin, first)]
        var rounds = 0
        while !pending.isEmpty, rounds < 100 {
            rounds += 1
            let (side, output) = pending.removeFirst()
            switch side {
            case .client: log.clientEvents += output.events
            case .server: log.serverEvents += output.events
            }
            guard !output.datagrams.isEmpty else { continue }
            let number = side == .client ? log.clientFlights.count : log.serverFlights.count
            if side == .client {
                log.clientFlights.append(output.datagrams)
            } else {
                log.serverFlights.append(output.datagrams)
            }
            if drop(side, number) { continue }
            let receiver = side == .client ? server : client
            var answer = DTLSOutput()
            for datagram in output.datagrams {
                // A closed or failed receiver refuses further datagrams (an alert crossing a
                // close_notify); that is the end of the conversation, not a test failure.
                guard receiver.state != .closed, !isFailed(receiver.state) else { break }
                let reply = try receiver.receive(datagram)
                answer.datagrams += reply.datagrams
                answer.events += reply.events
            }
            pending.append((side == .client ? .server : .client, answer))
        }
        return log
    }

    /// Starts the client and runs the exchange to its end.
    func handshake(drop: (Side, Int) -> Bool = { _, _ in false }) throws -> Log {
        var log = Log()
        return try exchange(try client.start(), from: .client, log: &log, drop: drop)
    }

    /// Waits out retransmission timers and passes what they produce until both sides are
    /// connected (or one failed) or `limit` passes.
    func recover(log: inout Log, limit: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while clock.now < deadline, !bothConnected, !isFailed(client.state), !isFailed(server.state) {
            let waits = [client.nextTimeout, server.nextTimeout].compactMap { $0 }
            let wait = min(waits.min() ?? .milliseconds(50), .milliseconds(500))
            try await Task.sleep(for: wait + .milliseconds(5))
            try exchange(client.handleTimeout(), from: .client, log: &log)
            try exchange(server.handleTimeout(), from: .server, log: &log)
        }
    }

    var bothConnected: Bool {
        if case .connected = client.state, case .connected = server.state { return true }
        return false
    }
}

func isFailed(_ state: DTLSState) -> Bool {
    if case .failed = state { return true }
    return false
}

func failure(of state: DTLSState) -> DTLSError? {
    if case .failed(let error) = state { return error }
    return nil
}

/// A plain RTP packet (V=2, PT 96) to run through the SRTP sessions the keys open.
func rtpPacket(sequence: UInt16, payload: [UInt8] = Array(0x40..<0x80)) -> [UInt8] {
    var packet: [UInt8] = [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
    packet += [0, 0, 0x12, 0x34, 0xCA, 0xFE, 0xBA, 0xBE]
    return packet + payload
}

/// Protects `packet` with `sender` and returns what `receiver` makes of it.
func roundTrip(_ packet: [UInt8], from sender: SRTPSession, to receiver: SRTPSession) throws -> [UInt8] {
    var buffer = packet + [UInt8](repeating: 0, count: sender.rtpTrailerLength)
    let protected = try buffer.withUnsafeMutableBytes { try sender.protect(buffer: $0, length: packet.count) }
    let clear = try buffer.withUnsafeMutableBytes { try receiver.unprotect(buffer: $0, length: protected) }
    return Array(buffer.prefix(clear))
}
