import DTLS
import Testing

/// RFC 5763 §5 / RFC 8827 §6.5: the certificate a peer presents must hash to the fingerprint its
/// SDP carried; anything else ends the handshake on the side that checks.
@Suite("DTLS fingerprint check")
struct DTLSFingerprintCheckTests {
    @Test("the client refuses a server certificate that does not match the remote SDP")
    func clientRefusesServer() throws {
        let wrong = Certificates.stranger.fingerprint
        let pair = try DTLSPair(clientExpects: wrong)
        let log = try pair.handshake()

        let error = try #require(failure(of: pair.client.state))
        #expect(error.code == .fingerprintMismatch)
        #expect(error.message.contains(Certificates.server.fingerprint.sdpValue), "\(error.message)")
        #expect(error.message.contains(wrong.sdpValue), "\(error.message)")
        #expect(log.clientEvents == [.failed(error)])
        #expect(pair.client.srtpKeys == nil)
        #expect(pair.client.peerFingerprint == Certificates.server.fingerprint)
        // The client told the server why: a bad_certificate alert.
        let serverError = try #require(failure(of: pair.server.state))
        #expect(serverError.code == .alertReceived)
        #expect(serverError.message.contains("bad certificate"), "\(serverError.message)")
        #expect(pair.server.srtpKeys == nil)
    }

    @Test("the server refuses a client certificate that does not match the remote SDP")
    func serverRefusesClient() throws {
        let wrong = Certificates.stranger.fingerprint
        let pair = try DTLSPair(serverExpects: wrong)
        _ = try pair.handshake()

        let error = try #require(failure(of: pair.server.state))
        #expect(error.code == .fingerprintMismatch)
        #expect(error.message.contains(Certificates.client.fingerprint.sdpValue), "\(error.message)")
        #expect(error.message.contains(wrong.sdpValue), "\(error.message)")
        #expect(pair.server.srtpKeys == nil)
        let clientError = try #require(failure(of: pair.client.state))
        #expect(clientError.code == .alertReceived, "\(clientError)")
        #expect(pair.client.srtpKeys == nil)
    }

    @Test("one differing bit is enough to refuse")
    func oneBit() throws {
        var bytes = Certificates.server.fingerprint.bytes
        bytes[31] ^= 0x01
        let pair = try DTLSPair(clientExpects: try DTLSFingerprint(bytes: bytes))
        _ = try pair.handshake()
        #expect(failure(of: pair.client.state)?.code == .fingerprintMismatch)
    }
}
