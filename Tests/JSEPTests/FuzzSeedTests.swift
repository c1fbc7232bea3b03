import Foundation
import JSEP
import Testing

/// The FuzzJSEP seeds (Fuzz/Corpus/FuzzJSEP) are the fixtures as a peer sends them, plus our
/// answer to Chromium: each must still parse and, for offers, be answered soundly, or the fuzzer
/// would start from inputs that no longer reach the answer builder.
@Suite("FuzzJSEP seeds")
struct FuzzSeedTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz/Corpus/FuzzJSEP").standardized

    static var seeds: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test("every fixture is a seed, byte for byte")
    func fixturesAreSeeds() throws {
        let texts = try Self.seeds.map {
            try String(contentsOf: Self.directory.appendingPathComponent($0), encoding: .utf8)
        }
        for fixture in OfferFixtures.all {
            #expect(texts.contains(fixture.text), "\(fixture.name) is not among the seeds")
        }
    }

    @Test("each seed parses; offers are answered soundly", arguments: seeds)
    func seed(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let offer = try WebRTCOffer(parsing: bytes)
        guard name != "answer.seed" else { return }
        let configuration = try Publisher.configuration()
        let answer = try WebRTCAnswer(answering: offer, configuration: configuration)
        #expect(AnswerInvariants.violations(of: answer, for: offer, configuration: configuration) == [])
    }
}
