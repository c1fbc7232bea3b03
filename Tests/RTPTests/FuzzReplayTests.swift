import Testing

@testable import RTP

/// Inputs that crashed a fuzz target (Fuzz/), replayed as unit tests once the bug was fixed.
@Suite("Fuzz crash replays")
struct FuzzReplayTests {
    /// FuzzH264Depacketizer, first minute of fuzzing: minimized crash input
    /// `0a 07 07 00 01 0b 07 b8 07`, which the harness reads as MTU 168, GCM trailer room, one
    /// CSRC, and one access unit [end of stream (type 11), SPS]. The payloader set the marker
    /// on the end-of-stream packet *and* on the SPS after it: when parameter sets come last,
    /// the last slice-or-other NAL unit wrongly kept its marker as well.
    @Test("marker only on the last packet when parameter sets end the access unit")
    func parameterSetsAfterLastNAL() throws {
        let input: [UInt8] = [0x0A, 0x07, 0x07, 0x00, 0x01, 0x0B, 0x07, 0xB8, 0x07]
        let budget = try RTPPayloadBudget(mtu: 128 + Int(input[0]) * 4, srtpTrailerRoom: 16)
        var stream = try makeStream()
        stream.csrcs = [7]
        var payloader = H264Payloader(budget: budget)
        let accessUnit: [[UInt8]] = [[input[5]], [input[8]]]
        let packets = try packetizeAll(&payloader, accessUnit, timestamp: 3000, stream: &stream)
        #expect(packets.map(\.header.marker) == [false, true])
        var depacketizer = H264Depacketizer()
        var units: [H264AccessUnit] = []
        for packet in packets {
            units += try depacketizer.push(packet)
        }
        #expect(units == [H264AccessUnit(timestamp: 3000, nalUnits: accessUnit, isComplete: true)])
    }

    @Test("marker on the last of several parameter-set packets that end an access unit")
    func fragmentedParameterSetsLast() throws {
        // Slice, then an SPS too large for a STAP-A (two FU-A fragments), then a PPS.
        var payloader = H264Payloader()
        var stream = try makeStream()
        let packets = try packetizeAll(
            &payloader,
            [[0x41, 1], patternBytes(2000, header: 0x67), [0x68, 2]],
            timestamp: 0,
            stream: &stream
        )
        #expect(packets.map(\.header.marker) == [false, false, false, true])
        #expect(packets.last?.payload == [0x68, 2])
    }

    /// FuzzVPXDepacketizer, its own seed `vp9-flexible.seed` read as a VP8 payload: `f8 05 43 03 04
    /// aa` has X=1 and an extension octet (05) with I, L, T and K all 0. The descriptor parsed as
    /// 2 bytes but reported a length of 1 and wrote back 1 byte: it had no way to say "X=1 with
    /// nothing announced". `emptyExtensionOctet` keeps it.
    @Test("a VP8 extension octet that announces nothing keeps the descriptor's length")
    func emptyVP8ExtensionOctet() throws {
        let payload: [UInt8] = [0xF8, 0x05, 0x43, 0x03, 0x04, 0xAA]
        let (descriptor, length) = try VP8PayloadDescriptor.parse(payload[...])
        #expect(length == 2 && descriptor.length == 2)
        #expect(descriptor.emptyExtensionOctet && descriptor.pictureID == nil)
        #expect(descriptor.bytes == [0xB0, 0x00])  // X N S kept, reserved bits cleared
        #expect(try VP8PayloadDescriptor.parse((descriptor.bytes + [0])[...]).descriptor == descriptor)
    }
}
