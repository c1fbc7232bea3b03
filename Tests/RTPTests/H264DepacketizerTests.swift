import Testing

@testable import RTP

@Suite("H.264 depacketizer")
struct H264DepacketizerTests {
    /// Feeds packets in order and collects every access unit, flushing at the end.
    static func depacketize(_ packets: [RTPPacket]) throws -> [H264AccessUnit] {
        var depacketizer = H264Depacketizer()
        var units: [H264AccessUnit] = []
        for packet in packets {
            units += try depacketizer.push(packet)
        }
        if let rest = depacketizer.flush() { units.append(rest) }
        return units
    }

    static func packet(_ payload: [UInt8], sequence: UInt16, timestamp: UInt32 = 0, marker: Bool = false) -> RTPPacket {
        RTPPacket(
            header: RTPHeader(marker: marker, payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: 1),
            payload: payload
        )
    }

    @Test("depayload(payload(x)) == x over random NAL sizes and MTUs (seeded)")
    func roundTripProperty() throws {
        var generator = SeededGenerator(seed: 2024)
        var depacketizer = H264Depacketizer()
        var stream = try makeStream(sequenceNumber: 65_000)
        for round in 0..<120 {
            let mtu = Int.random(in: 128...1500, using: &generator)
            let budget = try RTPPayloadBudget(
                mtu: mtu,
                srtpTrailerRoom: [0, 4, 10, 16].randomElement(using: &generator) ?? 0
            )
            var payloader = H264Payloader(budget: budget)
            let maximumPayload = budget.maximumPayloadLength()
            let nalCount = Int.random(in: 1...6, using: &generator)
            let accessUnit: [[UInt8]] = (0..<nalCount).map { _ in
                let boundary = [maximumPayload - 1, maximumPayload, maximumPayload + 1, 2 * (maximumPayload - 2) + 1]
                let length =
                    Bool.random(using: &generator)
                    ? boundary.randomElement(using: &generator) ?? 1
                    : Int.random(in: 1...20_000, using: &generator)
                let header = UInt8.random(in: 0...3, using: &generator) << 5 | (Bool.random(using: &generator) ? 1 : 5)
                return [header] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            let timestamp = UInt32(round) * 3000
            let packets = try packetizeAll(&payloader, accessUnit, timestamp: timestamp, stream: &stream)
            #expect(try packets.allSatisfy { try $0.serialize().count <= budget.maximumPacketLength })
            var completed: [H264AccessUnit] = []
            for packet in packets {
                completed += try depacketizer.push(packet)
            }
            #expect(completed == [H264AccessUnit(timestamp: timestamp, nalUnits: accessUnit, isComplete: true)])
        }
        #expect(depacketizer.statistics == .init())
    }

    @Test("reads a hand-built STAP-A")
    func stapA() throws {
        let units = try Self.depacketize([
            Self.packet([0x78, 0x00, 0x02, 0x67, 0x42, 0x00, 0x01, 0x68], sequence: 1, marker: true)
        ])
        #expect(units == [H264AccessUnit(timestamp: 0, nalUnits: [[0x67, 0x42], [0x68]], isComplete: true)])
    }

    @Test("a lost FU-A fragment drops that NAL unit and marks the access unit incomplete")
    func lostFragment() throws {
        var depacketizer = H264Depacketizer()
        #expect(try depacketizer.push(Self.packet([0x41, 1], sequence: 10, timestamp: 5)).isEmpty)
        #expect(try depacketizer.push(Self.packet([0x7C, 0x85, 1, 2], sequence: 11, timestamp: 5)).isEmpty)
        // Sequence 12 (the middle fragment) is lost.
        let units = try depacketizer.push(Self.packet([0x7C, 0x45, 5, 6], sequence: 13, timestamp: 5, marker: true))
        #expect(units == [H264AccessUnit(timestamp: 5, nalUnits: [[0x41, 1]], isComplete: false)])
        #expect(depacketizer.statistics.lostPackets == 1)
        #expect(depacketizer.statistics.droppedFragmentedNALUnits == 1)

        let next = try depacketizer.push(Self.packet([0x41, 9], sequence: 14, timestamp: 6, marker: true))
        #expect(next == [H264AccessUnit(timestamp: 6, nalUnits: [[0x41, 9]], isComplete: true)])
    }

    @Test("a lost marker packet ends the access unit at the next timestamp, incomplete")
    func lostMarker() throws {
        var depacketizer = H264Depacketizer()
        _ = try depacketizer.push(Self.packet([0x41, 1], sequence: 1, timestamp: 100))
        let units = try depacketizer.push(Self.packet([0x41, 2], sequence: 2, timestamp: 200, marker: true))
        #expect(
            units == [
                H264AccessUnit(timestamp: 100, nalUnits: [[0x41, 1]], isComplete: false),
                H264AccessUnit(timestamp: 200, nalUnits: [[0x41, 2]], isComplete: true),
            ]
        )
    }

