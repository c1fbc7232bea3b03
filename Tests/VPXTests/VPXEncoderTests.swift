import CVPX
import Foundation
import Media
import RTP
import Testing

@testable import VPX

@Suite("VPXEncoder: libvpx through our RTP payload formats and back through libvpx's decoder")
struct VPXEncoderTests {
    static let width = 640
    static let height = 360

    /// One frame through the codec's payloader's hot path and depacketizer: its packets, and the
    /// frame as the receiver got it.
    struct Received {
        var packets: [RTPPacket]
        var data: [UInt8]
        var isComplete: Bool
        var isKeyFrame: Bool
        var pictureID: UInt16?
        /// VP9: the SS resolution of a key frame; VP8: the key frame header's size.
        var resolution: (width: Int, height: Int)?
    }

    /// The send and receive halves for one codec, as a send path and a test receiver hold them.
    struct Link {
        let codec: VPXEncoder.Codec
        let budget = RTPPayloadBudget.standard
        let buffer = RTPPacketBuffer(budget: .standard)
        var stream: RTPStreamState
        var vp8 = VP8Payloader(firstPictureID: 0x7FFD)
        var vp9 = VP9Payloader(firstPictureID: 0x7FFD)
        var vp8Receiver = VP8Depacketizer()
        var vp9Receiver = VP9Depacketizer()

        init(_ codec: VPXEncoder.Codec) throws {
            self.codec = codec
            stream = try RTPStreamState(
                ssrc: 0xC0DE,
                payloadType: codec == .vp8 ? 96 : 98,
                clockRate: 90_000,
                initialSequenceNumber: 65_530,
                timestampBase: 0
            )
        }

        mutating func send(_ frame: VPXEncodedFrame) throws -> Received {
            var packets: [RTPPacket] = []
            let timestamp = UInt32(truncatingIfNeeded: frame.pts90k)
            let emit: (RTPPacketBuffer) throws -> Void = { packets.append(try RTPPacket.parse($0.copyBytes())) }
            switch codec {
            case .vp8:
                try vp8.packetize(
                    frame: frame.data[...],
                    timestamp: timestamp,
                    stream: &stream,
                    into: buffer,
                    emit: emit
                )
            case .vp9:
                let info = VP9Payloader.FrameInfo(
                    isKeyFrame: frame.isKeyFrame,
                    width: frame.width,
                    height: frame.height
                )
                try vp9.packetize(
                    frame: frame.data[...],
                    info: info,
                    timestamp: timestamp,
                    stream: &stream,
                    into: buffer,
                    emit: emit
                )
            }
            #expect(packets.allSatisfy { $0.serializedLength <= budget.maximumPacketLength })
            #expect(packets.map(\.header.marker) == Array(repeating: false, count: packets.count - 1) + [true])
            switch codec {
            case .vp8:
                var frames: [VP8Frame] = []
                for packet in packets { frames += try vp8Receiver.push(packet) }
                let received = try #require(frames.count == 1 ? frames.first : nil)
                let header = try VP8FrameHeader.parse(received.data[...])
                #expect(header.isKeyFrame == received.isKeyFrame)
                return Received(
                    packets: packets,
                    data: received.data,
                    isComplete: received.isComplete,
                    isKeyFrame: received.isKeyFrame,
                    pictureID: received.pictureID,
                    resolution: header.width.flatMap { w in header.height.map { (w, $0) } }
                )
            case .vp9:
                var frames: [VP9Frame] = []
                for packet in packets { frames += try vp9Receiver.push(packet) }
                let received = try #require(frames.count == 1 ? frames.first : nil)
                #expect(received.endsPicture)
                // The bitstream agrees (VP9 uncompressed header, profile 0: frame_type is bit 2
                // of the first octet, 0 for KEY_FRAME).
                #expect((received.data[0] & 0x04 == 0) == received.isKeyFrame)
                return Received(
                    packets: packets,
                    data: received.data,
                    isComplete: received.isComplete,
                    isKeyFrame: received.isKeyFrame,
                    pictureID: received.pictureID,
                    resolution: received.resolution.map { (Int($0.width), Int($0.height)) }
                )
            }
        }
    }

