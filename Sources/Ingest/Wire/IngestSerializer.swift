import Media
import NIOCore

/// Writes ingest messages as bytes (no sockets). Checks only what the wire can represent (a width
/// must fit 16 bits, a sample count must be whole frames); the receiver applies its own limits.
public enum IngestSerializer {
    /// Appends `message` to `buffer`, growing it once; a caller that keeps its buffer (clearing
    /// it between messages) writes without allocating.
    public static func write(_ message: IngestMessage, into buffer: inout ByteBuffer) throws(IngestError) {
        switch message {
        case .hello(let hello):
            let name = Self.truncatedUTF8(hello.name, maxBytes: IngestHello.maxNameBytes)
            buffer.reserveCapacity(minimumWritableBytes: IngestProtocol.headerSize + IngestHello.fixedSize + name.count)
            writeHeader(.hello, [], IngestHello.fixedSize + name.count, .none, into: &buffer)
            buffer.writeInteger(hello.version, endianness: .little)
            buffer.writeInteger(hello.role.rawValue)
            buffer.writeInteger(UInt8(name.count))
            buffer.writeInteger(hello.capabilities.rawValue, endianness: .little)
            buffer.writeBytes(name)
        case .video(let video):
            try writeVideo(video, into: &buffer)
        case .audio(let audio):
            try writeAudio(audio, into: &buffer)
        case .control(let control):
            writeControl(control, into: &buffer)
        }
    }

