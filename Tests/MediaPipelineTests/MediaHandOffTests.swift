import Media
import RTP
import SRTP
import SendEngine
import TestSupport
import Testing
import Transport

@testable import MediaPipeline

/// `MediaControl.deliver`: a narrow fan-out with nothing queued leaves from the calling thread
/// at once; a wide one, or anything behind queued media, goes through the sender thread's queue.
@Suite("Hand-off from the media thread")
struct MediaHandOffTests {
    /// A loopback socket standing in for one subscriber's video (and, two ports up, audio).
    final class Subscriber {
        let video: UDPSocket
        let audio: UDPSocket
        init() throws {
            while true {
                let video = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
                let port = video.localAddress.port
                guard port <= 65533,
                    let audio = try? UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: port + 2))
                else { continue }
                self.video = video
                self.audio = audio
                return
            }
        }
        func address() throws -> DestinationAddress {
            try DestinationAddress(
                host: "127.0.0.1",
                videoPort: video.localAddress.port,
                audioPort: audio.localAddress.port
            )
        }
    }

    struct Fixture {
        let control: MediaControl
        let subscribers: [Subscriber]
        let keys: [SRTPKeyMaterial]
        let unit: Media.H264AccessUnit
        let packetsPerUnit: Int

        init(subscribers count: Int) throws {
            let start = MonotonicClock.now()
            let sender = try MediaSender(configuration: .init(cname: "alice_sub"), origin: start)
            subscribers = try (0..<count).map { _ in try Subscriber() }
            keys = try subscribers.enumerated().map { index, subscriber in
                try sender.addDestination(id: "s\(index)", address: subscriber.address()).keys
            }
            control = MediaControl(sender: sender)
            let source = try SyntheticScreenSource(width: 320, height: 180)
            let encoder = try H264Encoder(.init(width: 320, height: 180))
            unit = try #require(try encoder.encode(source.videoFrame(index: 0, captureTime: start)))
            var reference = H264Payloader(budget: try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: 16))
            packetsPerUnit = try reference.payloads(accessUnit: unit.nalUnits, maximumPayloadLength: 1200 - 28).count
        }

        func opusPacket() throws -> OpusPacket {
            try OpusEncoder().encode([Float](repeating: 0, count: 960 * 2))
        }
    }

    @Test("one subscriber: the picture and the Opus packet leave at once, and decrypt")
    func narrowFanOutSendsInline() throws {
        let fixture = try Fixture(subscribers: 1)
        let sentHere = try fixture.control.deliver(video: fixture.unit, receivedAt: MonotonicClock.now())
        try fixture.control.deliver(audio: fixture.opusPacket())
        #expect(sentHere)
        #expect(fixture.control.outbox.isEmpty)
        // Already on the socket: no sender thread runs in this test.
        let subscriber = fixture.subscribers[0]
        let video = subscriber.video.receiveAll(quietMilliseconds: 50)
        let audio = subscriber.audio.receiveAll(quietMilliseconds: 50)
        #expect(video.count == fixture.packetsPerUnit)
        #expect(audio.count == 1)
        let inbound = try SRTPSession(keys: fixture.keys[0], direction: .inbound)
        let last = try RTPPacket.parse(try inbound.unprotect(video[video.count - 1]))
        #expect(last.header.marker && last.header.payloadType == 96)
        #expect(try RTPPacket.parse(try inbound.unprotect(audio[0])).header.payloadType == 97)
    }

    @Test("past the inline limit the picture and the audio are queued for the sender thread")
    func wideFanOutQueues() throws {
        let fixture = try Fixture(subscribers: MediaControl.inlineDestinationLimit + 1)
        let sentHere = try fixture.control.deliver(video: fixture.unit, receivedAt: MonotonicClock.now())
        try fixture.control.deliver(audio: fixture.opusPacket())
        #expect(!sentHere)
        #expect(fixture.control.outbox.depth.now == 2)
        let first = fixture.subscribers[0]
        #expect(first.video.receiveAll(quietMilliseconds: 50).isEmpty)
        #expect(first.audio.receiveAll(quietMilliseconds: 0).isEmpty)
    }

    @Test("behind queued media even a narrow fan-out queues: order within a stream is kept")
    func queuedMediaKeepsOrder() throws {
        let fixture = try Fixture(subscribers: 1)
        fixture.control.outbox.put(video: fixture.unit, receivedAt: 1)
        let sentHere = try fixture.control.deliver(video: fixture.unit, receivedAt: 2)
        try fixture.control.deliver(audio: fixture.opusPacket())
        #expect(!sentHere)
        #expect(fixture.control.outbox.depth.now == 3)
        let subscriber = fixture.subscribers[0]
        #expect(subscriber.video.receiveAll(quietMilliseconds: 50).isEmpty)
    }
}
