import Testing

@testable import RTP

@Suite("H.264 payloader (RFC 6184, packetization-mode=1)")
struct H264PayloaderTests {
    static let sps: [UInt8] = [0x67, 0x42, 0x00, 0x1F]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    static let aud: [UInt8] = [0x09, 0xF0]
    static let filler: [UInt8] = [0x0C, 0xFF, 0xFF, 0x80]

    static func payloads(_ accessUnit: [[UInt8]], limit: Int) throws -> [[UInt8]] {
        var payloader = H264Payloader()
        return try payloader.payloads(accessUnit: accessUnit.map { $0[...] }, maximumPayloadLength: limit)
    }

    @Test("tiny NAL unit: one single NAL unit packet, unchanged (§5.6)")
    func tiny() throws {
        #expect(try Self.payloads([[0x65, 0x01, 0x02]], limit: 10) == [[0x65, 0x01, 0x02]])
    }

    @Test("NAL unit exactly at the payload limit: still a single packet")
    func atLimit() throws {
        let nal = patternBytes(10, header: 0x65)
        #expect(try Self.payloads([nal], limit: 10) == [nal])
    }

    @Test("limit + 1: two FU-A fragments of equal size, byte-exact (§5.8)")
    func limitPlusOne() throws {
        // Header 0x65 (NRI 3, IDR) + body 1…10; limit 10 leaves 8 data bytes per fragment,
        // so the 10-byte body splits 5 + 5 (not 8 + 2).
        let nal: [UInt8] = [0x65, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        #expect(
            try Self.payloads([nal], limit: 10) == [
                [0x7C, 0x85, 1, 2, 3, 4, 5],  // FU indicator NRI 3 type 28; S, type 5
                [0x7C, 0x45, 6, 7, 8, 9, 10],  // E, type 5
            ]
        )
    }

    @Test("F and NRI travel in the FU indicator, the type in the FU header")
    func indicatorBits() throws {
        let nal = [0xA1] + [UInt8](repeating: 0xEE, count: 12)  // F=1, NRI=1, type 1
        let fragments = try Self.payloads([nal], limit: 8)
        #expect(fragments.map { $0[0] } == [0xBC, 0xBC])
        #expect(fragments.map { $0[1] } == [0x81, 0x41])
    }

    struct Split: Sendable, CustomTestStringConvertible {
        var bodyLength: Int
        var limit: Int
        var sizes: [Int]
        var testDescription: String { "body \(bodyLength), limit \(limit) → \(sizes)" }
    }

    @Test(
        "fragments are near-equal and the E bit lands on the last one",
        arguments: [
            Split(bodyLength: 16, limit: 10, sizes: [8, 8]),  // exact multiple of the fragment size
            Split(bodyLength: 24, limit: 10, sizes: [8, 8, 8]),
            Split(bodyLength: 17, limit: 10, sizes: [6, 6, 5]),
            Split(bodyLength: 11, limit: 10, sizes: [6, 5]),
            Split(bodyLength: 3, limit: 3, sizes: [1, 1, 1]),  // smallest limit: one data byte each
            Split(bodyLength: 2_000, limit: 1178, sizes: [1000, 1000]),
            Split(bodyLength: 2_352, limit: 1178, sizes: [1176, 1176]),  // exact multiple at the real budget
            Split(bodyLength: 2_353, limit: 1178, sizes: [785, 784, 784]),
            Split(bodyLength: 2_354, limit: 1178, sizes: [785, 785, 784]),
        ]
    )
    func nearEqualFragments(split: Split) throws {
        let nal = patternBytes(split.bodyLength + 1, header: 0x41)
        let fragments = try Self.payloads([nal], limit: split.limit)
        #expect(fragments.map { $0.count - 2 } == split.sizes)
        #expect(fragments.allSatisfy { $0.count <= split.limit })
        for (index, fragment) in fragments.enumerated() {
            let start = fragment[1] & 0x80 != 0
            let end = fragment[1] & 0x40 != 0
            #expect(start == (index == 0))
            #expect(end == (index == fragments.count - 1))
            #expect(!(start && end))
            #expect(fragment[1] & 0x20 == 0)  // R bit
        }
        #expect(fragments.flatMap { $0.dropFirst(2) } == Array(nal.dropFirst()))
    }

