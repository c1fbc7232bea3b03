/// What a RIFF/WAVE file's header says about its samples, and where they are.
///
/// Layout (Microsoft "Multimedia Programming Interface and Data Specifications 1.0", RIFF
/// chapter, and "Multiple Channel Audio Data and WAVE Files" for WAVE_FORMAT_EXTENSIBLE):
/// `"RIFF" size "WAVE"` followed by chunks, each `id(4) size(4 LE) payload`, padded to an even
/// length. `fmt ` describes the samples and must come before `data`; every other chunk (LIST,
/// fact, bext, JUNK, …) is skipped.
public struct WAVFormat: Sendable, Equatable {
    public enum SampleFormat: Sendable, Equatable {
        /// Format tag 1 with 16 bits per sample.
        case int16
        /// Format tag 3 (IEEE float) with 32 bits per sample.
        case float32

        public var bytesPerSample: Int {
            switch self {
            case .int16: 2
            case .float32: 4
            }
        }
    }

    public var sampleFormat: SampleFormat
    public var sampleRate: Int
    public var channels: Int
    /// Byte offset of the first sample in the file.
    public var dataOffset: Int
    /// Whole frames in the data chunk; a trailing partial frame is ignored.
    public var frameCount: Int

    public var bytesPerFrame: Int { channels * sampleFormat.bytesPerSample }

    /// Bounds the walk over chunks before `data`, so a file made of millions of empty chunks
    /// cannot keep a reader busy; real files carry a handful.
    static let maxChunksBeforeData = 1024

