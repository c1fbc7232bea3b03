import Media
import SendEngine
import Testing
import Transport

@testable import MediaPipeline

/// Key frames only when asked (Docs/cadence.md): the media thread's `VideoPath` with a real
/// `.onRequest` x264 and a real `MediaSender`, its capture clock simulated at 30 fps: 10 s of a
/// moving screen, then 30 s of a still one.
@Suite("Refresh waves for receivers that cannot ask")
struct RefreshWaveTests {
    struct Run {
        var keyFrames = 0
        var waves: [Int] = []
        var stillWaves = 0
        var encodedWhileStill = 0
    }

    /// Who receives: a receiver that asks; one that cannot ask elsewhere (its packets go to
    /// memory: no host answers for it); one on this machine, listening from the start or only
    /// from picture `listensAt` on (its port refused before).
    enum Receiver: CustomStringConvertible {
        case asks
        case elsewhere
        case here(listensAt: Int?)

        var description: String {
            switch self {
            case .asks: "asks"
            case .elsewhere: "cannot ask, elsewhere"
            case .here(let at): "cannot ask, on this machine, listening from picture \(at ?? 0)"
            }
        }
    }

    /// Drops what it is given: a receiver elsewhere, which nothing on this machine answers for.
    final class Discard: DatagramSink {
        func send(_ datagram: UnsafeRawBufferPointer, to target: UDPAddress) -> Bool { true }
        func send(
            _ bytes: UnsafeRawBufferPointer,
            segmentSize: Int,
            to target: UDPAddress
        ) -> (datagrams: Int, bytes: Int) {
            ((bytes.count + segmentSize - 1) / segmentSize, bytes.count)
        }
    }