    @Test("SPS and PPS go as one STAP-A, byte-exact, AUD dropped (§5.7.1)")
    func stapALayout() throws {
        let idr: [UInt8] = [0x65, 0x88, 0x84]
        let result = try Self.payloads([Self.aud, Self.sps, Self.pps, idr], limit: 100)
        #expect(
            result == [
                [
                    0x78,  // F 0, NRI 3 (the maximum), type 24
                    0x00, 0x04, 0x67, 0x42, 0x00, 0x1F,
                    0x00, 0x04, 0x68, 0xCE, 0x3C, 0x80,
                ],
                idr,
            ]
        )
    }

    @Test("STAP-A header takes the OR of F and the maximum NRI")
    func stapAHeader() throws {
        let result = try Self.payloads([[0x27, 1], [0xC8, 2], [0x41, 3]], limit: 100)
        #expect(result[0] == [0xD8, 0x00, 0x02, 0x27, 0x01, 0x00, 0x02, 0xC8, 0x02])
    }

    @Test("parameter sets too large for one STAP-A go separately, fragmented if needed")
    func parameterSetsTooLarge() throws {
        let bigSPS = patternBytes(30, header: 0x67)
        let result = try Self.payloads([bigSPS, Self.pps, [0x65, 1]], limit: 20)
        #expect(result.count == 4)
        #expect(result[0][0] == 0x7C && result[0][1] == 0x87)  // FU-A start of the SPS
        #expect(result[1][0] == 0x7C && result[1][1] == 0x47)  // FU-A end
        #expect(result[2] == Self.pps)
        #expect(result[3] == [0x65, 1])
    }

    @Test("remembers SPS/PPS and inserts them before an IDR whose access unit lacks them")
    func insertsParameterSets() throws {
        var payloader = H264Payloader()
        let first = try payloader.payloads(
            accessUnit: [Self.sps[...], Self.pps[...], [0x65, 1, 2][...]],
            maximumPayloadLength: 100
        )
        #expect(first.count == 2)
        #expect(payloader.sequenceParameterSet == Self.sps)
        #expect(payloader.pictureParameterSet == Self.pps)

        let predicted = try payloader.payloads(accessUnit: [[0x41, 9][...]], maximumPayloadLength: 100)
        #expect(predicted == [[0x41, 9]])  // no parameter sets before a non-IDR access unit

        let idrOnly = try payloader.payloads(accessUnit: [[0x06, 5][...], [0x65, 3][...]], maximumPayloadLength: 100)
        #expect(
            idrOnly == [
                [0x06, 5],  // SEI keeps its place
                [0x78, 0x00, 0x04] + Self.sps + [0x00, 0x04] + Self.pps,  // inserted right before the IDR
                [0x65, 3],
            ]
        )

        // A new PPS alone: the remembered SPS completes the pair.
        let newPPS: [UInt8] = [0x68, 0xEE]
        let mixed = try payloader.payloads(accessUnit: [newPPS[...], [0x65, 4][...]], maximumPayloadLength: 100)
        #expect(mixed == [[0x78, 0x00, 0x04] + Self.sps + [0x00, 0x02] + newPPS, [0x65, 4]])
        #expect(payloader.pictureParameterSet == newPPS)
    }

    @Test("an IDR with nothing remembered goes out alone")
    func idrWithoutParameterSets() throws {
        #expect(try Self.payloads([[0x65, 1]], limit: 100) == [[0x65, 1]])
    }

    @Test("a lone parameter set is a single NAL unit packet, not a one-unit STAP-A")
    func loneParameterSet() throws {
        #expect(try Self.payloads([Self.sps, [0x41, 1]], limit: 100) == [Self.sps, [0x41, 1]])
    }

    @Test("hot path: headers, one timestamp per access unit, marker only on its last packet")
    func hotPathHeaders() throws {
        var payloader = H264Payloader()
        var stream = try makeStream(payloadType: 96, sequenceNumber: 65_534, ssrc: 0xAABB_CCDD)
        let accessUnit = [Self.aud, Self.sps, Self.pps, patternBytes(3000, header: 0x65), Self.filler]
        let packets = try packetizeAll(&payloader, accessUnit, timestamp: 0x0102_0304, stream: &stream)
        #expect(packets.count == 1 + 3)
        #expect(packets.map(\.header.sequenceNumber) == [65_534, 65_535, 0, 1])
        #expect(packets.allSatisfy { $0.header.timestamp == 0x0102_0304 })
        #expect(packets.allSatisfy { $0.header.ssrc == 0xAABB_CCDD && $0.header.payloadType == 96 })
        #expect(packets.map(\.header.marker) == [false, false, false, true])
        #expect(stream.nextSequenceNumber == 2)

        let buffer = RTPPacketBuffer(budget: .standard)
        var raw: [[UInt8]] = []
        try payloader.packetize(accessUnit: [[0x41, 0x9A][...]], timestamp: 7, stream: &stream, into: buffer) {
            raw.append($0.copyBytes())
        }
        #expect(raw == [[0x80, 0xE0, 0x00, 0x02, 0, 0, 0, 7, 0xAA, 0xBB, 0xCC, 0xDD, 0x41, 0x9A]])
    }

    @Test("marker moves to the last packet actually sent")
    func markerSkipsDroppedUnits() throws {
        var payloader = H264Payloader()
        var stream = try makeStream()
        let trailingFiller = try packetizeAll(
            &payloader,
            [[0x41, 1], [0x41, 2], Self.filler],
            timestamp: 1,
            stream: &stream
        )
        #expect(trailingFiller.map(\.header.marker) == [false, true])
        let onlyParameterSets = try packetizeAll(
            &payloader,
            [Self.aud, Self.sps, Self.pps],
            timestamp: 2,
            stream: &stream
        )
        #expect(onlyParameterSets.count == 1)
        #expect(onlyParameterSets[0].header.marker)
        let nothing = try packetizeAll(&payloader, [Self.aud, []], timestamp: 3, stream: &stream)
        #expect(nothing.isEmpty)
    }

    @Test("a 100 KB IDR: every packet within the MTU, FU-A reassembles byte for byte")
    func largeIDR() throws {
        var payloader = H264Payloader()
        var stream = try makeStream()
        let idr = patternBytes(100 * 1024, header: 0x65, seed: 17)
        let packets = try packetizeAll(&payloader, [Self.sps, Self.pps, idr], timestamp: 90_000, stream: &stream)
        let limit = RTPPayloadBudget.standard.maximumPacketLength
        #expect(packets.allSatisfy { (try? $0.serialize().count).map { $0 <= limit } ?? false })
        let fragments = packets.dropFirst()
        #expect(fragments.count == (idr.count - 1 + (limit - 12 - 2) - 1) / (limit - 12 - 2))
        #expect(fragments.allSatisfy { $0.payload[0] == 0x7C && $0.payload[1] & 0x1F == 5 })
        #expect(
            fragments.map { $0.payload[1] & 0x80 != 0 } == [true] + Array(repeating: false, count: fragments.count - 1)
        )
        #expect(
            fragments.map { $0.payload[1] & 0x40 != 0 } == Array(repeating: false, count: fragments.count - 1) + [true]
        )
        #expect(packets.map(\.header.marker) == Array(repeating: false, count: packets.count - 1) + [true])
        let sizes = fragments.map(\.payload.count)
        #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1)
        #expect([0x65] + fragments.flatMap { $0.payload.dropFirst(2) } == idr)
    }

    @Test("CSRCs and a header extension shrink the payload so packets still fit the MTU")
    func headerTemplateShrinksBudget() throws {
        let budget = try RTPPayloadBudget(mtu: 300, srtpTrailerRoom: RTPPayloadBudget.SRTPTrailer.aeadAES128GCM)
        var payloader = H264Payloader(budget: budget)
        var stream = try makeStream()
        stream.csrcs = [1, 2, 3]
        stream.headerExtension = try RTPHeaderExtension.oneByte([.init(id: 3, data: [1, 2, 3])])
        let packets = try packetizeAll(&payloader, [patternBytes(5000, header: 0x41)], timestamp: 0, stream: &stream)
        let lengths = try packets.map { try $0.serialize().count }
        #expect(lengths.allSatisfy { $0 <= 300 - 16 })
        #expect(lengths.max() == 300 - 16)
        #expect(
            packets.allSatisfy { $0.header.csrcs == [1, 2, 3] && $0.header.headerExtension == stream.headerExtension }
        )
    }

    @Test("refuses a payload limit below 3 bytes and a buffer smaller than the budget")
    func rejects() throws {
        var payloader = H264Payloader()
        let limit = #expect(throws: RTPError.self) {
            try payloader.payloads(nalUnit: [0x41, 1], maximumPayloadLength: 2)
        }
        #expect(limit?.code == .invalidConfiguration)

        var stream = try makeStream()
        let small = try RTPPacketBuffer(capacity: 500)
        let buffer = #expect(throws: RTPError.self) {
            try payloader.packetize(accessUnit: [[0x41, 1][...]], timestamp: 0, stream: &stream, into: small) { _ in }
        }
        #expect(buffer?.code == .bufferTooSmall)

        stream.csrcs = Array(repeating: 7, count: 16)
        #expect(throws: RTPError.self) {
            try payloader.packetize(
                accessUnit: [[0x41, 1][...]],
                timestamp: 0,
                stream: &stream,
                into: RTPPacketBuffer(budget: .standard)
            ) { _ in }
        }
    }

    struct SendFailed: Error {}

    @Test("an error from the emit closure stops packetization and reaches the caller")
    func emitErrorPropagates() throws {
        var payloader = H264Payloader()
        var stream = try makeStream()
        var calls = 0
        #expect(throws: SendFailed.self) {
            try payloader.packetize(
                accessUnit: [patternBytes(5000, header: 0x41)[...]],
                timestamp: 0,
                stream: &stream,
                into: RTPPacketBuffer(budget: .standard)
            ) { _ in
                calls += 1
                throw SendFailed()
            }
        }
        #expect(calls == 1)
    }
}

@Suite("H.264 payloader input checks")
struct H264PayloaderInputTests {
    @Test("NAL unit types RTP cannot carry are refused before anything is sent", arguments: [UInt8(0), 24, 28, 31])
    func refusesUnsendableTypes(type: UInt8) throws {
        var payloader = H264Payloader()
        var stream = try makeStream()
        var sent = 0
        let error = #expect(throws: RTPError.self) {
            try payloader.packetize(
                accessUnit: [[0x67, 1][...], [0x41, 2][...], [0x60 | type, 3][...]],
                timestamp: 0,
                stream: &stream,
                into: RTPPacketBuffer(budget: .standard)
            ) { _ in sent += 1 }
        }
        #expect(error?.code == .invalidH264Payload)
        #expect(
            error?.message == "NAL unit 2 of the access unit has type \(type); only 1–23 can be sent (RFC 6184 §5.2)"
        )
        #expect(sent == 0)
        #expect(payloader.sequenceParameterSet == nil)
        #expect(stream.nextSequenceNumber == 1000)
    }
}
