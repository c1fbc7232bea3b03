import COpus

/// Writes Opus packets to an Ogg Opus file (RFC 7845 over RFC 3533), the format ffmpeg, browsers
/// and media players read, so our encoder's output can be checked by a decoder we did not write.
///
/// Stream layout (RFC 7845 §3): page 0 holds only the identification header `OpusHead` (first
/// page of the stream), page 1 the comment header `OpusTags`, and audio starts on page 2. Audio
/// pages carry `packetsPerPage` packets (default 50, one second of 20 ms frames: RFC 7845 §6
/// advises pages of about a second at most, for seeking). Each page's granule position is the
/// total of 48 kHz samples completed on it and before, counting the pre-skip (§4); the last page
/// is flagged end-of-stream and may trim the tail (§4.5).
///
/// Not thread-safe: a writer belongs to one task.
public final class OggOpusWriter {
    public static let defaultPacketsPerPage = 50

    public let channels: Int
    public let preSkip: Int
    public let serialNumber: UInt32
    public let packetsPerPage: Int
    /// Samples (per channel, 48 kHz) of all packets written, including the pre-skip.
    public private(set) var granulePosition: Int64 = 0

    private let file: POSIXFile
    private var fileOffset = 0
    private var page = OggPageAssembler()
    private var sequenceNumber: UInt32 = 0
    /// Granule position of the last page written, the floor for end trimming.
    private var lastPageGranule: Int64 = 0
    private var pageBytes: [UInt8] = []
    private var finished = false

    /// - Parameters:
    ///   - preSkip: samples to drop at the start: the encoder's `lookahead`.
    ///   - inputSampleRate: the original rate, informational only (0 = unknown).
    ///   - comments: `NAME=value` strings for OpusTags.
    public init(
        path: String,
        channels: Int = 2,
        preSkip: Int,
        inputSampleRate: Int = 48_000,
        serialNumber: UInt32 = UInt32.random(in: .min ... .max),
        vendor: String = "rtc-publisher",
        comments: [String] = [],
        packetsPerPage: Int = defaultPacketsPerPage
    ) throws(MediaError) {
        guard (1...OggPageAssembler.maxSegments).contains(packetsPerPage) else {
            throw MediaError(.invalidSetting, "Ogg packets per page \(packetsPerPage) is outside 1...255")
        }
        let head = try Self.opusHead(channels: channels, preSkip: preSkip, inputSampleRate: inputSampleRate)
        let tags = try Self.opusTags(vendor: vendor, comments: comments)
        self.channels = channels
        self.preSkip = preSkip
        self.serialNumber = serialNumber
        self.packetsPerPage = packetsPerPage
        self.file = try POSIXFile(path: path, mode: .write)
        try page.append(head)
        try flush(.beginningOfStream, granule: 0)
        try page.append(tags)
        try flush([], granule: 0)
    }

    deinit {
        if !finished { try? finish() }
    }

    /// Appends one packet. Its duration is read from its TOC byte (RFC 6716 §3.1), which also
    /// rejects a malformed packet before it reaches the file.
    public func write(packet: UnsafeBufferPointer<UInt8>) throws(MediaError) {
        try append(packet, expectedSamples: nil)
    }

    /// Appends an encoder packet; its `sampleCount` must agree with what the packet says.
    public func write(_ packet: OpusPacket) throws(MediaError) {
        try packet.data.withUnsafeBufferPointer { (buffer) throws(MediaError) in
            try append(buffer, expectedSamples: packet.sampleCount)
        }
    }