    @Test(
        "encode → packetize → depacketize → decode: the picture comes back, key frames only when due",
        arguments: VPXEncoder.Codec.allCases
    )
    func roundTrip(codec: VPXEncoder.Codec) throws {
        let screen = TestScreen(width: Self.width, height: Self.height)
        let encoder = try VPXEncoder(
            .init(codec: codec, width: Self.width, height: Self.height, frameRate: 30, bitrateKbps: 1500)
        )
        let decoder = try VPXDecoder(codec)
        var link = try Link(codec)
        let forced: Set<Int> = [6]
        var keyFrames: [Int] = []
        var pictureIDs: [UInt16] = []
        var lowestPSNR = 99.0
        var packets = 0
        for index in 0..<12 {
            let input = try screen.frame(index)
            // Two ways to ask: the request before the call, and the argument.
            if index == 9 { encoder.requestKeyFrame() }
            let encoded = try #require(
                try encoder.encode(input, pts90k: Int64(index) * 3000, forceKeyFrame: forced.contains(index))
            )
            #expect(encoded.codec == codec && encoded.pts90k == Int64(index) * 3000)
            #expect(encoded.captureTime == input.captureTime)
            #expect(encoded.quantizer.map { (0...63).contains($0) } == true)
            #expect(encoded.quantizer == encoder.lastQuantizer)
            if encoded.isKeyFrame { keyFrames.append(index) }

            let received = try link.send(encoded)
            #expect(received.isComplete)
            #expect(received.data == encoded.data)
            #expect(received.isKeyFrame == encoded.isKeyFrame)
            if received.isKeyFrame {
                #expect(received.resolution?.width == Self.width && received.resolution?.height == Self.height)
            }
            let startsKey =
                codec == .vp8
                ? VP8Depacketizer.startsKeyFrame(received.packets[0].payload[...])
                : VP9Depacketizer.startsKeyFrame(received.packets[0].payload[...])
            #expect(startsKey == encoded.isKeyFrame)
            pictureIDs.append(try #require(received.pictureID))

            let pictures = try decoder.decode(received.data)
            let picture = try #require(pictures.count == 1 ? pictures.first : nil)
            #expect(picture.width == Self.width && picture.height == Self.height)
            let psnr = lumaPSNR(input, picture)
            #expect(psnr >= 30, "frame \(index): luma PSNR \(psnr) dB")
            lowestPSNR = min(lowestPSNR, psnr)
            packets += received.packets.count
            // The red patch is where it was drawn, and not where it was not.
            let origin = screen.patchOrigin(index)
            let inset = 8
            let size = TestScreen.patchSize - 2 * inset
            let cw = (picture.width + 1) / 2
            let u = chromaMean(picture.u, chromaWidth: cw, x: origin.x + inset, y: origin.y + inset, size: size)
            let v = chromaMean(picture.v, chromaWidth: cw, x: origin.x + inset, y: origin.y + inset, size: size)
            #expect(
                abs(u - Double(TestScreen.patchColour.u)) < 12 && abs(v - Double(TestScreen.patchColour.v)) < 12,
                "frame \(index): patch U \(u) V \(v)"
            )
            let elsewhere = chromaMean(picture.v, chromaWidth: cw, x: 0, y: Self.height - 40, size: 32)
            #expect(abs(elsewhere - 128) < 8, "frame \(index): V \(elsewhere) away from the patch")
        }
        print(
            "\(codec.encodingName) round trip, 12 frames at 640x360: \(packets) packets, lowest luma PSNR \(lowestPSNR) dB"
        )
        #expect(keyFrames == [0, 6, 9])
        #expect(pictureIDs == [0x7FFD, 0x7FFE, 0x7FFF] + (0..<9).map { UInt16($0) })
        #expect(link.vp8Receiver.statistics == .init() && link.vp9Receiver.statistics == .init())
    }

    /// The still-screen cadence as the media thread runs it for a codec group: a still 720p
    /// screen refreshed until libvpx reaches the screen-content floor, then idle repeats a second
    /// apart, decoded by libvpx's decoder as a viewer would.
    @Test(
        "a still screen converges towards the screen-content floor; an idle repeat costs ~nothing, shows the same",
        arguments: VPXEncoder.Codec.allCases
    )
    func stillScreen(codec: VPXEncoder.Codec) throws {
        let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
        let still = source.videoFrame(index: 5, captureTime: 0)
        let encoder = try VPXEncoder(.init(codec: codec))
        #expect(encoder.configuration.quantizerRange == VPXEncoder.screenContentMinimumQuantizer...56)
        let decoder = try VPXDecoder(codec)
        var quantizers: [Int] = []
        var refreshes = 0
        var last: VPXDecoder.Picture?
        // Refreshes at 30 fps until converged (the cadence's 2 s bound: 60 pictures).
        for index in 0..<60 {
            let frame = try #require(try encoder.encode(still, pts90k: Int64(index) * 3000))
            let pictures = try decoder.decode(frame.data)
            #expect(pictures.count == 1, "picture \(index) decoded to \(pictures.count)")
            last = pictures.first ?? last
            quantizers.append(try #require(frame.quantizer))
            refreshes = index
            if let qp = frame.quantizer, qp <= VPXEncoder.screenContentMinimumQuantizer { break }
        }
        // Never under the floor; at or near it within the cadence's 2 s (VP8 on this busy
        // synthetic screen gets to 11, VP9 to the floor).
        #expect(quantizers.allSatisfy { $0 >= VPXEncoder.screenContentMinimumQuantizer }, "quantizers \(quantizers)")
        #expect(quantizers.last.map { $0 <= 12 } == true, "quantizers \(quantizers)")
        let converged = try #require(last)
        let psnr = lumaPSNR(still, converged)
        #expect(psnr >= 40, "converged luma PSNR \(psnr) dB")
        // Idle repeats, a second apart, then a change: the repeats decode to the same picture.
        var repeatBytes: [Int] = []
        var repeats: [VPXDecoder.Picture] = []
        var start = timespec()
        var end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        for second in 1...3 {
            let pts = Int64(refreshes) * 3000 + Int64(second) * 90_000
            let frame = try #require(try encoder.encode(still, pts90k: pts, idleRepeat: true))
            #expect(!frame.isKeyFrame)
            repeatBytes.append(frame.data.count)
            repeats.append(try #require(try decoder.decode(frame.data).first))
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        let milliseconds = (Double(end.tv_sec - start.tv_sec) * 1000 + Double(end.tv_nsec - start.tv_nsec) / 1e6) / 3
        #expect(repeatBytes.allSatisfy { $0 < 2000 }, "idle repeats \(repeatBytes) B")
        // What a viewer shows is the converged picture: every block skipped, only the loop
        // filter's rounding moves a few pixels (measured: 0.3–1.2 % of luma samples, by 1–2).
        for picture in repeats {
            let again = lumaPSNR(still, picture)
            #expect(abs(again - psnr) < 0.1, "repeat at \(again) dB, converged \(psnr) dB")
        }
        // A key frame asked for during a still period is a whole key frame, not a repeat.
        let key = try #require(try encoder.encode(still, pts90k: 500_000, forceKeyFrame: true, idleRepeat: true))
        #expect(key.isKeyFrame && key.data.count > 10_000)
        // The threshold went back: the next change is coded.
        let moved = source.videoFrame(index: 40, captureTime: 0)
        let after = try #require(try encoder.encode(moved, pts90k: 503_000))
        let picture = try #require(
            try decoder.decode(key.data).first.flatMap { _ in try decoder.decode(after.data).first }
        )
        #expect(lumaPSNR(moved, picture) >= 30)
        print(
            "\(codec.encodingName) still 720p: converged at QP \(quantizers.last ?? -1) after \(refreshes + 1) pictures, "
                + String(format: "%.1f dB; idle repeats %@ B, %.1f ms each", psnr, "\(repeatBytes)", milliseconds)
        )
    }

    /// `--content-hint detail`'s floor against `text`'s on the same still 720p screen: the
    /// quantizers stop at it, and the still picture costs less at a coarser but clean quality.
    @Test("a finer floor for text, a coarser one for detail", arguments: VPXEncoder.Codec.allCases)
    func detailFloor(codec: VPXEncoder.Codec) throws {
        let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
        let still = source.videoFrame(index: 5, captureTime: 0)
        func converge(floor: Int) throws -> (quantizers: [Int], bytes: Int, psnr: Double) {
            let encoder = try VPXEncoder(.init(codec: codec, finestQuantizer: floor))
            #expect(encoder.configuration.quantizerRange == floor...56)
            let decoder = try VPXDecoder(codec)
            var quantizers: [Int] = []
            var bytes = 0
            var last: VPXDecoder.Picture?
            for index in 0..<60 {
                let frame = try #require(try encoder.encode(still, pts90k: Int64(index) * 3000))
                bytes += frame.data.count
                last = try decoder.decode(frame.data).first ?? last
                quantizers.append(try #require(frame.quantizer))
            }
            return (quantizers, bytes, lumaPSNR(still, try #require(last)))
        }
        let detailFloor = VPXEncoder.detailMinimumQuantizer(for: codec)
        let text = try converge(floor: VPXEncoder.screenContentMinimumQuantizer)
        let detail = try converge(floor: detailFloor)
        print(
            "\(codec.encodingName) still 720p, 60 pictures: text (floor \(VPXEncoder.screenContentMinimumQuantizer)) "
                + String(format: "%.1f dB, %d kB", text.psnr, text.bytes / 1000) + "; detail (floor \(detailFloor)) "
                + String(format: "%.1f dB, %d kB", detail.psnr, detail.bytes / 1000)
                + ", last quantizers \(detail.quantizers.suffix(5))"
        )
        #expect(detail.quantizers.allSatisfy { $0 >= detailFloor }, "\(detail.quantizers)")
        #expect(detail.quantizers.last == detailFloor, "\(detail.quantizers)")
        #expect(detail.bytes < text.bytes && detail.psnr < text.psnr && detail.psnr >= 35)
    }

    @Test("setBitrate changes the size of what comes out, without a key frame", arguments: VPXEncoder.Codec.allCases)
    func bitrateChange(codec: VPXEncoder.Codec) throws {
        let screen = TestScreen(width: Self.width, height: Self.height)
        let encoder = try VPXEncoder(
            .init(codec: codec, width: Self.width, height: Self.height, frameRate: 30, bitrateKbps: 2000)
        )
        // Noise everywhere, changing every frame: the encoder spends whatever it is given.
        func average(_ frames: Range<Int>) throws -> (bytes: Double, keyFrames: Int, quantizer: Double) {
            var bytes = 0
            var keys = 0
            var quantizers = 0
            for index in frames {
                let frame = try #require(
                    try encoder.encode(try screen.frame(index, noise: true), pts90k: Int64(index) * 3000)
                )
                if index >= frames.lowerBound + 10 {
                    bytes += frame.data.count
                    quantizers += frame.quantizer ?? 0
                }
                if frame.isKeyFrame { keys += 1 }
            }
            let counted = Double(frames.count - 10)
            return (Double(bytes) / counted, keys, Double(quantizers) / counted)
        }
        let high = try average(0..<25)
        try encoder.setBitrate(kbps: 250)
        #expect(encoder.bitrateKbps == 250)
        let low = try average(25..<50)
        print(
            "\(codec.encodingName) setBitrate: 2000 kbit/s → \(Int(high.bytes)) B/frame at QP \(high.quantizer); "
                + "250 kbit/s → \(Int(low.bytes)) B/frame at QP \(low.quantizer)"
        )
        #expect(high.keyFrames == 1 && low.keyFrames == 0)
        #expect(low.bytes < high.bytes * 0.4, "\(low.bytes) B at 250 kbit/s vs \(high.bytes) B at 2000")
        #expect(low.quantizer > high.quantizer)
        // At 30 fps, 250 kbit/s is about 1040 bytes a frame. CBR gets near it, unless noise this
        // dense still costs more at the coarsest quantizer allowed (VP8 does: ~2400 bytes at 56).
        let target: Double = 250_000 / 8 / 30
        #expect(low.bytes < 2 * target || low.quantizer == Double(VPXEncoder.quantizerRange.upperBound))
    }

    @Test("bad settings and frames are refused with a message that says what", arguments: VPXEncoder.Codec.allCases)
    func refusals(codec: VPXEncoder.Codec) throws {
        func refused(_ configuration: VPXEncoder.Configuration) -> MediaError? {
            #expect(throws: MediaError.self) { try VPXEncoder(configuration) }
        }
        #expect(refused(.init(codec: codec, width: 641, height: 360))?.code == .invalidDimensions)
        #expect(refused(.init(codec: codec, width: 0, height: 360))?.code == .invalidDimensions)
        #expect(refused(.init(codec: codec, width: 16_384, height: 360))?.code == .invalidDimensions)
        #expect(refused(.init(codec: codec, bitrateKbps: 10))?.code == .invalidSetting)
        let speed = refused(.init(codec: codec, speed: 17))
        #expect(speed?.code == .invalidSetting)
        #expect(speed?.message.contains("\(codec.encodingName) speed (cpu-used) 17") == true)
        #expect(refused(.init(codec: codec, threads: 0))?.code == .invalidSetting)
        let finest = refused(.init(codec: codec, finestQuantizer: 57))
        #expect(finest?.message == "finest quantizer 57 is outside 2...56")

        let encoder = try VPXEncoder(.init(codec: codec, width: 320, height: 180))
        let wrongSize = #expect(throws: MediaError.self) {
            try encoder.encode(try VideoFrame(width: 640, height: 360), pts90k: 0)
        }
        #expect(wrongSize?.message == "frame is 640x360, \(codec.encodingName) encoder expects 320x180")
        let bitrate = #expect(throws: MediaError.self) { try encoder.setBitrate(kbps: 60_000) }
        #expect(bitrate?.code == .invalidSetting)
        #expect(encoder.lastQuantizer == nil)
        // A frame with padded rows (stride > width) goes in as it is.
        let padded = try VideoFrame(
            width: 320,
            height: 180,
            y: [UInt8](repeating: 100, count: 384 * 180),
            strideY: 384,
            u: [UInt8](repeating: 128, count: 192 * 90),
            strideU: 192,
            v: [UInt8](repeating: 128, count: 192 * 90),
            strideV: 192,
            captureTime: 0
        )
        let frame = try #require(try encoder.encode(padded, pts90k: 0))
        let picture = try #require(try VPXDecoder(codec).decode(frame.data).first)
        #expect(picture.y.allSatisfy { abs(Int($0) - 100) <= 2 })
    }

    @Test(
        "two threads (VP9: tile columns and row multithreading) code the same picture",
        arguments: VPXEncoder.Codec.allCases
    )
    func threads(codec: VPXEncoder.Codec) throws {
        let screen = TestScreen(width: Self.width, height: Self.height)
        let encoder = try VPXEncoder(.init(codec: codec, width: Self.width, height: Self.height, threads: 2))
        let decoder = try VPXDecoder(codec)
        for index in 0..<3 {
            let input = try screen.frame(index)
            let frame = try #require(try encoder.encode(input, pts90k: Int64(index) * 3000))
            let picture = try #require(try decoder.decode(frame.data).first)
            #expect(lumaPSNR(input, picture) >= 30)
        }
    }

    @Test("libvpx's own words reach the message: status, last error and its detail")
    func libraryError() throws {
        // A width of 0 is refused by libvpx's own configuration check (ours refuses it earlier).
        let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        defer { context.deallocate() }
        context.initialize(to: vpx_codec_ctx_t())
        var settings = vpx_codec_enc_cfg_t()
        #expect(vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &settings, 0) == VPX_CODEC_OK)
        settings.g_w = 0
        let status = rtc_vpx_codec_enc_init(context, vpx_codec_vp8_cx(), &settings, 0)
        #expect(status == VPX_CODEC_INVALID_PARAM)
        let message = VPXEncoder.describe(status, context: context)
        #expect(message.hasPrefix("Invalid parameter"), "\(message)")
        #expect(message.contains("g_w"), "\(message)")
        // libvpx 1.12 takes a presentation time that goes back (VP8 and VP9) without complaint.
        let encoder = try VPXEncoder(.init(codec: .vp8, width: 320, height: 180))
        let frame = try VideoFrame(width: 320, height: 180)
        _ = try encoder.encode(frame, pts90k: 6000)
        #expect(try encoder.encode(frame, pts90k: 3000) != nil)
    }

    /// Not a pass/fail benchmark: the CPU milliseconds a 720p screen frame costs each encoder at
    /// a few speeds, with the bytes and luma PSNR it gives, and x264 veryfast's for comparison;
    /// what `VPXEncoder.Configuration.defaultSpeed(for:)` was chosen from. 15–45 s of two cores,
    /// so only on request: `VPX_TIMING=1 swift test --skip-build --filter VPXEncoderTests/timing`.
    @Test(
        "encode time per 720p frame, printed",
        .enabled(if: ProcessInfo.processInfo.environment["VPX_TIMING"] != nil, "set VPX_TIMING=1 to measure")
    )
    func timing() throws {
        let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
        let frames = (0..<30).map { source.videoFrame(index: $0, captureTime: UInt64($0) * 33_333_333) }
        // CPU time of this thread (libvpx and x264 run on the caller's thread with one thread):
        // what the encoder costs, whatever else the shared host is doing.
        func cpuMilliseconds(_ body: () throws -> Void) rethrows -> Double {
            var start = timespec()
            var end = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
            try body()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
            return Double(end.tv_sec - start.tv_sec) * 1000 + Double(end.tv_nsec - start.tv_nsec) / 1e6
        }
        var report: [String] = []
        let runs: [(VPXEncoder.Codec, Int)] = [(.vp8, -6), (.vp8, -8), (.vp8, -10), (.vp9, 7), (.vp9, 8), (.vp9, 9)]
        for (codec, speed) in runs {
            let encoder = try VPXEncoder(.init(codec: codec, speed: speed))
            var encoded: [VPXEncodedFrame] = []
            let elapsed = try cpuMilliseconds {
                for (index, frame) in frames.enumerated() {
                    encoded.append(try #require(try encoder.encode(frame, pts90k: Int64(index) * 3000)))
                }
            }
            let decoder = try VPXDecoder(codec)
            var psnr = 0.0
            for (frame, coded) in zip(frames, encoded) {
                psnr += lumaPSNR(frame, try #require(try decoder.decode(coded.data).first))
            }
            let bytes = encoded.reduce(0) { $0 + $1.data.count } / frames.count
            report.append(
                "\(codec.encodingName) speed \(speed): "
                    + String(
                        format: "%.1f ms, %d B, %.1f dB",
                        elapsed / Double(frames.count),
                        bytes,
                        psnr / Double(frames.count)
                    )
            )
        }
        let x264 = try H264Encoder(.init(keyFrames: .onRequest, screenContent: true))
        var bytes = 0
        let elapsed = try cpuMilliseconds {
            for frame in frames { bytes += try x264.encode(frame)?.data.count ?? 0 }
        }
        report.append(
            String(format: "H.264 veryfast: %.1f ms, %d B", elapsed / Double(frames.count), bytes / frames.count)
        )
        print("720p screen, CPU per frame at 1800 kbit/s: " + report.joined(separator: "; "))
    }
}
