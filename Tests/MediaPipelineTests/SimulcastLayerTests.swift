import Media
import SendEngine
import Testing
import Transport

@testable import MediaPipeline

/// Simulcast's lower layers on the media thread (Docs/simulcast.md): `VideoPath` with a real
/// x264 per layer and a real `MediaSender` with three layers (`SimulcastEncoding.defaults`) sending to a loopback socket, its
/// capture clock simulated at 30 fps: 4 s of a moving 1280x720 screen, then 6 s of a still one.
@Suite("Simulcast layers")
struct SimulcastLayerTests {
    static func path(destinationLayers: DestinationLayers) throws -> (VideoPath, MediaControl, UInt64) {
        let start = MonotonicClock.now()
        var configuration = MediaSender.Configuration(cname: "layers")
        configuration.simulcast = MediaSender.Simulcast(rids: ["f", "q", "l"], mid: "0")
        let sender = try MediaSender(configuration: configuration, origin: start)
        let sink = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        try sender.addDestination(
            id: "sfu",
            address: try DestinationAddress(host: "127.0.0.1", videoPort: Int(sink.localAddress.port), audioPort: nil),
            options: DestinationOptions(asksForKeyFrames: true, layers: destinationLayers)
        )
        let control = MediaControl(sender: sender)
        let encoder = try H264Encoder(
            .init(
                width: 1280,
                height: 720,
                frameRate: 30,
                bitrateKbps: 2500,
                keyFrames: .onRequest,
                preset: "ultrafast"
            )
        )
        let layers = SimulcastEncoding.defaults(width: 1280, frameRate: 30, bitrateKbps: 2500)
        return (VideoPath(encoder: encoder, control: control, simulcast: layers), control, start)
    }

    static func run(_ path: VideoPath, start: UInt64) throws {
        let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
        let still = source.videoFrame(index: 4 * 30, captureTime: start)
        for index in 0..<(10 * 30) {
            let t = start + UInt64(index) * 1_000_000_000 / 30
            var picture = index < 4 * 30 ? source.videoFrame(index: index, captureTime: t) : still
            picture.captureTime = t
            try path.send(picture, receivedAt: t)
        }
    }

    @Test("f at 30 fps, l full size at 5, q half size at 15; a still screen costs nothing on any")
    func layersKeepTheirRatesAndGoStill() throws {
        let (path, control, start) = try Self.path(destinationLayers: .all)
        try Self.run(path, start: start)
        let (main, layers) = control.statistics.withLock { ($0.framesOut, $0.layers) }
        #expect(layers.map(\.rid) == ["q", "l"])
        let (quarter, low) = (layers[0], layers[1])
        print(
            "simulcast 10 s (4 moving, 6 still): f \(main) pictures; "
                + layers.map {
                    "\($0.rid) \($0.width)x\($0.height) \($0.frames) pictures \($0.bytes) B "
                        + "\($0.encodeNanoseconds / max(1, $0.frames) / 1000) µs each, cadence \($0.cadence ?? "-")"
                }.joined(separator: "; ")
        )
        #expect(low.width == 1280 && low.height == 720)
        #expect(quarter.width == 640 && quarter.height == 360)
        #expect(!low.paused && !quarter.paused && low.failures == 0 && quarter.failures == 0)
        // Moving: 4 s at 5 and 15 fps; then convergence (at the layer's rate, ≤ 2 s) and a repeat a
        // second while still.
        #expect((20...22 + 10 + 6).contains(low.frames), "l: \(low.frames)")
        #expect((60...62 + 30 + 6).contains(quarter.frames), "q: \(quarter.frames)")
        #expect(low.cadence == "still" && quarter.cadence == "still")
        #expect(low.keyFrames == 1 && quarter.keyFrames == 1)
        // The SFU's vote leaves l and q their rates (`MediaSender.layerZeroVote`); with no
        // report yet x264 keeps the start rate.
        #expect(path.encoder.bitrateKbps == 2500)
    }

    @Test("the first layer's KBPS is layer 0's ceiling")
    func firstLayerRateIsTheCeiling() throws {
        let control = MediaControl(sender: try MediaSender(configuration: .init(cname: "ceiling"), origin: 0))
        let encoder = try H264Encoder(
            .init(width: 640, height: 360, frameRate: 30, bitrateKbps: 2500, keyFrames: .onRequest, preset: "ultrafast")
        )
        let layers = try SimulcastEncoding.parse("f:1:30:1200,l:1:5:250", frameRate: 30)
        let path = VideoPath(encoder: encoder, control: control, simulcast: layers)
        #expect(path.encoder.bitrateKbps == 1200)
    }

    @Test("nobody takes the layers: they are not encoded, and layer 0 keeps the whole target")
    func unwatchedLayersCostNothing() throws {
        let (path, control, start) = try Self.path(destinationLayers: .first)
        try Self.run(path, start: start)
        let layers = control.statistics.withLock { $0.layers }
        #expect(layers.map(\.rid) == ["q", "l"])
        #expect(path.encoder.bitrateKbps == 2500)
        #expect(layers.allSatisfy { $0.paused && $0.frames == 0 && $0.opened == 0 }, "\(layers)")
    }
}
