import Foundation
import Testing

@testable import Media

/// Reads Exp-Golomb fields (H.264 §9.1) from a NAL unit's RBSP, enough to get slice_type.
struct BitReader {
    let bytes: [UInt8]
    var bit = 0
    mutating func readBit() -> Int {
        guard bit / 8 < bytes.count else { return 0 }
        let v = Int(bytes[bit / 8] >> UInt8(7 - bit % 8) & 1)
        bit += 1
        return v
    }
    mutating func ue() -> Int {
        var zeros = 0
        while readBit() == 0 && zeros < 32 { zeros += 1 }
        var value = 0
        for _ in 0..<zeros { value = value << 1 | readBit() }
        return (1 << zeros) - 1 + value
    }
}

extension Array where Element == UInt8 {
    /// This NAL unit behind an Annex B start code.
    var annexBPrefixed: [UInt8] { [0, 0, 0, 1] + self }
}

@Suite struct H264EncoderTests {
    func encode(frames: Int, config: H264Encoder.Configuration, forceKeyAt: Set<Int> = []) throws -> [H264AccessUnit] {
        let source = try SyntheticScreenSource(width: config.width, height: config.height, frameRate: config.frameRate)
        let encoder = try H264Encoder(config)
        var units: [H264AccessUnit] = []
        for i in 0..<frames {
            if forceKeyAt.contains(i) { encoder.requestKeyFrame() }
            let frame = source.videoFrame(index: i, captureTime: UInt64(i) * 33_333_333)
            units.append(try #require(try encoder.encode(frame)))
        }
        return units
    }

    @Test func firstAccessUnitIsSPSPPSIDRInConstrainedBaseline() throws {
        let units = try encode(frames: 1, config: .init(width: 640, height: 360))
        let first = try #require(units.first)
        #expect(first.nalTypes == [7, 8, 5])
        #expect(first.isKeyFrame)
        let sps = first.nalUnits[0]
        #expect(sps[sps.startIndex + 1] == 66, "profile_idc")
        #expect(sps[sps.startIndex + 2] & 0x40 != 0, "constraint_set1_flag (constrained baseline)")
        #expect(first.captureTime == 0)
        // The headers offered before encoding are the ones in the first access unit.
        let encoder = try H264Encoder(.init(width: 640, height: 360))
        let sets = try encoder.parameterSets()
        let unit = try #require(try encoder.encode(VideoFrame(width: 640, height: 360)))
        #expect(sets.sps == Array(unit.nalUnits[0]) && sets.pps == Array(unit.nalUnits[1]))
    }

    @Test func noBSlicesKeyFramesOnScheduleAndOnDemand() throws {
        let units = try encode(frames: 75, config: .init(width: 640, height: 360, frameRate: 30), forceKeyAt: [10])
        var keyFrames: [Int] = []
        for (i, unit) in units.enumerated() {
            #expect(!unit.nalTypes.contains(9), "no access unit delimiters")
            #expect(!unit.nalTypes.contains(12), "no filler data")
            #expect(unit.captureTime == UInt64(i) * 33_333_333)
            if unit.isKeyFrame {
                keyFrames.append(i)
                #expect(Array(unit.nalTypes.prefix(2)) == [7, 8], "SPS and PPS before every IDR")
            }
            for nal in unit.nalUnits where nal.first.map({ $0 & 0x1F == 1 || $0 & 0x1F == 5 }) == true {
                var reader = BitReader(bytes: Array(nal.dropFirst()))
                _ = reader.ue()  // first_mb_in_slice
                let sliceType = reader.ue() % 5
                #expect(sliceType != 1, "B slice in frame \(i)")
            }
        }
        // Frame 0, the forced IDR at 10, then the 2 s interval counted from the last IDR.
        #expect(keyFrames == [0, 10, 70])
    }

    @Test func bitrateChangesAtRunTimeWithoutAKeyFrame() throws {
        let config = H264Encoder.Configuration(width: 640, height: 360, bitrateKbps: 150, preset: "ultrafast")
        let source = try SyntheticScreenSource(width: 640, height: 360)
        let encoder = try H264Encoder(config)
        var low = 0
        var high = 0
        for i in 0..<120 {
            if i == 60 { try encoder.setBitrate(kbps: 3000) }
            let unit = try #require(try encoder.encode(source.videoFrame(index: i, captureTime: UInt64(i))))
            if i >= 30 && i < 60 { low += unit.data.count }
            if i >= 90 { high += unit.data.count }
            if i > 0 && i != 60 { #expect(!unit.isKeyFrame || i % 60 == 0) }
        }
        #expect(encoder.bitrateKbps == 3000)
        #expect(high > 3 * low, "30 frames: \(low) bytes at 150 kbit/s, \(high) at 3000 kbit/s")
        #expect(throws: MediaError.self) { try encoder.setBitrate(kbps: 0) }
    }

    /// The VBV buffer behind a limiting path (Decision D30): 150 ms of the rate, never under the
    /// floor, never over the full buffer.
    @Test func aLimitingPathShortensTheVBVBuffer() throws {
        let config = H264Encoder.Configuration()
        let table: [(kbps: Int, limited: Bool, kbit: Int)] = [
            (1800, false, 1080), (1800, true, 270), (700, false, 420), (700, true, 105),
            (400, true, 90), (150, true, 90), (100, true, 60), (100, false, 60),
        ]
        for (kbps, limited, kbit) in table {
            #expect(config.vbvBufferKbit(at: kbps, pathLimited: limited) == kbit, "\(kbps) kbit/s, limited \(limited)")
        }
        #expect { try H264Encoder(.init(pathLimitedVBVBufferMs: 20)) } throws: {
            ($0 as? MediaError)?.message == "path-limited VBV buffer 20 ms is outside 50...10000"
        }
        #expect { try H264Encoder(.init(pathLimitedVBVFloorKbit: 0)) } throws: {
            ($0 as? MediaError)?.message == "path-limited VBV floor 0 kbit is outside 1...100000"
        }
    }

