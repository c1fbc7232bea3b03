import JSEP
import Testing

/// Seeded random damage to the fixtures: whatever comes out, nothing crashes, every failure is
/// a `JSEPError` with a bounded, printable reason, parse errors name a line that exists (or say
/// which required line is missing), and every answer that is produced keeps the invariants.
@Suite("JSEP mutations")
struct MutationTests {
    /// SplitMix64: a fixed seed gives the same mutations on every run and machine.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Line-level and byte-level damage of the kinds a broken or hostile peer produces.
    static func mutate(_ text: String, using random: inout SeededGenerator) -> [UInt8] {
        var lines = text.components(separatedBy: "\r\n")
        let index = Int.random(in: 0..<lines.count, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            lines.remove(at: index)
        case 1:
            lines.insert(lines[index], at: index)
        case 2:
            lines.swapAt(index, Int.random(in: 0..<lines.count, using: &random))
        case 3:
            let line = Array(lines[index].utf8)
            lines[index] = String(decoding: line.prefix(Int.random(in: 0...line.count, using: &random)), as: UTF8.self)
        case 4:
            // Replace one space-separated field with a token from another line.
            var fields = lines[index].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            let donor = lines[Int.random(in: 0..<lines.count, using: &random)].split(separator: " ")
            if !fields.isEmpty, let field = donor.randomElement(using: &random) {
                fields[Int.random(in: 0..<fields.count, using: &random)] = String(field)
            }
            lines[index] = fields.joined(separator: " ")
        default:
            break
        }
        var bytes = Array(lines.joined(separator: "\r\n").utf8)
        if Int.random(in: 0..<2, using: &random) == 0, !bytes.isEmpty {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                let interesting: [UInt8] = [0x00, 0x0A, 0x0D, 0x20, 0x3A, 0x2F, 0x3D, 0x30, 0x39, 0x7F, 0xC3, 0xFF]
                bytes[position] =
                    Bool.random(using: &random)
                    ? interesting.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
        }
        return bytes
    }

    @Test("mutated offers never crash and fail with a named line", arguments: OfferFixtures.all)
    func mutations(_ fixture: OfferFixtures.Fixture) throws {
        var random = SeededGenerator(state: 0x5EED_0000 &+ UInt64(fixture.name.utf8.count))
        let configuration = try Publisher.configuration()
        var outcomes = (parseErrors: 0, rejections: 0, answers: 0)
        for _ in 0..<300 {
            let bytes = Self.mutate(fixture.text, using: &random)
            let lineCount = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).count
            let offer: WebRTCOffer
            do {
                offer = try WebRTCOffer(parsing: bytes)
            } catch let error as JSEPError {
                outcomes.parseErrors += 1
                check(error)
                if let line = error.line {
                    #expect((1...lineCount).contains(line), "\(error)")
                    #expect(error.reason.hasPrefix("line \(line) ("), "\(error)")
                } else {
                    let lineless = [
                        "is empty", "has no o= line", "has no s= line", "has no t= line", "bytes, more than",
                    ]
                    #expect(lineless.contains { error.reason.contains($0) }, "\(error)")
                }
                continue
            }
            do {
                let answer = try WebRTCAnswer(answering: offer, configuration: configuration)
                outcomes.answers += 1
                #expect(AnswerInvariants.violations(of: answer, for: offer, configuration: configuration) == [])
            } catch let error as JSEPError {
                outcomes.rejections += 1
                check(error)
                #expect(error.line == nil)
            }
        }
        // The mix shows the damage reaches all three outcomes.
        #expect(outcomes.parseErrors > 30 && outcomes.answers > 30, "\(outcomes)")
    }

    private func check(_ error: JSEPError) {
        #expect(!error.reason.isEmpty)
        #expect(error.reason.utf8.count <= JSEPError.maximumReasonBytes)
        #expect(error.reason.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
    }
}
