import Benchmark
import Media
import SRTP
import SendEngine
import Transport

/// A `MediaSender` with N destinations, all pointing at one loopback sink (RTP port and the
/// RTCP port above it), fed one access unit per iteration: a single-packet one costs one
/// packetization plus N × (copy, `srtp_protect`, `sendto`); a key frame's packets go to each
/// destination as bursts (copy and `srtp_protect` each, one segmented `sendmsg` per run). The
/// sink is drained between iterations, outside the measurement.
final class FanOutState {
    /// Who the N destinations are, so the two kinds of subscriber are measured on one harness.
    enum Viewers {
        /// SDES receivers: fresh keys of the sender's configured suite (`SRTPSuite.default`,
        /// AES_CM_128_HMAC_SHA1_80), an RTP and an RTCP socket of their own.
        case sdes
        /// WebRTC viewers on a direct ICE pair, protected with `suite` (`WebRTCViewer`).
        case webRTC(SRTPSuite)
    }

    private let sender: MediaSender
    private let sinks: [UDPSocket]
    private let scratch: UnsafeMutableRawBufferPointer
    private var unit: H264AccessUnit
    private var frame: UInt64 = 0

    /// One access unit of `nalUnits` (a single 1100-byte P slice, one packet, by default).
    init(
        destinations: Int,
        viewers: Viewers = .sdes,
        nalUnits: [[UInt8]] = [H264Samples.slice(type: 1, bytes: 1_100)]
    ) throws {
        sinks = try Self.bindPortPair()
        sender = try MediaSender(configuration: .init(cname: "bench@127.0.0.1"), origin: MonotonicClock.now())
        let port = sinks[0].localAddress.port
        var payloadType = sender.configuration.videoPayloadType
        for index in 0..<destinations {
            switch viewers {
            case .sdes:
                let address = try DestinationAddress(host: "127.0.0.1", videoPort: port, audioPort: nil)
                try sender.addDestination(id: "viewer-\(index)", address: address)
            case .webRTC(let suite):
                try WebRTCViewer.add(id: "viewer-\(index)", to: sender, sink: sinks[0].localAddress, suite: suite)
                payloadType = WebRTCViewer.videoPayloadType
            }
        }
        var data: [UInt8] = []
        var ranges: [Range<Int>] = []
        for nal in nalUnits {
            ranges.append(data.count..<data.count + nal.count)
            data += nal
        }
        let isKeyFrame = nalUnits.contains { ($0.first ?? 0) & 0x1F == 5 }
        unit = H264AccessUnit(data: data, nalRanges: ranges, captureTime: 0, isKeyFrame: isKeyFrame)
        scratch = .allocate(byteCount: 65_536, alignment: 8)
        try checkDelivery(destinations: destinations, payloadType: payloadType)
    }

    deinit { scratch.deallocate() }

    /// Sends the access unit as the next frame (33 ms later in capture time).
    func sendFrame() {
        frame += 1
        unit.captureTime = frame * 33_333_333
        try? sender.send(video: unit)
    }

    /// One frame per iteration: the sinks are drained outside the measurement, the frame's
    /// packetize + protect + send inside it.
    func measure(_ benchmark: Benchmark) {
        for _ in benchmark.scaledIterations {
            drain()
            benchmark.startMeasurement()
            sendFrame()
            benchmark.stopMeasurement()
        }
    }

    /// Sends one frame and checks that every destination's copy reached the sink with the payload
    /// type its receiver expects (SRTP leaves the header in the clear): a failed `sendto` is
    /// counted, not thrown, and a row whose packets never left would time nothing.
    private func checkDelivery(destinations: Int, payloadType: UInt8) throws {
        drain()
        sendFrame()
        var delivered = 0
        while let (length, _) = sinks[0].receive(into: scratch) {
            if length >= 12, scratch[1] & 0x7F == payloadType { delivered += 1 }
        }
        drain()
        guard delivered >= destinations else {
            throw TransportError(
                .send,
                "\(delivered) RTP packets with payload type \(payloadType) reached the sink from \(destinations) destinations"
            )
        }
    }

    /// Reads everything waiting on the sink sockets.
    func drain() {
        for sink in sinks {
            while sink.receive(into: scratch) != nil {}
        }
    }

    /// Two sockets on adjacent loopback ports (RTP on an even port, RTCP on the next, RFC 3550
    /// §11), so no datagram meets a closed port.
    private static func bindPortPair() throws -> [UDPSocket] {
        var lastError: Error?
        for _ in 0..<64 {
            // Deep enough for a key frame to ten subscribers (about 1 MB) between drains.
            let rtp = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0), receiveBufferBytes: 4 << 20)
            guard rtp.localAddress.port % 2 == 0, rtp.localAddress.port < 65_535 else { continue }
            do {
                let rtcp = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: rtp.localAddress.port + 1))
                return [rtp, rtcp]
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TransportError(.bind, "no free pair of adjacent loopback UDP ports")
    }
}
