import DTLS
import Foundation

/// Hex for test vectors and for comparing with what the openssl CLI prints.
enum Hex {
    static func bytes(_ text: some StringProtocol) -> [UInt8] {
        let digits = Array(text.utf8).filter { $0 != UInt8(ascii: " ") }
        precondition(digits.count % 2 == 0, "test vector with an odd number of hex digits")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }

    static func upper(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }
}

/// SplitMix64: a seeded generator, so "random" garbage is the same bytes on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Certificates are made once: generating a P-256 key is cheap, but the tests need many.
enum Certificates {
    static let client: DTLSCertificate = {
        do { return try DTLSCertificate.generate(commonName: "dtls-test-client") } catch { fatalError("\(error)") }
    }()
    static let server: DTLSCertificate = {
        do { return try DTLSCertificate.generate(commonName: "dtls-test-server") } catch { fatalError("\(error)") }
    }()
    /// A third certificate whose fingerprint neither side presents.
    static let stranger: DTLSCertificate = {
        do { return try DTLSCertificate.generate(commonName: "dtls-test-stranger") } catch { fatalError("\(error)") }
    }()
}