    private func append(_ packet: UnsafeBufferPointer<UInt8>, expectedSamples: Int?) throws(MediaError) {
        guard !finished else {
            throw MediaError(.io, "\(file.displayName): write after finish")
        }
        guard let base = packet.baseAddress, !packet.isEmpty, packet.count <= OggPageAssembler.maxPacketBytes else {
            throw MediaError(.invalidAudio, "Opus packet of \(packet.count) bytes cannot go into an Ogg page")
        }
        let samples = Int(opus_packet_get_nb_samples(base, Int32(packet.count), 48_000))
        guard samples > 0 else {
            throw MediaError(
                .invalidAudio,
                "Opus packet of \(packet.count) bytes: \(OpusEncoder.describe(Int32(samples)))"
            )
        }
        if let expectedSamples, expectedSamples != samples {
            throw MediaError(
                .invalidAudio,
                "Opus packet's TOC says \(samples) samples, its sampleCount says \(expectedSamples)"
            )
        }
        if page.packetCount >= packetsPerPage || !page.canAppend(bytes: packet.count) {
            try flush([], granule: granulePosition)
        }
        try page.append(packet)
        granulePosition += Int64(samples)
    }

    /// Writes the last page, flagged end-of-stream. With `validSamples` (the length of the
    /// original audio), the final granule position trims the encoder's padding at the end
    /// (RFC 7845 §4.5); it can trim only within the last page.
    public func finish(validSamples: Int64? = nil) throws(MediaError) {
        guard !finished else { return }
        finished = true
        var granule = granulePosition
        if let validSamples {
            granule = max(lastPageGranule, min(granulePosition, Int64(preSkip) + max(0, validSamples)))
        }
        try flush(.endOfStream, granule: granule)
    }

    /// RFC 7845 §5.1: "OpusHead", version 1, channel count, pre-skip (LE16), input sample rate
    /// (LE32), output gain (LE16, 0 dB), channel mapping family 0 (mono or stereo, no table).
    public static func opusHead(channels: Int, preSkip: Int, inputSampleRate: Int) throws(MediaError) -> [UInt8] {
        guard channels == 1 || channels == 2 else {
            throw MediaError(.invalidSetting, "Ogg Opus channel count \(channels) is not 1 or 2 (mapping family 0)")
        }
        guard (0...0xFFFF).contains(preSkip) else {
            throw MediaError(.invalidSetting, "Ogg Opus pre-skip \(preSkip) is outside 0...65535")
        }
        guard inputSampleRate == 0 || AudioChunk.sampleRateRange.contains(inputSampleRate) else {
            throw MediaError(.invalidSetting, "Ogg Opus input sample rate \(inputSampleRate) Hz is out of range")
        }
        var out = Array("OpusHead".utf8)
        out.append(1)
        out.append(UInt8(channels))
        out.append(UInt8(preSkip & 0xFF))
        out.append(UInt8(preSkip >> 8))
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: inputSampleRate >> (8 * i))) }
        out += [0, 0, 0]
        return out
    }

    /// RFC 7845 §5.2: "OpusTags", vendor string (LE32 length + UTF-8), comment count (LE32), then
    /// each comment as LE32 length + UTF-8 `NAME=value`. Kept within one Ogg page.
    public static func opusTags(vendor: String, comments: [String]) throws(MediaError) -> [UInt8] {
        for comment in comments {
            guard let equals = comment.firstIndex(of: "="), equals != comment.startIndex else {
                throw MediaError(.invalidSetting, "Opus comment '\(comment)' is not of the form NAME=value")
            }
        }
        var out = Array("OpusTags".utf8)
        func appendString(_ text: String) {
            let bytes = Array(text.utf8)
            for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: bytes.count >> (8 * i))) }
            out += bytes
        }
        appendString(vendor)
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: comments.count >> (8 * i))) }
        for comment in comments { appendString(comment) }
        guard out.count <= OggPageAssembler.maxPacketBytes else {
            throw MediaError(.invalidSetting, "OpusTags of \(out.count) bytes exceed one Ogg page")
        }
        return out
    }

    private func flush(_ type: OggPageAssembler.HeaderType, granule: Int64) throws(MediaError) {
        pageBytes.removeAll(keepingCapacity: true)
        page.finishPage(
            headerType: type,
            granulePosition: granule,
            serialNumber: serialNumber,
            sequenceNumber: sequenceNumber,
            into: &pageBytes
        )
        try file.write(pageBytes, at: fileOffset)
        fileOffset += pageBytes.count
        sequenceNumber &+= 1
        lastPageGranule = granule
    }
}
