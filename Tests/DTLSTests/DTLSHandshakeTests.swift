import DTLS
import SRTP
import Testing

@Suite("DTLS handshake in memory")
struct DTLSHandshakeTests {
    /// The server takes one profile, so each is negotiated once; the client offers both.
    @Test("client and server connect with the same profile and crossed keys", arguments: DTLSSRTPProfile.allCases)
    func handshake(profile: DTLSSRTPProfile) throws {
        let pair = try DTLSPair(serverProfiles: [profile])
        let log = try pair.handshake()

        #expect(log.clientEvents == [.connected(profile)])
        #expect(log.serverEvents == [.connected(profile)])
        #expect(pair.client.state == .connected(profile))
        #expect(pair.server.state == .connected(profile))
        let clientKeys = try #require(pair.client.srtpKeys)
        let serverKeys = try #require(pair.server.srtpKeys)
        #expect(clientKeys.profile == profile)
        #expect(clientKeys.local.suite == profile.suite)
        // What one side sends with, the other receives with (RFC 5764 §4.2).
        #expect(clientKeys.local == serverKeys.remote)
        #expect(clientKeys.remote == serverKeys.local)
        #expect(clientKeys.local != clientKeys.remote)
        #expect(pair.client.peerFingerprint == Certificates.server.fingerprint)
        #expect(pair.server.peerFingerprint == Certificates.client.fingerprint)
        // Every handshake datagram fits the 1200-byte MTU.
        for datagram in (log.clientFlights + log.serverFlights).joined() { #expect(datagram.count <= 1200) }
    }

    @Test("a certificate loaded from PEM files serves a handshake like a generated one")
    func loadedCertificate() throws {
        let directory = try ScratchDirectory()
        let files = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "loaded")
        let certificate = try DTLSCertificate(certificatePath: files.certificate, privateKeyPath: files.key)
        let client = try DTLSSession(
            .init(role: .client, certificate: certificate, remoteFingerprint: Certificates.server.fingerprint)
        )
        let server = try DTLSSession(
            .init(role: .server, certificate: Certificates.server, remoteFingerprint: certificate.fingerprint)
        )
        var flight = try client.start().datagrams
        var toServer = true
        for _ in 0..<6 where !flight.isEmpty {
            flight = try flight.flatMap { try (toServer ? server : client).receive($0).datagrams }
            toServer.toggle()
        }
        #expect(client.state == .connected(.aeadAES128GCM))
        #expect(server.state == .connected(.aeadAES128GCM))
        #expect(server.peerFingerprint == certificate.fingerprint)
    }

