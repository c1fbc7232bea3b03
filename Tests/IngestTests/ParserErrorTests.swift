import Ingest
import NIOCore
import Testing

/// One malformed input and the error it must give.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var code: IngestError.Code
    var field: String
    var offset: Int

    var testDescription: String { name }

    init(_ name: String, _ bytes: [UInt8], _ code: IngestError.Code, _ field: String, at offset: Int) {
        self.name = name
        self.bytes = bytes
        self.code = code
        self.field = field
        self.offset = offset
    }
}

/// `bytes` with `replacement` written at `offset`.
func patch(_ bytes: [UInt8], at offset: Int, _ replacement: [UInt8]) -> [UInt8] {
    var copy = bytes
    copy.replaceSubrange(offset..<(offset + replacement.count), with: replacement)
    return copy
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

@Suite struct ParserErrorTests {
    static let hello = WireVectorTests.helloBytes
    static let video = WireVectorTests.videoBytes
    static let audio = WireVectorTests.audioBytes
    static let end = WireVectorTests.endBytes
    static let pause = WireVectorTests.pauseBytes
    static let floatAudio: [UInt8] = {
        let audio = IngestAudio(
            source: .app,
            sampleRate: 48_000,
            channels: 1,
            samples: .f32([0.25, 0.5]),
            timestamp: .none
        )
        return (try? IngestSerializer.bytes(of: .audio(audio))) ?? []
    }()

    static let cases: [MalformedCase] = [
        // Framing.
        MalformedCase("bad magic", patch(hello, at: 0, [0x58]), .badMagic, "magic", at: 0),
        MalformedCase("seed-style '&' marker", [0x26, 0x00, 0x10, 0x00], .badMagic, "magic", at: 0),
        MalformedCase("unknown type", patch(hello, at: 4, [0x09]), .unknownType, "type", at: 4),
        MalformedCase("reserved header bits", patch(hello, at: 6, [0x01]), .invalidField, "reserved", at: 6),
        MalformedCase("flags on a hello", patch(hello, at: 5, [0x01]), .invalidField, "flags", at: 5),
        MalformedCase("undefined media flag", patch(video, at: 5, [0x03]), .invalidField, "flags", at: 5),
        MalformedCase("impossible video length", patch(video, at: 8, le32(10)), .impossibleLength, "length", at: 8),
        MalformedCase("impossible control length", patch(pause, at: 8, le32(2)), .impossibleLength, "length", at: 8),
        MalformedCase(
            "video length over the limit",
            patch(video, at: 8, le32(0xFFFF_FFF0)),
            .payloadTooLarge,
            "length",
            at: 8
        ),
        MalformedCase(
            "hello length over the limit",
            patch(hello, at: 8, le32(2000)),
            .payloadTooLarge,
            "length",
            at: 8
        ),
        MalformedCase(
            "negative timescale",
            patch(video, at: 20, le32(0xFFFF_FFFF)),
            .invalidField,
            "timescale",
            at: 20
        ),
        MalformedCase(
            "value without timescale",
            patch(video, at: 20, le32(0)),
            .invalidField,
            "timestamp value",
            at: 12
        ),
        MalformedCase("timestamp on control", patch(pause, at: 20, le32(1000)), .invalidField, "timescale", at: 20),
        MalformedCase("truncated header", Array(hello.prefix(10)), .truncated, "header", at: 10),
        MalformedCase("truncated payload", Array(video.dropLast()), .truncated, "payload", at: 55),
        // Hello.
        MalformedCase("version mismatch", patch(hello, at: 24, le16(2)), .versionMismatch, "hello.version", at: 24),
        MalformedCase("version zero", patch(hello, at: 24, le16(0)), .versionMismatch, "hello.version", at: 24),
        MalformedCase("unknown role", patch(hello, at: 26, [0x03]), .invalidField, "hello.role", at: 26),
        MalformedCase("name longer than its bytes", patch(hello, at: 27, [0x04]), .lengthMismatch, "length", at: 8),
        MalformedCase("name over 64 bytes", patch(hello, at: 27, [0x41]), .invalidField, "hello.nameLength", at: 27),
        MalformedCase("name not UTF-8", patch(hello, at: 32, [0xFF]), .invalidField, "hello.name", at: 32),
        MalformedCase("name with a newline", patch(hello, at: 33, [0x0A]), .invalidField, "hello.name", at: 32),
        // Video.
        MalformedCase(
            "video length one short",
            patch(Array(video.dropLast()), at: 8, le32(31)),
            .lengthMismatch,
            "length",
            at: 8
        ),
        MalformedCase("video length one long", patch(video + [0], at: 8, le32(33)), .lengthMismatch, "length", at: 8),
        MalformedCase(
            "Y stride below width",
            patch(video, at: 32, le32(3)),
            .strideTooSmall,
            "video.strides[0] (Y plane)",
            at: 32
        ),
        MalformedCase(
            "UV stride below width",
            patch(video, at: 36, le32(2)),
            .strideTooSmall,
            "video.strides[1] (UV plane)",
            at: 36
        ),
        MalformedCase(
            "stride past the padding limit",
            patch(video, at: 32, le32(4 + 1025)),
            .invalidField,
            "video.strides[0] (Y plane)",
            at: 32
        ),
        MalformedCase(
            "stride for a missing plane",
            patch(video, at: 40, le32(4)),
            .invalidField,
            "video.strides[2]",
            at: 40
        ),
        MalformedCase(
            "width over the limit",
            patch(video, at: 28, le16(4097)),
            .dimensionsTooLarge,
            "video.width",
            at: 28
        ),
        MalformedCase(
            "height over the limit",
            patch(video, at: 30, le16(5000)),
            .dimensionsTooLarge,
            "video.height",
            at: 30
        ),
        MalformedCase("zero width", patch(video, at: 28, le16(0)), .invalidField, "video.width", at: 28),
        MalformedCase("unknown pixel format", patch(video, at: 24, [0x09]), .invalidField, "video.format", at: 24),
        MalformedCase("rotation of 45°", patch(video, at: 26, le16(45)), .invalidField, "video.rotation", at: 26),
        MalformedCase("video reserved byte", patch(video, at: 25, [0x01]), .invalidField, "video.reserved", at: 25),
        // Audio.
        MalformedCase(
            "audio length disagrees",
            patch(Array(audio.dropLast()), at: 8, le32(19)),
            .lengthMismatch,
            "length",
            at: 8
        ),
        MalformedCase("samples not whole frames", patch(audio, at: 26, le16(3)), .lengthMismatch, "length", at: 8),
        MalformedCase("unknown audio source", patch(audio, at: 24, [0x03]), .invalidField, "audio.source", at: 24),
        MalformedCase("unknown sample format", patch(audio, at: 25, [0x07]), .invalidField, "audio.format", at: 25),
        MalformedCase("no channels", patch(audio, at: 26, le16(0)), .invalidField, "audio.channels", at: 26),
        MalformedCase("nine channels", patch(audio, at: 26, le16(9)), .invalidField, "audio.channels", at: 26),
        MalformedCase("sample rate 1 kHz", patch(audio, at: 28, le32(1000)), .invalidField, "audio.sampleRate", at: 28),
        MalformedCase("empty chunk", patch(audio, at: 32, le32(0)), .invalidField, "audio.frameCount", at: 32),
        MalformedCase(
            "chunk over the limit",
            patch(audio, at: 32, le32(100_000)),
            .payloadTooLarge,
            "audio.frameCount",
            at: 32
        ),
        MalformedCase(
            "NaN sample",
            patch(floatAudio, at: 40, [0x00, 0x00, 0xC0, 0x7F]),
            .invalidField,
            "audio.samples[1]",
            at: 40
        ),
        // Control.
        MalformedCase("unknown command", patch(pause, at: 24, [0x07]), .invalidField, "control.command", at: 24),
        MalformedCase("pause with a reason", patch(pause, at: 26, le16(2)), .invalidField, "control.reason", at: 26),
        MalformedCase("end without a reason", patch(end, at: 26, le16(0)), .invalidField, "control.reason", at: 26),
        MalformedCase(
            "text over 256 bytes",
            patch(end, at: 28, le16(300)),
            .invalidField,
            "control.textLength",
            at: 28
        ),
        MalformedCase("text longer than its bytes", patch(end, at: 28, le16(4)), .lengthMismatch, "length", at: 8),
    ]

    @Test(arguments: cases)
    func malformedInputGivesItsError(_ input: MalformedCase) {
        #expect(throws: IngestError.self) { try IngestParser().parse(input.bytes) }
        do {
            _ = try IngestParser().parse(input.bytes)
        } catch {
            #expect(error.code == input.code)
            #expect(error.byteOffset == input.offset)
            #expect(error.message.hasPrefix("\(input.field) at byte \(input.offset): "), "\(error.message)")
        }
    }

    @Test func errorMessagesSayWhatWasWrong() throws {
        func message(_ bytes: [UInt8]) -> String {
            do {
                _ = try IngestParser().parse(bytes)
                return ""
            } catch {
                return error.message
            }
        }
        let video = Self.video
        #expect(
            message(patch(video, at: 0, [0x26])) == "magic at byte 0: expected 52 54 43 49 (\"RTCI\"), got 26 54 43 49"
        )
        #expect(
            message(patch(Self.hello, at: 24, le16(2)))
                == "hello.version at byte 24: the peer speaks protocol version 2; this side speaks 1"
        )
        #expect(
            message(patch(video, at: 32, le32(3)))
                == "video.strides[0] (Y plane) at byte 32: stride 3 is less than the 4 bytes of one row of a 4-wide picture"
        )
        #expect(
            message(patch(Array(video.dropLast()), at: 8, le32(31)))
                == "length at byte 8: a payload of 31 bytes disagrees with the 32 bytes a 4x2 nv12-full picture "
                + "with strides [4, 4] needs (20 + planes 8 + 4)"
        )
        #expect(message(patch(video, at: 4, [0x7F])).contains("type 0x7f is not a message type of version 1"))
        #expect(message(patch(video, at: 28, le16(4097))) == "video.width at byte 28: 4097 is over the limit of 4096")
    }

    @Test func errorsMapToEndReasons() {
        #expect(IngestError(.badMagic, "").reasonForPeer == .malformedMessage)
        #expect(IngestError(.lengthMismatch, "").reasonForPeer == .malformedMessage)
        #expect(IngestError(.strideTooSmall, "").reasonForPeer == .malformedMessage)
        #expect(IngestError(.versionMismatch, "").reasonForPeer == .versionMismatch)
        #expect(IngestError(.unknownType, "").reasonForPeer == .unknownMessageType)
        #expect(IngestError(.payloadTooLarge, "").reasonForPeer == .tooLarge)
        #expect(IngestError(.dimensionsTooLarge, "").reasonForPeer == .tooLarge)
    }

    /// The stream decoder's guarantee: a frame whose sizes disagree with its length is refused
    /// from its 44 leading bytes, before any plane is buffered.
    @Test func bodyPrefixIsCheckedBeforeThePlanesArrive() throws {
        let parser = IngestParser()
        let wrong = patch(Self.video, at: 8, le32(33))
        let prefix = ByteBuffer(bytes: wrong.prefix(44))
        let header = try #require(try parser.header(in: prefix))
        #expect(header.payloadLength == 33)
        #expect(throws: IngestError.self) { try parser.checkBodyPrefix(header, in: prefix) }
        // Before the fixed body fields are in, there is nothing to check yet.
        try parser.checkBodyPrefix(header, in: ByteBuffer(bytes: wrong.prefix(43)))
        // A header alone is not judged on its length until it is complete...
        #expect(try parser.header(in: ByteBuffer(bytes: Self.video.prefix(23))) == nil)
        // ...but a wrong magic is refused from its first byte.
        #expect(throws: IngestError.self) { try parser.header(in: ByteBuffer(bytes: [0x26])) }
    }

    @Test func limitsAreConfigurable() throws {
        let small = IngestParser(limits: IngestLimits(maxWidth: 2, maxHeight: 2))
        #expect(throws: IngestError.self) { try small.parse(Self.video) }
        let noPadding = IngestParser(limits: IngestLimits(maxStridePadding: 0))
        #expect(throws: IngestError.self) { try noPadding.parse(patch(Self.video, at: 32, le32(5))) }
        #expect(throws: IngestError.self) { try IngestLimits(maxWidth: 0).validate() }
        #expect(IngestLimits().maxVideoPayload == 20 + (4 * 4096 + 1024) * 4096)
    }
}