    @Test("duplicates and late packets are ignored; 65535 → 0 is no gap")
    func ordering() throws {
        var depacketizer = H264Depacketizer()
        _ = try depacketizer.push(Self.packet([0x41, 1], sequence: 65_535))
        #expect(try depacketizer.push(Self.packet([0x41, 1], sequence: 65_535)).isEmpty)
        #expect(try depacketizer.push(Self.packet([0x41, 7], sequence: 65_000)).isEmpty)
        let units = try depacketizer.push(Self.packet([0x41, 2], sequence: 0, marker: true))
        #expect(units == [H264AccessUnit(timestamp: 0, nalUnits: [[0x41, 1], [0x41, 2]], isComplete: true)])
        #expect(depacketizer.statistics.duplicatePackets == 1)
        #expect(depacketizer.statistics.latePackets == 1)
        #expect(depacketizer.statistics.lostPackets == 0)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var payload: [UInt8]
        var message: String
        var testDescription: String { name }
    }

    @Test(
        "malformed payloads are rejected with a clear error and the stream goes on",
        arguments: [
            Malformed(name: "empty", payload: [], message: "H.264 RTP payload is empty"),
            Malformed(
                name: "STAP-A size beyond the payload",
                payload: [0x78, 0x00, 0x05, 0x67, 0x42],
                message: "STAP-A: NAL unit size 5 at payload offset 1 exceeds the 2 bytes that follow"
            ),
            Malformed(
                name: "STAP-A with a dangling size byte",
                payload: [0x78, 0x00, 0x01, 0x67, 0x00],
                message: "STAP-A: 1 byte left at payload offset 4, need 2 for a NAL unit size"
            ),
            Malformed(
                name: "STAP-A zero size",
                payload: [0x78, 0x00, 0x00],
                message: "STAP-A: NAL unit size 0 at payload offset 1"
            ),
            Malformed(name: "STAP-A empty", payload: [0x78], message: "STAP-A carries no NAL unit"),
            Malformed(
                name: "FU-A with S and E",
                payload: [0x7C, 0xC5, 1],
                message: "FU-A with both start and end bits set (RFC 6184 §5.8 forbids it)"
            ),
            Malformed(name: "FU-A without header", payload: [0x7C], message: "FU-A payload of 1 byte has no FU header"),
            Malformed(
                name: "STAP-B",
                payload: [0x79, 0, 0],
                message: "H.264 RTP payload of type STAP-B (25) is not allowed in packetization-mode=1 (RFC 6184 §6.3)"
            ),
            Malformed(name: "FU-B", payload: [0x7D, 0x85, 0, 0, 1], message: "FU-B (29) is not allowed"),
            Malformed(name: "type 0", payload: [0x00, 1], message: "NAL unit type 0 is not allowed"),
        ]
    )
    func malformed(input: Malformed) throws {
        var depacketizer = H264Depacketizer()
        _ = try depacketizer.push(Self.packet([0x41, 1], sequence: 1))
        let error = #expect(throws: RTPError.self) {
            try depacketizer.push(Self.packet(input.payload, sequence: 2))
        }
        #expect(error?.code == .invalidH264Payload)
        #expect(error?.message.contains(input.message) == true, "\(error?.message ?? "")")
        #expect(depacketizer.statistics.malformedPackets == 1)
        let units = try depacketizer.push(Self.packet([0x41, 2], sequence: 3, marker: true))
        #expect(units == [H264AccessUnit(timestamp: 0, nalUnits: [[0x41, 1], [0x41, 2]], isComplete: false)])
    }

    @Test("limits bound the memory one stream can claim")
    func limits() throws {
        var depacketizer = H264Depacketizer(limits: .init(maximumNALUnitLength: 10, maximumAccessUnitLength: 12))
        _ = try depacketizer.push(Self.packet([0x7C, 0x85] + Array(repeating: 1, count: 8), sequence: 1))
        let nal = #expect(throws: RTPError.self) {
            try depacketizer.push(Self.packet([0x7C, 0x05, 1, 2], sequence: 2))
        }
        #expect(nal?.code == .tooLarge)
        _ = try depacketizer.push(Self.packet(Array(repeating: 0x41, count: 8), sequence: 3))
        let unit = #expect(throws: RTPError.self) {
            try depacketizer.push(Self.packet(Array(repeating: 0x41, count: 8), sequence: 4))
        }
        #expect(unit?.message.contains("exceeds 12 bytes") == true)
    }
}