    /// With a small MTU, DTLS fragments the certificate flights (RFC 6347 §4.2.3) and the records
    /// OpenSSL wrote to the memory BIO are cut into datagrams that each fit.
    @Test(
        "a small MTU fragments flights into datagrams that fit, and the handshake completes",
        arguments: [256, 400]
    )
    func smallMTU(mtu: Int) throws {
        let pair = try DTLSPair(mtu: mtu)
        let log = try pair.handshake()
        #expect(pair.bothConnected, "client \(pair.client.state), server \(pair.server.state)")
        let datagrams = Array((log.clientFlights + log.serverFlights).joined())
        for datagram in datagrams { #expect(datagram.count <= mtu) }
        #expect(log.serverFlights.contains { $0.count > 1 }, "no flight needed more than one datagram")
        #expect(pair.client.srtpKeys?.local == pair.server.srtpKeys?.remote)
    }

    @Test(
        "the keys open SRTP sessions that understand each other in both directions",
        arguments: DTLSSRTPProfile.allCases
    )
    func keysFeedSRTP(profile: DTLSSRTPProfile) throws {
        let pair = try DTLSPair(serverProfiles: [profile])
        _ = try pair.handshake()
        let clientKeys = try #require(pair.client.srtpKeys)
        let serverKeys = try #require(pair.server.srtpKeys)

        let clientSends = try SRTPSession(keys: clientKeys.local, direction: .outbound)
        let serverHears = try SRTPSession(keys: serverKeys.remote, direction: .inbound)
        let serverSends = try SRTPSession(keys: serverKeys.local, direction: .outbound)
        let clientHears = try SRTPSession(keys: clientKeys.remote, direction: .inbound)
        #expect(clientSends.suite == profile.suite)
        #expect(try roundTrip(rtpPacket(sequence: 1), from: clientSends, to: serverHears) == rtpPacket(sequence: 1))
        #expect(try roundTrip(rtpPacket(sequence: 7), from: serverSends, to: clientHears) == rtpPacket(sequence: 7))
        // Crossed the wrong way, authentication fails: the two directions have different keys.
        let wrongWay = try SRTPSession(keys: clientKeys.local, direction: .inbound)
        #expect(throws: SRTPError.self) { try roundTrip(rtpPacket(sequence: 2), from: serverSends, to: wrongWay) }
    }

    @Test("both sides with the default offer prefer AEAD_AES_128_GCM")
    func defaultOfferPrefersGCM() throws {
        let pair = try DTLSPair()
        _ = try pair.handshake()
        #expect(pair.client.state == .connected(.aeadAES128GCM))
        #expect(pair.server.state == .connected(.aeadAES128GCM))
    }

    @Test("no common SRTP profile fails the handshake on both sides")
    func noCommonProfile() throws {
        let pair = try DTLSPair(clientProfiles: [.aeadAES128GCM], serverProfiles: [.aesCM128HmacSHA1_80])
        let log = try pair.handshake()
        let clientError = try #require(failure(of: pair.client.state))
        #expect(clientError.code == .noSRTPProfile || clientError.code == .alertReceived, "\(clientError)")
        #expect(isFailed(pair.server.state) || pair.server.state == .closed, "\(pair.server.state)")
        #expect(pair.client.srtpKeys == nil)
        #expect(!log.clientEvents.contains(.connected(.aeadAES128GCM)))
    }

    /// The server's first flight (ServerHello ... ServerHelloDone) is lost. The client's
    /// retransmission timer (1 s, RFC 6347 §4.2.4.1) resends the ClientHello, the server answers
    /// again, and the handshake completes.
    @Test("a lost server flight is recovered by retransmission", .timeLimit(.minutes(1)))
    func lostFlight() async throws {
        let pair = try DTLSPair()
        var log = try pair.handshake(drop: { side, number in side == .server && number == 0 })
        #expect(pair.client.state == .handshaking)
        let timeout = try #require(pair.client.nextTimeout)
        #expect(timeout > .zero && timeout <= .seconds(1))

        try await pair.recover(log: &log, limit: .seconds(10))

        #expect(pair.bothConnected, "client \(pair.client.state), server \(pair.server.state)")
        #expect(pair.client.retransmissions + pair.server.retransmissions >= 1)
        #expect(pair.client.srtpKeys?.local == pair.server.srtpKeys?.remote)
        #expect(log.serverFlights.count >= 2)
    }

    /// The client's second flight (Certificate ... Finished) is lost: the server waits, its timer
    /// resends its flight, the client answers with its flight again.
    @Test("a lost client flight is recovered by retransmission", .timeLimit(.minutes(1)))
    func lostClientFlight() async throws {
        let pair = try DTLSPair()
        var log = try pair.handshake(drop: { side, number in side == .client && number == 1 })
        #expect(pair.server.state == .handshaking)
        try await pair.recover(log: &log, limit: .seconds(10))
        #expect(pair.bothConnected, "client \(pair.client.state), server \(pair.server.state)")
        #expect(pair.client.srtpKeys?.remote == pair.server.srtpKeys?.local)
    }

    @Test("a handshake with no answer fails at its time limit")
    func handshakeTimeout() async throws {
        let pair = try DTLSPair(handshakeTimeout: .milliseconds(200))
        _ = try pair.client.start()
        let wait = try #require(pair.client.nextTimeout)
        #expect(wait <= .milliseconds(200))
        // Early: nothing to do yet.
        #expect(pair.client.handleTimeout().events.isEmpty)
        try await Task.sleep(for: wait + .milliseconds(20))
        let output = pair.client.handleTimeout()
        let error = try #require(failure(of: pair.client.state))
        #expect(error.code == .handshakeTimeout)
        #expect(output.events == [.failed(error)])
        #expect(pair.client.nextTimeout == nil)
    }

    @Test("close sends close_notify; the peer reports it and closes")
    func closeNotify() throws {
        let pair = try DTLSPair()
        _ = try pair.handshake()
        let goodbye = pair.client.close()
        #expect(pair.client.state == .closed)
        #expect(goodbye.datagrams.count == 1)
        // An alert record (content type 21).
        #expect(goodbye.datagrams.first?.first == 21)
        var events: [DTLSEvent] = []
        for datagram in goodbye.datagrams { events += try pair.server.receive(datagram).events }
        #expect(events == [.closedByPeer])
        #expect(pair.server.state == .closed)
        #expect(pair.server.srtpKeys != nil)
    }

    @Test("calls out of order are refused with invalid-state, not a trap")
    func invalidState() throws {
        let pair = try DTLSPair()
        // A client receives only after start().
        let early = #expect(throws: DTLSError.self) {
            try pair.client.receive([22, 254, 253] + [UInt8](repeating: 0, count: 10))
        }
        #expect(early?.code == .invalidState)
        _ = try pair.client.start()
        let twice = #expect(throws: DTLSError.self) { try pair.client.start() }
        #expect(twice?.code == .invalidState)
        _ = pair.client.close()
        let closed = #expect(throws: DTLSError.self) {
            try pair.client.receive([22, 254, 253] + [UInt8](repeating: 0, count: 10))
        }
        #expect(closed?.code == .invalidState)
        #expect(pair.client.handleTimeout() == DTLSOutput())
        #expect(pair.client.nextTimeout == nil)
    }

    @Test("configurations that cannot work are refused")
    func invalidConfiguration() {
        let base = DTLSSession.Configuration(
            role: .client,
            certificate: Certificates.client,
            remoteFingerprint: Certificates.server.fingerprint
        )
        var tinyMTU = base
        tinyMTU.mtu = 100
        var noProfiles = base
        noProfiles.srtpProfiles = []
        var twice = base
        twice.srtpProfiles = [.aeadAES128GCM, .aeadAES128GCM]
        var noTime = base
        noTime.handshakeTimeout = .zero
        for configuration in [tinyMTU, noProfiles, twice, noTime] {
            let error = #expect(throws: DTLSError.self) { try DTLSSession(configuration) }
            #expect(error?.code == .invalidConfiguration)
        }
    }
}
