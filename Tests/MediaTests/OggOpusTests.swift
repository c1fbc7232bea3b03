import Foundation
import Media
import Testing

@Suite("Ogg Opus writer")
struct OggOpusTests {
    typealias S = AudioTestSupport
    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory()
    }

    @Test("the Ogg CRC is CRC-32 poly 0x04C11DB7, init 0, unreflected (check value of \"123456789\")")
    func crcCheckValue() {
        #expect(OggCRC.checksum(Array("123456789".utf8)) == 0x89A1_897F)
        #expect(OggCRC.checksum([]) == 0)
    }

    @Test("a page is byte-exact: header fields, lacing, data, checksum")
    func pageBytes() throws {
        var page = OggPageAssembler()
        try page.append([0x01, 0x02, 0x03])
        var bytes: [UInt8] = []
        page.finishPage(
            headerType: .beginningOfStream,
            granulePosition: 0x0102_0304_0506_0708,
            serialNumber: 0xA1B2_C3D4,
            sequenceNumber: 5,
            into: &bytes
        )
        var expected: [UInt8] = [0x4F, 0x67, 0x67, 0x53, 0x00, 0x02]
        expected += [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]  // granule, LE
        expected += [0xD4, 0xC3, 0xB2, 0xA1]  // serial, LE
        expected += [0x05, 0x00, 0x00, 0x00]  // sequence, LE
        expected += [0x00, 0x00, 0x00, 0x00]  // checksum placeholder
        expected += [0x01, 0x03, 0x01, 0x02, 0x03]  // one segment of 3 bytes, then the data
        let crc = OggCRC.checksum(expected)
        expected.replaceSubrange(22..<26, with: (0..<4).map { UInt8(truncatingIfNeeded: crc >> UInt32(8 * $0)) })
        #expect(bytes == expected)
        #expect(page.isEmpty)
    }

    @Test("lacing: 255-byte runs end with a value below 255, a multiple of 255 with a 0")
    func lacing() throws {
        for (length, lacing) in [
            (0, [0]), (254, [254]), (255, [255, 0]), (510, [255, 255, 0]), (600, [255, 255, 90]),
        ] {
            var page = OggPageAssembler()
            try page.append([UInt8](repeating: 0xAB, count: length))
            var bytes: [UInt8] = []
            page.finishPage(headerType: [], granulePosition: -1, serialNumber: 1, sequenceNumber: 1, into: &bytes)
            #expect(Int(bytes[26]) == lacing.count)
            #expect(Array(bytes[27..<(27 + lacing.count)]) == lacing.map(UInt8.init))
            #expect(bytes.count == 27 + lacing.count + length)
            #expect(Array(bytes[6..<14]) == [UInt8](repeating: 0xFF, count: 8))
        }
        var full = OggPageAssembler()
        for _ in 0..<254 { try full.append([1, 2]) }
        #expect(full.canAppend(bytes: 254) && !full.canAppend(bytes: 255))
        #expect(throws: MediaError.self) { try full.append([UInt8](repeating: 0, count: 255)) }
        var page = OggPageAssembler()
        #expect(throws: MediaError.self) { try page.append([UInt8](repeating: 0, count: 65_025)) }
    }

    @Test("OpusHead and OpusTags are byte-exact (RFC 7845 §5)")
    func headers() throws {
        let head = try OggOpusWriter.opusHead(channels: 2, preSkip: 312, inputSampleRate: 44_100)
        #expect(head == Array("OpusHead".utf8) + [0x01, 0x02, 0x38, 0x01, 0x44, 0xAC, 0x00, 0x00, 0x00, 0x00, 0x00])
        let tags = try OggOpusWriter.opusTags(vendor: "v", comments: ["A=b"])
        #expect(tags == Array("OpusTags".utf8) + [1, 0, 0, 0, 0x76, 1, 0, 0, 0, 3, 0, 0, 0, 0x41, 0x3D, 0x62])
        #expect(throws: MediaError.self) {
            _ = try OggOpusWriter.opusHead(channels: 3, preSkip: 0, inputSampleRate: 48_000)
        }
        #expect(throws: MediaError.self) {
            _ = try OggOpusWriter.opusHead(channels: 2, preSkip: 70_000, inputSampleRate: 48_000)
        }
        #expect(throws: MediaError.self) { _ = try OggOpusWriter.opusTags(vendor: "v", comments: ["no equals sign"]) }
    }

    @Test("ffmpeg decodes our Ogg Opus file: exact duration, tone and alignment survive")
    func ffmpegDecodes() throws {
        let path = scratch.path("tone.opus")
        let encoder = try OpusEncoder()
        let frames = 48_000 + 500  // not a whole number of packets: the end is trimmed
        let input = S.sine(frequency: 440, sampleRate: 48_000, frames: frames, channels: 2, amplitude: 0.5)
        let writer = try OggOpusWriter(
            path: path,
            preSkip: encoder.lookahead,
            serialNumber: 0x1234,
            comments: ["ENCODER=tests"],
            packetsPerPage: 10
        )
        var padded = input + [Float](repeating: 0, count: (960 - frames % 960) * 2 + 960 * 2)
        padded.removeLast(padded.count % 1920)
        var packet = OpusPacket()
        for offset in stride(from: 0, to: padded.count, by: 1920) {
            try Array(padded[offset..<(offset + 1920)]).withUnsafeBufferPointer {
                try encoder.encode($0, captureTime: 0, into: &packet)
            }
            try writer.write(packet)
        }
        try writer.finish(validSamples: Int64(frames))

        let pcm = S.floats(
            fromS16LE: try S.run("ffmpeg", ["-v", "error", "-i", path, "-f", "s16le", "-ac", "2", "-ar", "48000", "-"])
        )
        #expect(pcm.count == frames * 2, "ffmpeg decoded \(pcm.count / 2) frames, wrote \(frames)")
        let left = S.channel(pcm, 0, of: 2)
        #expect(abs(S.zeroCrossingFrequency(Array(left[4800...]), sampleRate: 48_000) - 440) < 0.1)
        #expect(abs(S.decibels(S.rms(left[4800...]) / (0.5 / 2.0.squareRoot()))) < 0.5)
        // ffmpeg applied our pre-skip: its output lines up with the input sample for sample.
        let original = S.channel(input, 0, of: 2)
        let n = min(left.count, original.count)
        #expect(S.correlation(original[4800..<n], left[4800..<n]) > 0.98)
    }

    @Test("the file's pages carry the stream structure RFC 7845 asks for")
    func pageStructure() throws {
        let path = scratch.path("layout.opus")
        let encoder = try OpusEncoder()
        let writer = try OggOpusWriter(path: path, preSkip: encoder.lookahead, serialNumber: 0xCAFE, packetsPerPage: 2)
        for _ in 0..<5 { try writer.write(encoder.encode([Float](repeating: 0, count: 1920))) }
        try writer.finish()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))

        var pages: [(type: UInt8, granule: Int64, sequence: UInt32, packets: Int)] = []
        var offset = 0
        while offset < bytes.count {
            #expect(Array(bytes[offset..<(offset + 4)]) == Array("OggS".utf8))
            let segments = Int(bytes[offset + 26])
            let lacing = bytes[(offset + 27)..<(offset + 27 + segments)]
            let length = 27 + segments + lacing.reduce(0) { $0 + Int($1) }
            var page = Array(bytes[offset..<(offset + length)])
            let stored = page[22..<26].enumerated().reduce(UInt32(0)) {
                $0 | UInt32($1.element) << UInt32(8 * $1.offset)
            }
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            #expect(OggCRC.checksum(page) == stored)
            let granule = (0..<8).reduce(Int64(0)) { $0 | Int64(bytes[offset + 6 + $1]) << Int64(8 * $1) }
            let sequence = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + 18 + $1]) << UInt32(8 * $1) }
            pages.append((bytes[offset + 5], granule, sequence, lacing.filter { $0 < 255 }.count))
            offset += length
        }
        #expect(offset == bytes.count)
        #expect(pages.map(\.type) == [0x02, 0x00, 0x00, 0x00, 0x04])
        #expect(pages.map(\.sequence) == [0, 1, 2, 3, 4])
        #expect(pages.map(\.packets) == [1, 1, 2, 2, 1])
        #expect(pages.map(\.granule) == [0, 0, 1920, 3840, 4800])
        #expect(Array(bytes[28..<36]) == Array("OpusHead".utf8))
    }

    @Test("malformed packets and bad settings are rejected before they reach the file")
    func rejects() throws {
        let path = scratch.path("bad.opus")
        #expect(throws: MediaError.self) { _ = try OggOpusWriter(path: path, preSkip: 312, packetsPerPage: 0) }
        let writer = try OggOpusWriter(path: path, preSkip: 312)
        #expect {
            try [UInt8]().withUnsafeBufferPointer { try writer.write(packet: $0) }
        } throws: { error in
            (error as? MediaError)?.code == .invalidAudio
        }
        #expect {
            try [UInt8]([0x03]).withUnsafeBufferPointer { try writer.write(packet: $0) }
        } throws: { error in
            (error as? MediaError)?.message == "Opus packet of 1 bytes: corrupted stream"
        }
        let encoder = try OpusEncoder()
        var packet = try encoder.encode([Float](repeating: 0, count: 1920))
        packet.sampleCount = 480
        #expect {
            try writer.write(packet)
        } throws: { error in
            (error as? MediaError)?.message == "Opus packet's TOC says 960 samples, its sampleCount says 480"
        }
        #expect(writer.granulePosition == 0)
        try writer.finish()
        #expect(throws: MediaError.self) { try writer.write(encoder.encode([Float](repeating: 0, count: 1920))) }
        #expect(throws: MediaError.self) { _ = try OggOpusWriter(path: "/nonexistent/dir/x.opus", preSkip: 0) }
    }
}
