import Foundation
import Testing

@testable import SDP

/// Inputs the FuzzSDP target once crashed on (Fuzz/), replayed with the same invariant: whatever
/// parses must write, parse back equal, and write to the same text again.
@Suite("SDP fuzz findings")
struct SDPFuzzFindingTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "FuzzFindings"
    )

    static var findings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test("there are recorded findings to replay")
    func findingsExist() {
        #expect(!Self.findings.isEmpty)
    }

    @Test("each finding holds the round-trip invariant", arguments: findings)
    func replay(name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
        guard let parsed = try? SDPParser.parse(bytes: bytes) else { return }
        let text = try SDPWriter.write(parsed)
        let reparsed = try SDPParser.parse(text)
        #expect(reparsed == parsed)
        #expect(try SDPWriter.write(reparsed) == text)
    }

    /// The first finding: a non-ASCII byte in the format token of a non-RTP m= line was accepted by
    /// the parser but refused by the writer. The parser now refuses it, naming the line.
    @Test("non-ASCII format tokens are refused by the parser")
    func nonASCIIFormat() {
        let text = "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP web\u{E9}rtc\r\n"
        let error = #expect(throws: SDPError.self) { try SDPParser.parse(text) }
        #expect(error?.message == "line 5: m= line has an invalid format 'web?rtc'")
    }
}
