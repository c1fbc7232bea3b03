import NIOSSL
import SignalingClient
import SignalingProtocol
import SignalingServer
import TestSupport
import Testing

@Suite("TLS")
struct TLSTests {
    @Test("a client joins over TLS with a self-signed certificate it trusts")
    func joinOverTLS() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (serverTLS, clientTLS) = try await Self.selfSignedTLS(in: directory)

        try await withServer({ $0.tls = serverTLS }) { server in
            // The client library, verifying the certificate's name.
            var configuration = clientConfiguration(port: server.port)
            configuration.tls = clientTLS
            configuration.serverHostname = "localhost"
            let client = SignalingClient(configuration: configuration, logger: testLogger)
            try await client.connect()
            let joined = try await client.join(
                room: try Fixture.room("secure"),
                uid: try Fixture.uid("alice"),
                role: .publisher
            )
            #expect(joined.room == (try Fixture.room("secure")))
            try await client.publish(Fixture.screen())

            // A raw TLS client sees the same protocol.
            let raw = try await LineClient.connect(port: server.port, tls: clientTLS, serverHostname: "localhost")
            try await raw.send(
                ClientRequest(
                    id: .number(1),
                    .join(.init(room: try Fixture.room("secure"), uid: try Fixture.uid("bob"), role: .subscriber))
                )
            )
            guard case .joined(let bobJoined) = try await raw.next().message else {
                Issue.record("raw TLS join failed")
                return
            }
            #expect(bobJoined.streams.map(\.uid) == [try Fixture.uid("alice")])

            // Plain text to a TLS port gets nowhere, and the server carries on.
            let plain = try await LineClient.connect(port: server.port)
            try await plain.send(ClientRequest(id: .number(1), .ping))
            _ = try await plain.linesUntilClosed()
            try await raw.send(ClientRequest(id: .number(2), .ping))
            #expect(try await raw.next() == ServerEnvelope(id: .number(2), .pong))

            // A client that does not trust the certificate cannot connect.
            var untrusting = clientConfiguration(port: server.port)
            untrusting.tls = .makeClientConfiguration()
            untrusting.serverHostname = "localhost"
            let stranger = SignalingClient(configuration: untrusting, logger: testLogger)
            do {
                try await stranger.connect()
                Issue.record("connected without trusting the certificate")
            } catch let error as SignalingError {
                #expect(error.code == .connectionFailed)
                #expect(error.message.hasPrefix("cannot connect to 127.0.0.1:\(server.port): "))
                #expect(error.message.contains("CERTIFICATE_VERIFY_FAILED"))
            }
            await stranger.close()
            await raw.close()
            await client.close()
        }
    }

    @Test("https and wss on the same TLS port: the page, health, and the WebSocket upgrade")
    func webOverTLS() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (serverTLS, clientTLS) = try await Self.selfSignedTLS(in: directory)
        try await withServer({ $0.tls = serverTLS }) { server in
            let https = try await LineClient.connect(port: server.port, tls: clientTLS, serverHostname: "localhost")
            let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            try await https.sendBytes(Array(request.utf8))
            let health = try await https.linesUntilClosed()
            #expect(health.first == "HTTP/1.1 200 OK" && health.last == "ok", "\(health)")

            let wss = try await LineClient.connect(port: server.port, tls: clientTLS, serverHostname: "localhost")
            let upgrade =
                "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(RawWebClient.sampleKey)\r\nSec-WebSocket-Version: 13\r\n\r\n"
            try await wss.sendBytes(Array(upgrade.utf8))
            var head: [String] = []
            while head.last != "" { head.append(try await wss.nextLine()) }
            #expect(head.first == "HTTP/1.1 101 Switching Protocols", "\(head)")
            #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "\(head)")
            await wss.close()
        }
    }

    /// A self-signed certificate for localhost and 127.0.0.1: the server's TLS with it, and a
    /// client's that trusts only it.
    static func selfSignedTLS(
        in directory: TemporaryDirectory
    ) async throws -> (server: TLSConfiguration, client: TLSConfiguration) {
        let (certificatePath, keyPath) = try await makeSelfSignedCertificate(in: directory)
        let server = try SignalingServerConfiguration.loadTLS(certificateFile: certificatePath, keyFile: keyPath)
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
        return (server, client)
    }

    @Test("unreadable certificate or key files are reported by name")
    func badFiles() throws {
        #expect(throws: ServerSetupError.self) {
            try SignalingServerConfiguration.loadTLS(
                certificateFile: "/nonexistent/cert.pem",
                keyFile: "/nonexistent/key.pem"
            )
        }
        do {
            _ = try SignalingServerConfiguration.loadTLS(
                certificateFile: "/nonexistent/cert.pem",
                keyFile: "/nonexistent/key.pem"
            )
        } catch let error as ServerSetupError {
            #expect(error.code == .tlsCertificate)
            #expect(error.message == "the TLS certificate file /nonexistent/cert.pem does not exist or is not readable")
        }
    }
}
