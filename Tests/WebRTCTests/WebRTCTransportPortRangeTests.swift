import DTLS
import ICE
import Testing
import WebRTC

/// `Configuration.portRange` (`rtc-publish --ice-ports`) reaches the transport's ICE agent.
@Suite struct WebRTCTransportPortRangeTests {
    @Test func hostCandidatesBindOnlyInThePortRange() async throws {
        let range: ClosedRange<UInt16> = 43240...43249
        let transport = try WebRTCTransport(
            WebRTCTransport.Configuration(
                certificate: try DTLSCertificate.generate(),
                localAddresses: ["127.0.0.1"],
                portRange: range
            ),
            onEvent: { _ in }
        )
        defer { transport.stop() }
        let candidates = try await transport.gatherCandidates()
        #expect(!candidates.isEmpty)
        for candidate in candidates {
            #expect(candidate.type == .host && range.contains(candidate.port), "\(candidate) outside \(range)")
        }
    }
}