    /// A sender with `receiver` as its one destination; the receiver's socket when it listens
    /// from the start, and its port.
    static func sender(for receiver: Receiver, start: UInt64) throws -> (MediaSender, UDPSocket?, Int) {
        let sender = try MediaSender(configuration: .init(cname: "waves"), origin: start)
        var sink: UDPSocket?
        var port = 0
        switch receiver {
        case .asks, .here(nil):
            let socket = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
            (sink, port) = (socket, socket.localAddress.port)
        case .here:
            // A free port, closed again: refused until the receiver binds it.
            port = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0)).localAddress.port
        case .elsewhere:
            break
        }
        if case .elsewhere = receiver {
            try sender.addDestination(
                id: "receiver",
                keys: .random(),
                feedbackKeys: .random(),
                sink: Discard(),
                remote: try UDPAddress(host: "127.0.0.1", port: 50_000),
                inbox: try DatagramInbox(),
                owner: nil,
                audio: false,
                options: DestinationOptions(asksForKeyFrames: false)
            )
        } else {
            let asks = if case .asks = receiver { true } else { false }
            try sender.addDestination(
                id: "receiver",
                address: DestinationAddress(host: "127.0.0.1", videoPort: port, audioPort: nil),
                options: DestinationOptions(asksForKeyFrames: asks)
            )
        }
        return (sender, sink, port)
    }

    static func run(_ receiver: Receiver) throws -> Run {
        let start = MonotonicClock.now()
        let (sender, listening, port) = try Self.sender(for: receiver, start: start)
        var sink = listening
        let control = MediaControl(sender: sender)
        let encoder = try H264Encoder(
            .init(width: 320, height: 180, frameRate: 30, bitrateKbps: 300, keyFrames: .onRequest)
        )
        let path = VideoPath(encoder: encoder, control: control)
        let source = try SyntheticScreenSource(width: 320, height: 180, frameRate: 30)
        var run = Run()
        var lastWaves = 0
        // The synthetic screen's timecode changes every picture: the still screen is one picture
        // captured again.
        let stillPicture = source.videoFrame(index: 10 * 30, captureTime: start)
        for index in 0..<(40 * 30) {
            let t = start + UInt64(index) * 1_000_000_000 / 30
            if case .here(let at?) = receiver, index == at {
                sink = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: port))
            }
            // What the sender thread does between pictures: the receivers' feedback and errors.
            _ = control.sender.withLock { $0.pollFeedback(now: t) }
            let moving = index < 10 * 30
            let framesBefore = control.statistics.withLock { $0.framesOut }
            var picture = moving ? source.videoFrame(index: index, captureTime: t) : stillPicture
            picture.captureTime = t
            try path.send(picture, receivedAt: t)
            let (waves, keyFrames, framesOut) = control.statistics.withLock {
                ($0.refreshWaves, $0.keyFrames, $0.framesOut)
            }
            if waves > lastWaves { run.waves.append(index) }
            lastWaves = waves
            run.keyFrames = keyFrames
            if !moving {
                run.encodedWhileStill += framesOut - framesBefore
                if waves > (run.waves.filter { $0 < 10 * 30 }.count) {
                    run.stillWaves = waves - run.waves.filter { $0 < 10 * 30 }.count
                }
            }
        }
        _ = sink
        print(
            "refresh waves, receiver \(receiver): key frames \(run.keyFrames), waves at pictures \(run.waves), "
                + "\(run.encodedWhileStill) of 900 still pictures encoded"
        )
        return run
    }

    /// Decision D30 (Docs/congestion.md): behind a path that limits the rate, x264's VBV buffer
    /// is the short one while waves go out for a receiver that cannot ask, and the full one for
    /// a receiver that asks (no wave to spread).
    @Test func aLimitingPathShortensTheBufferOnlyWhileWavesGoOut() throws {
        for (receiver, limited) in [(Receiver.elsewhere, true), (.asks, false)] {
            let start = MonotonicClock.now()
            let (sender, sink, _) = try Self.sender(for: receiver, start: start)
            let control = MediaControl(sender: sender)
            let encoder = try H264Encoder(
                .init(width: 320, height: 180, frameRate: 30, bitrateKbps: 1800, keyFrames: .onRequest)
            )
            let path = VideoPath(encoder: encoder, control: control)
            let source = try SyntheticScreenSource(width: 320, height: 180, frameRate: 30)
            // Under the sender's 4 Mbit/s ceiling: what a receiver's estimate asks for.
            control.requestBitrate(kbps: 700)
            for index in 0..<5 {
                let t = start + UInt64(index) * 1_000_000_000 / 30
                try path.send(source.videoFrame(index: index, captureTime: t), receivedAt: t)
            }
            _ = sink
            let expected = encoder.configuration.vbvBufferKbit(at: 700, pathLimited: limited)
            #expect(encoder.bitrateKbps == 700)
            #expect(encoder.vbvBufferKbit == expected, "\(receiver): \(encoder.vbvBufferKbit) kbit, not \(expected)")
            #expect(control.statistics.withLock { $0.videoVBVBufferKbit } == expected)
        }
    }

    @Test("a receiver that asks gets the first IDR and nothing periodic, moving or still")
    func receiversThatAskGetNoRefresh() throws {
        let run = try Self.run(.asks)
        #expect(run.keyFrames == 1)
        #expect(run.waves.isEmpty)
        // Still for 30 s: convergence, then about one idle repeat a second.
        #expect(run.encodedWhileStill < 120, "\(run.encodedWhileStill) pictures encoded in 30 s of a still screen")
    }

    @Test("a receiver elsewhere that cannot ask gets a wave every 2 s while moving, every 10 s while still, no IDR")
    func receiversThatCannotAskGetWaves() throws {
        let run = try Self.run(.elsewhere)
        #expect(run.keyFrames == 1)
        // Moving: due at 2, 4, 6 and 8 s (frames 60, 120, 180, 240).
        #expect(run.waves.filter { $0 < 300 } == [60, 120, 180, 240], "\(run.waves)")
        // Still: the wave due at 10 s, then 10 s apart once converged.
        let still = run.waves.filter { $0 >= 300 }
        #expect((3...5).contains(still.count), "\(run.waves)")
        #expect(zip(still.dropFirst(), still).allSatisfy { $0 - $1 >= 60 }, "\(run.waves)")
        // Each wave is 20 encoded pictures (320 / 16 columns), plus convergence and idle repeats.
        #expect(run.encodedWhileStill < 120 + 20 * still.count, "\(run.encodedWhileStill) pictures encoded while still")
        #expect(run.encodedWhileStill >= 20 * still.count, "\(run.encodedWhileStill) pictures encoded while still")
    }

    @Test(
        "one on this machine: waves while moving; while still, none, but one at once when it starts listening",
        arguments: [nil, 20 * 30]
    )
    func receiversHereGetAWaveWhenTheyListen(listensAt: Int?) throws {
        let run = try Self.run(.here(listensAt: listensAt))
        #expect(run.keyFrames == 1)
        #expect(run.waves.filter { $0 < 300 } == [60, 120, 180, 240], "\(run.waves)")
        // The cadence is still within 2 s of the last change (12 s, picture 360): after that,
        // no periodic wave; one for a receiver that starts listening, 1.5 s after its last
        // refusal (the idle repeat's, at most a second before it bound).
        let afterStill = run.waves.filter { $0 > 12 * 30 }
        if let listensAt {
            #expect(afterStill.count == 1, "\(run.waves)")
            #expect(afterStill.allSatisfy { (listensAt + 15)...(listensAt + 75) ~= $0 }, "\(run.waves)")
        } else {
            #expect(afterStill.isEmpty, "\(run.waves)")
        }
    }
}
