import RTP

/// One access unit packetized into a reused buffer, as `MediaSender` does it.
final class H264PayloadState {
    private let accessUnit: [ArraySlice<UInt8>]
    private var payloader = H264Payloader()
    private var stream: RTPStreamState
    private let buffer = RTPPacketBuffer(budget: .standard)
    private var timestamp: UInt32 = 0

    init(nalUnits: [[UInt8]]) throws {
        accessUnit = nalUnits.map { $0[...] }
        stream = try RTPStreamState(payloadType: 96, clockRate: 90_000)
    }

    /// How many RTP packets one access unit becomes.
    func packetCount() -> Int {
        var packets = 0
        _ = try? payloader.packetize(accessUnit: accessUnit, timestamp: 0, stream: &stream, into: buffer) { _ in
            packets += 1
        }
        return packets
    }

    /// Returns the bytes emitted, so the work cannot be optimised away.
    func packetize() -> Int {
        timestamp &+= 3000
        var bytes = 0
        _ = try? payloader.packetize(accessUnit: accessUnit, timestamp: timestamp, stream: &stream, into: buffer) {
            bytes += $0.count
        }
        return bytes
    }
}

/// One 20 ms Opus packet (240 bytes: 96 kbit/s) written behind its RTP header.
final class OpusPayloadState {
    private let packet: [UInt8]
    private var payloader = OpusPayloader()
    private var stream: RTPStreamState
    private let buffer = RTPPacketBuffer(budget: .standard)

    init() throws {
        // TOC 0xFC: CELT fullband 20 ms, stereo, one frame (RFC 6716 §3.1).
        packet = [0xFC] + H264Samples.slice(type: 1, bytes: 239).dropFirst()
        stream = try RTPStreamState(payloadType: 97, clockRate: OpusPayloader.clockRate)
    }

    func packetize() -> Int {
        var bytes = 0
        _ = try? payloader.packetize(packet[...], sampleCount: 960, stream: &stream, into: buffer) { bytes += $0.count }
        return bytes
    }
}
