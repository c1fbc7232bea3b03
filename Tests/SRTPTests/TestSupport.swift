import Foundation
import SRTP

/// Hex helpers and packet builders shared by the SRTP tests.
enum Hex {
    static func bytes(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8).filter { $0 != UInt8(ascii: " ") }
        precondition(digits.count % 2 == 0, "test vector with an odd number of hex digits")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }

    static func string(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

enum Packets {
    /// A plain RTP packet: V=2, the given payload type and marker, sequence, timestamp, SSRC, and payload.
    static func rtp(
        sequence: UInt16,
        timestamp: UInt32 = 0xDEAD_BEEF,
        ssrc: UInt32 = 0xCAFE_BABE,
        payloadType: UInt8 = 96,
        marker: Bool = false,
        payload: [UInt8] = Array(0x40..<0x58)
    ) -> [UInt8] {
        var packet: [UInt8] = [0x80, (marker ? 0x80 : 0) | (payloadType & 0x7F)]
        packet += [UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        packet += withUnsafeBytes(of: timestamp.bigEndian, Array.init)
        packet += withUnsafeBytes(of: ssrc.bigEndian, Array.init)
        return packet + payload
    }

    /// An RTCP receiver report with one report block (RFC 3550 §6.4.2), 32 bytes.
    static func receiverReport(ssrc: UInt32 = 0xCAFE_BABE) -> [UInt8] {
        [0x81, 0xC9, 0x00, 0x07] + withUnsafeBytes(of: ssrc.bigEndian, Array.init) + [0x0B, 0xAD, 0xF0, 0x0D]
            + Array(0x10..<0x24)
    }

    /// Fixed key material 00 01 02 ... for known-answer tests.
    static func fixedKeys(_ suite: SRTPSuite) throws -> SRTPKeyMaterial {
        try SRTPKeyMaterial(suite: suite, keyAndSalt: Array(0..<UInt8(suite.keyMaterialLength)))
    }
}

/// Runs the independent Python SRTP implementation in Reference/ (needs python3 with the
/// `cryptography` package; Debian: python3-cryptography).
enum PythonReference {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Reference/srtp_reference.py").path

    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceFailure(description: "srtp_reference.py \(arguments.first ?? "") failed: \(errorText)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct ReferenceFailure: Error, CustomStringConvertible {
        let description: String
    }
}