    /// The message as a new array (tests, cold paths).
    public static func bytes(of message: IngestMessage) throws(IngestError) -> [UInt8] {
        var buffer = ByteBuffer()
        try write(message, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    static func writeHeader(
        _ type: IngestMessageType,
        _ flags: IngestFlags,
        _ payloadLength: Int,
        _ timestamp: IngestTimestamp,
        into buffer: inout ByteBuffer
    ) {
        buffer.writeBytes(IngestProtocol.magic)
        buffer.writeInteger(type.rawValue)
        buffer.writeInteger(flags.rawValue)
        buffer.writeInteger(UInt16(0), endianness: .little)
        buffer.writeInteger(UInt32(truncatingIfNeeded: payloadLength), endianness: .little)
        buffer.writeInteger(timestamp.value, endianness: .little)
        buffer.writeInteger(timestamp.timescale, endianness: .little)
    }

    private static func writeVideo(_ video: IngestVideo, into buffer: inout ByteBuffer) throws(IngestError) {
        let frame = video.frame
        let planes = frame.format.planeGeometry(width: frame.width, height: frame.height)
        guard (1...Int(UInt16.max)).contains(frame.width), (1...Int(UInt16.max)).contains(frame.height) else {
            throw IngestError(.invalidField, "video size \(frame.width)x\(frame.height) does not fit 16 bits")
        }
        guard frame.planes.count == planes.count, frame.strides.count == planes.count else {
            throw IngestError(
                .invalidField,
                "\(frame.format) needs \(planes.count) planes and strides, got \(frame.planes.count) "
                    + "and \(frame.strides.count)"
            )
        }
        var planeBytes: [Int] = []
        for (index, plane) in planes.enumerated() {
            let stride = frame.strides[index]
            guard stride >= plane.minStride, stride <= Int(UInt32.max) else {
                throw IngestError(
                    .strideTooSmall,
                    "\(plane.name) plane stride \(stride) is outside \(plane.minStride)…\(UInt32.max)"
                )
            }
            planeBytes.append(stride * plane.rows)
        }
        let payload = IngestVideo.fixedSize + planeBytes.reduce(0, +)
        guard payload <= Int(UInt32.max) else {
            throw IngestError(.payloadTooLarge, "a video payload of \(payload) bytes does not fit 32 bits")
        }
        buffer.reserveCapacity(minimumWritableBytes: IngestProtocol.headerSize + payload)
        writeHeader(.video, video.flags, payload, video.timestamp, into: &buffer)
        buffer.writeInteger(frame.format.wireCode)
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt16(frame.rotation.rawValue), endianness: .little)
        buffer.writeInteger(UInt16(frame.width), endianness: .little)
        buffer.writeInteger(UInt16(frame.height), endianness: .little)
        for slot in 0..<IngestVideo.strideSlots {
            let stride = slot < frame.strides.count ? frame.strides[slot] : 0
            buffer.writeInteger(UInt32(stride), endianness: .little)
        }
        // Exactly stride × rows per plane: a plane whose last row stops at the picture's edge
        // (allowed in memory) is padded with zeros, a longer one is cut.
        for (index, count) in planeBytes.enumerated() {
            let plane = frame.planes[index]
            let copied = min(plane.count, count)
            buffer.writeBytes(plane[0..<copied])
            if copied < count {
                buffer.writeRepeatingByte(0, count: count - copied)
            }
        }
    }

    private static func writeAudio(_ audio: IngestAudio, into buffer: inout ByteBuffer) throws(IngestError) {
        guard (1...Int(UInt16.max)).contains(audio.channels) else {
            throw IngestError(.invalidField, "\(audio.channels) audio channels do not fit 1…65535")
        }
        guard (1...Int(UInt32.max)).contains(audio.sampleRate) else {
            throw IngestError(.invalidField, "sample rate \(audio.sampleRate) Hz does not fit 32 bits")
        }
        guard audio.samples.count % audio.channels == 0 else {
            throw IngestError(
                .invalidField,
                "\(audio.samples.count) samples is not a whole number of \(audio.channels)-channel frames"
            )
        }
        let payload = IngestAudio.fixedSize + audio.samples.count * audio.samples.format.bytesPerSample
        guard payload <= Int(UInt32.max) else {
            throw IngestError(.payloadTooLarge, "an audio payload of \(payload) bytes does not fit 32 bits")
        }
        buffer.reserveCapacity(minimumWritableBytes: IngestProtocol.headerSize + payload)
        writeHeader(.audio, audio.flags, payload, audio.timestamp, into: &buffer)
        buffer.writeInteger(audio.source.wireCode)
        buffer.writeInteger(audio.samples.format.rawValue)
        buffer.writeInteger(UInt16(audio.channels), endianness: .little)
        buffer.writeInteger(UInt32(audio.sampleRate), endianness: .little)
        buffer.writeInteger(UInt32(audio.frameCount), endianness: .little)
        switch audio.samples {
        case .s16(let pcm):
            for sample in pcm { buffer.writeInteger(sample, endianness: .little) }
        case .f32(let pcm):
            for sample in pcm { buffer.writeInteger(sample.bitPattern, endianness: .little) }
        }
    }

    private static func writeControl(_ control: IngestControl, into buffer: inout ByteBuffer) {
        let command: UInt8
        var reason: UInt16 = 0
        var text: [UInt8] = []
        switch control {
        case .pause: command = IngestControl.pauseCommand
        case .resume: command = IngestControl.resumeCommand
        case .end(let endReason, let message):
            command = IngestControl.endCommand
            reason = endReason.rawValue
            text = truncatedUTF8(message, maxBytes: IngestControl.maxTextBytes)
        }
        writeHeader(.control, [], IngestControl.fixedSize + text.count, .none, into: &buffer)
        buffer.writeInteger(command)
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(reason, endianness: .little)
        buffer.writeInteger(UInt16(text.count), endianness: .little)
        buffer.writeBytes(text)
    }

    /// The UTF-8 of `text` cut at a character boundary to at most `maxBytes`, control characters
    /// replaced by spaces (the receiver refuses them).
    static func truncatedUTF8(_ text: String, maxBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let clean =
                character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : character
            let utf8 = Array(String(clean).utf8)
            guard bytes.count + utf8.count <= maxBytes else { break }
            bytes += utf8
        }
        return bytes
    }
}