    /// Why (Decision D30): an intra-refresh wave's column costs several pictures' bits where it
    /// crosses text, all within a few pictures, and behind a full link those pictures wait in
    /// its queue. The synthetic screen at 700 kbit/s, waves back to back: with the full 600 ms
    /// buffer the dearest 5 pictures run 12.0 kB over the rate's share (96 ms of a 1 Mbit/s
    /// link); with the path-limited buffer 1.6 kB (13 ms), at the same mean QP (37.0).
    @Test func aPathLimitedBufferSpreadsAWavesColumnThroughText() throws {
        func run(pathLimited: Bool) throws -> (excess: Int, meanQP: Double) {
            let config = H264Encoder.Configuration(width: 1280, height: 720, bitrateKbps: 1800, keyFrames: .onRequest)
            let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
            let encoder = try H264Encoder(config)
            try encoder.setBitrate(kbps: 700, pathLimited: pathLimited)
            var sizes: [Int] = []
            var quantizers: [Int] = []
            for index in 0..<420 {
                if index >= 90, !encoder.isRefreshing { encoder.startRefreshWave() }
                let frame = source.videoFrame(index: index, captureTime: UInt64(index) * 33_333_333)
                let unit = try #require(try encoder.encode(frame))
                guard index >= 120 else { continue }
                sizes.append(unit.data.count)
                quantizers.append(unit.quantizer ?? 0)
            }
            let share = 700_000 / 8 / 30
            var excess = 0
            for start in 0...(sizes.count - 5) {
                excess = max(excess, sizes[start..<(start + 5)].reduce(0, +) - 5 * share)
            }
            return (excess, Double(quantizers.reduce(0, +)) / Double(quantizers.count))
        }
        let full = try run(pathLimited: false)
        let limited = try run(pathLimited: true)
        let report =
            "5-picture excess \(full.excess) → \(limited.excess) bytes, mean QP \(full.meanQP) → \(limited.meanQP)"
        print("path-limited VBV: \(report)")
        #expect(limited.excess * 2 < full.excess, "\(report)")
        // 50 ms of the rate.
        #expect(limited.excess < 700_000 / 8 / 20, "\(report)")
        #expect(limited.meanQP < full.meanQP + 2, "\(report)")
    }

    /// The frame QPs of `picture` encoded `times` times, 33 ms apart: the first, then refreshes.
    static func quantizers(encoding picture: VideoFrame, times: Int, with encoder: H264Encoder) throws -> [Int] {
        try (0..<times).map { index in
            var frame = picture
            frame.captureTime = UInt64(index) * 33_333_333
            return try #require(try encoder.encode(frame)?.quantizer)
        }
    }

