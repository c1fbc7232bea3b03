import DTLS
import Foundation
import Testing

/// Our sessions against the openssl CLI over UDP on loopback: the handshake completes, the
/// fingerprint check passes on a certificate we did not make, and both sides export the same
/// keying material.
@Suite("DTLS interop with the openssl CLI", .timeLimit(.minutes(1)))
struct DTLSInteropTests {
    @Test("our client against openssl s_server", arguments: DTLSSRTPProfile.allCases)
    func clientAgainstServer(profile: DTLSSRTPProfile) async throws {
        let directory = try ScratchDirectory()
        let files = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "s_server")
        let expected = try DTLSFingerprint(
            sdp: "sha-256 " + OpenSSLTool.fingerprint(ofCertificate: files.certificate, in: directory.path)
        )
        let port = try LoopbackDatagrams.freePort()
        let server = try OpenSSLPeer(
            [
                "s_server", "-dtls1_2", "-use_srtp", profile.openSSLName,
                "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "\(profile.exportedLength)",
                "-cert", files.certificate, "-key", files.key, "-Verify", "1", "-accept", "127.0.0.1:\(port)",
            ],
            directory: directory
        )
        #expect(server.waitFor("ACCEPT", seconds: 10), "\(server.output)")

        let configuration = DTLSSession.Configuration(
            role: .client,
            certificate: Certificates.client,
            remoteFingerprint: expected
        )
        let result = try await onOwnThread {
            let socket = try LoopbackDatagrams()
            socket.peer = LoopbackDatagrams.loopback(port: port)
            let session = try DTLSSession(configuration)
            return try drive(session, over: socket, first: try session.start(), seconds: 10)
        }

        #expect(result.state == .connected(profile), "\(result.state)\n\(server.output)")
        #expect(result.peerFingerprint == expected)
        let keys = try #require(result.keys)
        let theirs = try #require(server.keyingMaterial(seconds: 5), "\(server.output)")
        #expect(theirs.count == profile.exportedLength)
        #expect(exportedBytes(keys, role: .client) == theirs)
        #expect(server.output.contains("SRTP Extension negotiated, profile=\(profile.openSSLName)"))
    }

    @Test("openssl s_client against our server", arguments: DTLSSRTPProfile.allCases)
    func serverAgainstClient(profile: DTLSSRTPProfile) async throws {
        let directory = try ScratchDirectory()
        let files = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "s_client")
        let expected = try DTLSFingerprint(
            sdp: "sha-256 " + OpenSSLTool.fingerprint(ofCertificate: files.certificate, in: directory.path)
        )
        let socket = try LoopbackDatagrams()
        let configuration = DTLSSession.Configuration(
            role: .server,
            certificate: Certificates.server,
            remoteFingerprint: expected
        )
        let client = try OpenSSLPeer(
            [
                "s_client", "-dtls1_2", "-use_srtp", profile.openSSLName,
                "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "\(profile.exportedLength)",
                "-cert", files.certificate, "-key", files.key, "-connect", "127.0.0.1:\(socket.port)",
            ],
            directory: directory
        )
        let result = try await onOwnThread {
            let session = try DTLSSession(configuration)
            return try drive(session, over: socket, first: try session.start(), seconds: 10)
        }

        #expect(result.state == .connected(profile), "\(result.state)\n\(client.output)")
        #expect(result.peerFingerprint == expected)
        let keys = try #require(result.keys)
        let theirs = try #require(client.keyingMaterial(seconds: 5), "\(client.output)")
        #expect(exportedBytes(keys, role: .server) == theirs)
    }

    @Test("our client refuses s_server's certificate when the SDP promised another")
    func clientRefusesServer() async throws {
        let directory = try ScratchDirectory()
        let files = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "impostor")
        let port = try LoopbackDatagrams.freePort()
        let server = try OpenSSLPeer(
            [
                "s_server", "-dtls1_2", "-use_srtp", "SRTP_AES128_CM_SHA1_80",
                "-cert", files.certificate, "-key", files.key, "-accept", "127.0.0.1:\(port)",
            ],
            directory: directory
        )
        #expect(server.waitFor("ACCEPT", seconds: 10), "\(server.output)")
        let configuration = DTLSSession.Configuration(
            role: .client,
            certificate: Certificates.client,
            remoteFingerprint: Certificates.stranger.fingerprint
        )
        let result = try await onOwnThread {
            let socket = try LoopbackDatagrams()
            socket.peer = LoopbackDatagrams.loopback(port: port)
            let session = try DTLSSession(configuration)
            return try drive(session, over: socket, first: try session.start(), seconds: 10)
        }
        let error = try #require(failure(of: result.state), "\(result.state)")
        #expect(error.code == .fingerprintMismatch)
        #expect(error.message.contains(Certificates.stranger.fingerprint.sdpValue))
        #expect(result.keys == nil)
        // s_server heard why.
        #expect(server.waitFor("bad certificate", seconds: 5), "\(server.output)")
    }
}