    /// The GUID tail shared by every KSDATAFORMAT_SUBTYPE_* (the first two bytes hold the
    /// classic format tag): 0000xxxx-0000-0010-8000-00AA00389B71.
    static let subformatGUIDTail: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
    ]

    static let extensibleTag = 0xFFFE

    /// Reads and checks the header of `file`; the error names the file, the chunk and the field.
    static func parse(_ file: POSIXFile) throws(MediaError) -> WAVFormat {
        let name = file.displayName
        let fileSize = try file.size()
        guard fileSize >= 12 else {
            throw MediaError(.truncated, "\(name): RIFF header: file has \(fileSize) bytes, needs 12")
        }
        let riff = try readBytes(file, at: 0, count: 12)
        let magic = fourCC(riff, at: 0)
        guard magic == "RIFF" else {
            let reason =
                switch magic {
                case "RF64": "RF64 (64-bit WAVE) is not supported"
                case "RIFX": "RIFX (big-endian WAVE) is not supported"
                default: "not a RIFF file (starts with '\(magic)')"
                }
            throw MediaError(.badHeader, "\(name): \(reason)")
        }
        let form = fourCC(riff, at: 8)
        guard form == "WAVE" else {
            throw MediaError(.badHeader, "\(name): RIFF form type is '\(form)', not 'WAVE'")
        }

        var format: (SampleFormat, rate: Int, channels: Int)?
        var offset = 12
        var chunks = 0
        while offset + 8 <= fileSize {
            chunks += 1
            guard chunks <= maxChunksBeforeData else {
                throw MediaError(.badHeader, "\(name): more than \(maxChunksBeforeData) chunks before the data chunk")
            }
            let header = try readBytes(file, at: offset, count: 8)
            let id = fourCC(header, at: 0)
            let size = Int(readUInt32(header, at: 4))
            let payload = offset + 8
            let available = fileSize - payload
            switch id {
            case "fmt ":
                guard format == nil else {
                    throw MediaError(.badHeader, "\(name): second fmt chunk at byte \(offset)")
                }
                guard size >= 16 else {
                    throw MediaError(.badHeader, "\(name): fmt chunk is \(size) bytes, needs at least 16")
                }
                guard size <= available else {
                    throw MediaError(.truncated, "\(name): fmt chunk claims \(size) bytes, file has \(available)")
                }
                let body = try readBytes(file, at: payload, count: min(size, 40))
                format = try parseFormatChunk(body, fileName: name)
            case "data":
                guard let (sampleFormat, rate, channels) = format else {
                    throw MediaError(.badHeader, "\(name): missing fmt chunk before the data chunk at byte \(offset)")
                }
                // 0xFFFFFFFF is what streaming writers leave when they cannot seek back to
                // patch the size: the data runs to the end of the file.
                let dataBytes = size == 0xFFFF_FFFF ? available : size
                guard dataBytes <= available else {
                    throw MediaError(.truncated, "\(name): data chunk claims \(size) bytes, file has \(available)")
                }
                let frameBytes = channels * sampleFormat.bytesPerSample
                return WAVFormat(
                    sampleFormat: sampleFormat,
                    sampleRate: rate,
                    channels: channels,
                    dataOffset: payload,
                    frameCount: dataBytes / frameBytes
                )
            default:
                guard size <= available else {
                    throw MediaError(
                        .truncated,
                        "\(name): '\(id)' chunk at byte \(offset) claims \(size) bytes, file has \(available)"
                    )
                }
            }
            // RIFF pads every chunk to an even length; the pad byte is not in `size`.
            offset = payload + size + (size & 1)
        }
        if format == nil {
            throw MediaError(.badHeader, "\(name): missing fmt chunk")
        }
        throw MediaError(.badHeader, "\(name): missing data chunk")
    }

    /// WAVEFORMATEX: tag(2) channels(2) rate(4) byteRate(4) blockAlign(2) bits(2), then for
    /// WAVE_FORMAT_EXTENSIBLE: cbSize(2) validBits(2) channelMask(4) subformat GUID(16).
    static func parseFormatChunk(
        _ body: [UInt8],
        fileName name: String
    ) throws(MediaError) -> (SampleFormat, rate: Int, channels: Int) {
        var tag = Int(readUInt16(body, at: 0))
        let channels = Int(readUInt16(body, at: 2))
        let rate = Int(readUInt32(body, at: 4))
        let blockAlign = Int(readUInt16(body, at: 12))
        let bits = Int(readUInt16(body, at: 14))
        if tag == extensibleTag {
            guard body.count >= 40 else {
                throw MediaError(
                    .badHeader,
                    "\(name): fmt chunk: WAVE_FORMAT_EXTENSIBLE needs 40 bytes, chunk has \(body.count)"
                )
            }
            let validBits = Int(readUInt16(body, at: 18))
            guard Array(body[26..<40]) == subformatGUIDTail else {
                throw MediaError(.badHeader, "\(name): fmt chunk: unknown WAVE_FORMAT_EXTENSIBLE subformat GUID")
            }
            guard validBits == 0 || validBits == bits else {
                throw MediaError(
                    .badHeader,
                    "\(name): fmt chunk: \(validBits) valid bits in a \(bits)-bit container unsupported"
                )
            }
            tag = Int(readUInt16(body, at: 24))
        }
        let sampleFormat: SampleFormat
        switch tag {
        case 1:
            guard bits == 16 else {
                throw MediaError(
                    .badHeader,
                    "\(name): fmt chunk: PCM with \(bits) bits per sample unsupported (16 only)"
                )
            }
            sampleFormat = .int16
        case 3:
            guard bits == 32 else {
                throw MediaError(
                    .badHeader,
                    "\(name): fmt chunk: IEEE float with \(bits) bits per sample unsupported (32 only)"
                )
            }
            sampleFormat = .float32
        default:
            throw MediaError(.badHeader, "\(name): fmt chunk: unsupported format tag \(tag)\(formatTagName(tag))")
        }
        guard channels > 0 else {
            throw MediaError(.badHeader, "\(name): fmt chunk: channel count 0")
        }
        guard AudioChunk.channelRange.contains(channels) else {
            throw MediaError(
                .badHeader,
                "\(name): fmt chunk: channel count \(channels) is outside \(AudioChunk.channelRange)"
            )
        }
        guard AudioChunk.sampleRateRange.contains(rate) else {
            throw MediaError(
                .badHeader,
                "\(name): fmt chunk: sample rate \(rate) Hz is outside \(AudioChunk.sampleRateRange)"
            )
        }
        let expectedAlign = channels * sampleFormat.bytesPerSample
        guard blockAlign == expectedAlign else {
            throw MediaError(
                .badHeader,
                "\(name): fmt chunk: block align \(blockAlign), expected \(expectedAlign) for \(channels) x \(bits) bits"
            )
        }
        return (sampleFormat, rate, channels)
    }

    /// Names of the tags one meets in the wild, so the message says what the file is.
    static func formatTagName(_ tag: Int) -> String {
        let names: [Int: String] = [
            0x0002: "ADPCM", 0x0006: "A-law", 0x0007: "mu-law", 0x0011: "IMA ADPCM",
            0x0031: "GSM 6.10", 0x0050: "MPEG", 0x0055: "MP3", 0x00FF: "AAC", 0x2000: "AC-3",
        ]
        return names[tag].map { " (\($0))" } ?? ""
    }

    static func readBytes(_ file: POSIXFile, at offset: Int, count: Int) throws(MediaError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBufferPointer { (buffer) throws(MediaError) in
            try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
        }
        guard got == count else {
            throw MediaError(.truncated, "\(file.displayName): file ends at byte \(offset + got) inside a header")
        }
        return bytes
    }

    /// A chunk id as text; bytes outside printable ASCII are shown as `\xNN`.
    static func fourCC(_ bytes: [UInt8], at offset: Int) -> String {
        var text = ""
        for byte in bytes[offset..<offset + 4] {
            if (0x20...0x7E).contains(byte) {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }

    static func readUInt16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}