    /// What a still screen's cadence relies on: each unit reports its QP, refreshes of the same
    /// picture let the rate control lower it, and a repeat forced to QP 51 is a few bytes.
    @Test func quantizerIsReportedAndAForcedRepeatIsTiny() throws {
        let config = H264Encoder.Configuration(width: 640, height: 360, preset: "veryfast", screenContent: true)
        let source = try SyntheticScreenSource(width: 640, height: 360)
        let encoder = try H264Encoder(config)
        let picture = source.videoFrame(index: 0, captureTime: 0)
        let quantizers = try Self.quantizers(encoding: picture, times: 20, with: encoder)
        #expect(quantizers.allSatisfy { (0...51).contains($0) }, "\(quantizers)")
        #expect(quantizers.last ?? 51 < quantizers.first ?? 0, "refreshes sharpen: \(quantizers)")
        var frame = picture
        frame.captureTime = 21 * 33_333_333
        let repeated = try #require(try encoder.encode(frame, quantizer: 51))
        #expect(repeated.quantizer == 51)
        #expect(!repeated.isKeyFrame)
        #expect(repeated.data.count < 100, "an idle repeat of \(repeated.data.count) bytes")
    }

    /// Screen content's floor is the configuration's `finestQP` (the content hint's converged
    /// QP): refreshes of a still picture with bits to spare stop at it and never go under it,
    /// and a finer floor lets them go finer.
    @Test(arguments: [12, 24])
    func screenContentStopsAtItsFinestQP(finest: Int) throws {
        let config = H264Encoder.Configuration(
            width: 640,
            height: 360,
            bitrateKbps: 5000,
            preset: "veryfast",
            screenContent: true,
            finestQP: finest
        )
        let source = try SyntheticScreenSource(width: 640, height: 360)
        let encoder = try H264Encoder(config)
        let quantizers = try Self.quantizers(
            encoding: source.videoFrame(index: 0, captureTime: 0),
            times: 30,
            with: encoder
        )
        #expect(quantizers.allSatisfy { $0 >= finest }, "\(quantizers)")
        #expect(quantizers.suffix(10).allSatisfy { $0 == finest }, "refreshes reach the floor: \(quantizers)")
        #expect(throws: MediaError.self) {
            try H264Encoder(.init(width: 640, height: 360, screenContent: true, finestQP: 52))
        }
    }

    @Test func rejectsBadSettingsAndMismatchedFrames() throws {
        #expect { try H264Encoder(.init(width: 641, height: 360)) } throws: {
            ($0 as? MediaError)?.message == "encoder size 641x360 must be even for 4:2:0"
        }
        #expect { try H264Encoder(.init(preset: "warp")) } throws: {
            ($0 as? MediaError)?.message.hasPrefix("unknown x264 preset 'warp'") == true
        }
        #expect(throws: MediaError.self) { try H264Encoder(.init(frameRate: 0)) }
        let encoder = try H264Encoder(.init(width: 640, height: 360))
        #expect { try encoder.encode(VideoFrame(width: 320, height: 180)) } throws: {
            ($0 as? MediaError)?.message == "frame is 320x180, encoder expects 640x360"
        }
    }

    /// The real check: ffmpeg decodes every frame we encoded, the picture is close to the source
    /// (PSNR), and the timecode strip reads back in order from the decoded pictures.
    ///
    /// PSNR floor 35 dB: at 2.5 Mbit/s the peers (FFmpeg, GStreamer) score about 41 dB on this
    /// kind of content; below about 35 dB small text blurs, which is what a screen share must not do.
    @Test func ffmpegDecodesEveryFrameCloseToTheSource() throws {
        let dir = try Tool.tempDirectory("h264")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frames = 90
        let config = H264Encoder.Configuration(width: 1280, height: 720, bitrateKbps: 2500)
        let source = try SyntheticScreenSource(width: 1280, height: 720)
        let encoder = try H264Encoder(config)
        let y4m = try Y4MWriter(path: "\(dir)/src.y4m", width: 1280, height: 720, frameRate: 30)
        var stream = [UInt8]()
        for i in 0..<frames {
            let frame = source.videoFrame(index: i, captureTime: 1_000_000_000 + UInt64(i) * 33_333_333)
            try y4m.write(frame)
            stream += try #require(try encoder.encode(frame)).annexB()
        }
        y4m.flush()
        try Data(stream).write(to: URL(fileURLWithPath: "\(dir)/enc.h264"))

        let probe = try Tool.run(
            "ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0",
                "-show_entries", "stream=nb_read_frames,profile,width,height", "-of", "default=nw=1", "\(dir)/enc.h264",
            ]
        )
        let info = String(decoding: probe.stdout, as: UTF8.self)
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(info.contains("nb_read_frames=\(frames)"), "\(info)")
        #expect(info.contains("profile=Constrained Baseline"), "\(info)")
        #expect(info.contains("width=1280") && info.contains("height=720"))

        let psnr = try Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-i", "\(dir)/enc.h264", "-i", "\(dir)/src.y4m",
                // Raw H.264 carries no frame rate (ffmpeg assumes 25): number both inputs by frame.
                "-lavfi", "[0:v]setpts=N/(30*TB)[a];[1:v]setpts=N/(30*TB)[b];[a][b]psnr", "-f", "null", "-",
            ]
        )
        let average = psnr.stderr.split(separator: " ").first { $0.hasPrefix("average:") }
            .flatMap { Double($0.dropFirst("average:".count)) }
        let db = try #require(average, "no PSNR in: \(psnr.stderr.suffix(400))")
        #expect(db > 35, "PSNR \(db) dB")

        let gray = try Tool.run(
            "ffmpeg",
            ["-v", "error", "-i", "\(dir)/enc.h264", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
        )
        let bytes = [UInt8](gray.stdout)
        let size = 1280 * 720
        #expect(bytes.count == frames * size)
        var decoded: [UInt32] = []
        for f in 0..<(bytes.count / size) {
            let value = TimecodeStrip.decode(
                luma: Array(bytes[(f * size)..<((f + 1) * size)]),
                width: 1280,
                height: 720
            )
            if let value { decoded.append(value.frame) }
            if f == 45 { #expect(value?.timeMs == UInt32((1_000_000_000 + 45 * 33_333_333) / 1_000_000)) }
        }
        #expect(decoded == (0..<UInt32(frames)).map { $0 })
    }

    /// `.onRequest`: no IDR unless asked; a refresh wave is a P picture carrying a recovery point
    /// (SEI, H.264 §D.1.8), then one intra column per picture; a decoder that starts at the wave,
    /// without any IDR, shows the whole picture once the wave has crossed it.
    @Test func keyFramesOnRequestAndRefreshWavesADecoderJoinsOn() throws {
        let dir = try Tool.tempDirectory("h264-waves")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = H264Encoder.Configuration(width: 640, height: 360, bitrateKbps: 1500, keyFrames: .onRequest)
        let source = try SyntheticScreenSource(width: 640, height: 360, frameRate: 30)
        let encoder = try H264Encoder(config)
        #expect(encoder.wavePictures == 40)
        var keyFrames: [Int] = []
        var refreshing: [Int] = []
        var joined = try encoder.parameterSets().sps.annexBPrefixed + encoder.parameterSets().pps.annexBPrefixed
        let frames = 400
        let waveAt = 300
        for i in 0..<frames {
            if i == 20 { encoder.requestKeyFrame() }
            if i == waveAt { encoder.startRefreshWave() }
            let unit = try #require(
                try encoder.encode(source.videoFrame(index: i, captureTime: UInt64(i) * 33_333_333))
            )
            if unit.isKeyFrame { keyFrames.append(i) }
            if encoder.isRefreshing { refreshing.append(i) }
            if i == waveAt {
                #expect(!unit.isKeyFrame && !unit.nalTypes.contains(5), "a wave starts with a P picture")
                #expect(unit.nalTypes.contains(6), "the wave's first picture carries its recovery point")
            }
            if i >= waveAt { joined += unit.annexB() }
        }
        // No IDR after 2 s, 10 s or more: only the first picture and the one asked for.
        #expect(keyFrames == [0, 20])
        #expect(refreshing == Array(waveAt..<(waveAt + 39)), "\(refreshing.first ?? -1)...\(refreshing.last ?? -1)")
        encoder.startRefreshWave()
        encoder.requestKeyFrame()
        let idr = try #require(try encoder.encode(source.videoFrame(index: frames, captureTime: 0)))
        #expect(idr.isKeyFrame && !encoder.isRefreshing, "an IDR ends a queued wave")

        // FFmpeg joins at the wave: what it shows after the wave has crossed the picture is
        // whole, in order, to the last picture.
        try Data(joined).write(to: URL(fileURLWithPath: "\(dir)/joined.h264"))
        let gray = try Tool.run(
            "ffmpeg",
            ["-v", "error", "-i", "\(dir)/joined.h264", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
        )
        #expect(gray.status == 0, "\(gray.stderr)")
        let bytes = [UInt8](gray.stdout)
        let size = 640 * 360
        var decoded: [UInt32] = []
        for f in 0..<(bytes.count / size) {
            let value = TimecodeStrip.decode(luma: Array(bytes[(f * size)..<((f + 1) * size)]), width: 640, height: 360)
            if let value { decoded.append(value.frame) }
        }
        let complete = decoded.filter { $0 >= UInt32(waveAt + 40) }
        #expect(
            complete == (UInt32(waveAt + 40)..<UInt32(frames)).map { $0 },
            "\(decoded.prefix(5)) … \(decoded.suffix(5))"
        )
    }
}
