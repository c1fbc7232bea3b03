import Testing

@testable import RTP

@Suite("Opus payloader (RFC 7587)")
struct OpusPayloaderTests {
    struct Sent: Equatable {
        var sequence: UInt16
        var timestamp: UInt32
        var marker: Bool
        var payload: [UInt8]
    }

    static func send(
        _ payloader: inout OpusPayloader,
        _ packets: [[UInt8]],
        stream: inout RTPStreamState,
        samples: Int = 960
    ) throws -> [Sent] {
        let buffer = RTPPacketBuffer(budget: payloader.budget)
        var sent: [Sent] = []
        for packet in packets {
            try payloader.packetize(packet[...], sampleCount: samples, stream: &stream, into: buffer) { buffer in
                let parsed = try RTPPacket.parse(buffer.copyBytes())
                sent.append(
                    Sent(
                        sequence: parsed.header.sequenceNumber,
                        timestamp: parsed.header.timestamp,
                        marker: parsed.header.marker,
                        payload: parsed.payload
                    )
                )
            }
        }
        return sent
    }

    static func opusStream(sequence: UInt16 = 100) throws -> RTPStreamState {
        try RTPStreamState(
            ssrc: 0x0BAD_CAFE,
            payloadType: 111,
            clockRate: 48_000,
            initialSequenceNumber: sequence,
            timestampBase: 4_294_966_000
        )
    }

    @Test("byte-exact first packet: marker, base timestamp, payload unchanged")
    func firstPacketBytes() throws {
        var payloader = OpusPayloader()
        var stream = try Self.opusStream()
        let buffer = RTPPacketBuffer(budget: .standard)
        var bytes: [UInt8] = []
        let outcome = try payloader.packetize([0xFC, 0xFF, 0xFE][...], sampleCount: 960, stream: &stream, into: buffer)
        {
            bytes = $0.copyBytes()
        }
        #expect(outcome == .sent(marker: true))
        #expect(bytes == [0x80, 0xEF, 0x00, 0x64, 0xFF, 0xFF, 0xFA, 0xF0, 0x0B, 0xAD, 0xCA, 0xFE, 0xFC, 0xFF, 0xFE])
    }

    @Test("timestamps advance by exactly the samples of each packet, wrapping at 2^32")
    func timestamps() throws {
        var payloader = OpusPayloader()
        var stream = try Self.opusStream()
        let sent = try Self.send(&payloader, Array(repeating: [0xFC, 1, 2], count: 3), stream: &stream)
        #expect(sent.map(\.timestamp) == [4_294_966_000, 4_294_966_960, 624])
        #expect(sent.map(\.marker) == [true, false, false])
        let longer = try Self.send(&payloader, [[0xFC, 1, 2]], stream: &stream, samples: 2880)  // 60 ms
        let after = try Self.send(&payloader, [[0xFC, 1, 2]], stream: &stream)
        #expect(longer[0].timestamp == 1584)
        #expect(after[0].timestamp == 1584 + 2880)
    }

    @Test("DTX frames are skipped, their time passes, and the next packet carries the marker")
    func dtxGap() throws {
        var payloader = OpusPayloader()
        var stream = try Self.opusStream(sequence: 65_534)
        let speech: [UInt8] = [0x78, 0x11, 0x22, 0x33]
        let dtx: [UInt8] = [0x78]
        let sent = try Self.send(
            &payloader,
            [speech, speech, dtx, [0x78, 0x00], dtx, speech, speech],
            stream: &stream
        )
        #expect(sent.map(\.sequence) == [65_534, 65_535, 0, 1])  // no holes for skipped frames
        #expect(sent.map(\.marker) == [true, false, true, false])
        #expect(sent.map { $0.timestamp &- 4_294_966_000 } == [0, 960, 960 * 5, 960 * 6])
    }

    @Test("with DTX packets sent, they go out like any other")
    func dtxSent() throws {
        var payloader = OpusPayloader(sendsDTXPackets: true)
        var stream = try Self.opusStream()
        let sent = try Self.send(&payloader, [[0x78, 1, 2], [0x78], [0x78, 1, 2]], stream: &stream)
        #expect(sent.map(\.marker) == [true, false, false])
        #expect(sent[1].payload == [0x78])
    }

    @Test("restart(at:) moves the timeline and marks the next packet")
    func restart() throws {
        var payloader = OpusPayloader()
        var stream = try Self.opusStream()
        _ = try Self.send(&payloader, [[0x78, 1, 2]], stream: &stream)
        payloader.restart(at: 500_000)
        let sent = try Self.send(&payloader, [[0x78, 1, 2], [0x78, 1, 2]], stream: &stream)
        #expect(sent.map(\.timestamp) == [500_000, 500_960])
        #expect(sent.map(\.marker) == [true, false])
    }

    @Test("rejects sample counts, sizes and clocks RFC 7587 does not allow")
    func rejects() throws {
        var payloader = OpusPayloader()
        var stream = try Self.opusStream()
        let buffer = RTPPacketBuffer(budget: .standard)
        for samples in [0, 5761] {
            let error = #expect(throws: RTPError.self) {
                try payloader.packetize([0x78, 1][...], sampleCount: samples, stream: &stream, into: buffer) { _ in }
            }
            #expect(error?.code == .invalidConfiguration)
        }
        let big = #expect(throws: RTPError.self) {
            try payloader.packetize(
                [UInt8](repeating: 1, count: 1179)[...],
                sampleCount: 960,
                stream: &stream,
                into: buffer
            ) { _ in }
        }
        #expect(big?.code == .payloadTooLarge)
        #expect(big?.message.hasPrefix("Opus packet of 1179 bytes exceeds the 1178-byte payload limit") == true)
        #expect(throws: RTPError.self) {
            try payloader.packetize([][...], sampleCount: 960, stream: &stream, into: buffer) { _ in }
        }
        var video = try makeStream(clockRate: 90_000)
        #expect(throws: RTPError.self) {
            try payloader.packetize([0x78, 1][...], sampleCount: 960, stream: &video, into: buffer) { _ in }
        }
        // Nothing above consumed a sequence number or moved the timeline.
        #expect(stream.nextSequenceNumber == 100)
        #expect(payloader.nextTimestamp == nil)
    }
}
