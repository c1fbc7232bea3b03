import Foundation
import NIOSSL
import Testing
import WHIP

/// https against a loopback server with a self-signed certificate made by the openssl CLI.
@Suite(
    "WHIP over TLS",
    .timeLimit(.minutes(1)),
)
struct WHIPTLSTests {
    /// A P-256 certificate and key in a fresh directory, valid for `subjectAltName` only.
    struct Certificate {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("cert.pem").path }
        var key: String { directory.appendingPathComponent("key.pem").path }

        init(subjectAltName: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("whip-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", directory.appendingPathComponent("key.pem").path,
                "-out", directory.appendingPathComponent("cert.pem").path,
                "-days", "2", "-subj", "/CN=whip-test", "-addext", "subjectAltName=\(subjectAltName)",
            ]
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            openssl.waitUntilExit()
            try #require(openssl.terminationStatus == 0)
        }

        /// The server side of TLS with this certificate.
        func context() throws -> NIOSSLContext {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            )
            return try NIOSSLContext(configuration: configuration)
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test("trusting the server's certificate: 201 over https, the address checked against the certificate")
    func trusted() async throws {
        let certificate = try Certificate(subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withServer(tls: try certificate.context()) { server in
            server.route("/whip", Fixture.created("/session/1"))
            var configuration = Fixture.configuration()
            configuration.trustedCertificatesPEMPath = certificate.certificate
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: configuration)
            let session = try await client.publish(offer: Fixture.offer)
            #expect(session.resource.description == "https://127.0.0.1:\(server.port)/session/1")
            #expect(session.answer == Fixture.answer)
            #expect(server.requests.first?.body == Array(Fixture.offer.utf8))
        }
    }

    @Test("the system roots do not trust a self-signed certificate: .tls, nothing sent")
    func untrusted() async throws {
        let certificate = try Certificate(subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withServer(tls: try certificate.context()) { server in
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .tls, "\(error?.message ?? "no error")")
            #expect(error?.message.hasPrefix("TLS failed for POST https://127.0.0.1:\(server.port)/whip: ") == true)
            #expect(error?.message.contains("CERTIFICATE_VERIFY_FAILED") == true)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("a trusted certificate for another name: .tls")
    func wrongName() async throws {
        let certificate = try Certificate(subjectAltName: "DNS:whip.test")
        defer { certificate.remove() }
        try await withServer(tls: try certificate.context()) { server in
            var configuration = Fixture.configuration()
            configuration.trustedCertificatesPEMPath = certificate.certificate
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: configuration)
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .tls, "\(error?.message ?? "no error")")
            #expect(error?.message.hasPrefix("TLS failed for POST https://127.0.0.1:\(server.port)/whip: ") == true)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("an unreadable certificate file: .tls naming it")
    func unreadableFile() async throws {
        var configuration = Fixture.configuration()
        configuration.trustedCertificatesPEMPath = "/nonexistent/whip-ca.pem"
        let client = WHIPClient(
            endpoint: try WHIPURL(parsing: "https://127.0.0.1:9/whip"),
            configuration: configuration
        )
        let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
        #expect(error?.code == .tls)
        #expect(error?.message.hasPrefix("cannot read PEM certificates from /nonexistent/whip-ca.pem: ") == true)
    }

    @Test("a redirect from https to http is refused: the token would travel in the clear")
    func downgrade() async throws {
        let certificate = try Certificate(subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withServer(tls: try certificate.context()) { server in
            server.route("/whip", Fixture.redirect(307, to: "http://127.0.0.1:9/whip"))
            var configuration = Fixture.configuration()
            configuration.trustedCertificatesPEMPath = certificate.certificate
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: configuration)
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .insecureRedirect)
            #expect(error?.status == 307)
            #expect(
                error?.message
                    == "POST https://127.0.0.1:\(server.port)/whip answered 307 Temporary Redirect with Location "
                    + "http://127.0.0.1:9/whip: refusing to go from https to http"
            )
        }
    }
}
