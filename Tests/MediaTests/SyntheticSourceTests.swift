import Testing

@testable import Media

@Suite struct SyntheticSourceTests {
    @Test func timecodeDecodesFromTheFrameItself() throws {
        let source = try SyntheticScreenSource()
        for index in [0, 1, 29, 30, 12345] {
            let t = UInt64(index) * 33_333_333 + 5_000_000_000
            let frame = source.videoFrame(index: index, captureTime: t)
            let value = try #require(TimecodeStrip.decode(luma: frame.y, width: frame.width, height: frame.height))
            #expect(value.frame == UInt32(index))
            #expect(value.timeMs == UInt32(t / 1_000_000))
        }
    }

    @Test func timecodeRejectsPicturesWithoutIt() throws {
        let grey = try VideoFrame(width: 1280, height: 720, luma: 128)
        #expect(TimecodeStrip.decode(luma: grey.y, width: 1280, height: 720) == nil)
        // One flipped bit breaks the CRC.
        var frame = try SyntheticScreenSource().videoFrame(index: 5, captureTime: 0)
        let b = TimecodeStrip.blockSize(width: 1280)
        let block = 20
        for r in 0..<b { for c in (block * b)..<((block + 1) * b) { frame.y[r * 1280 + c] ^= 0xFF } }
        #expect(TimecodeStrip.decode(luma: frame.y, width: 1280, height: 720) == nil)
    }

    @Test func framesAreDeterministicAndMove() throws {
        let a = try SyntheticScreenSource(width: 640, height: 360)
        let b = try SyntheticScreenSource(width: 640, height: 360)
        #expect(a.videoFrame(index: 17, captureTime: 1) == b.videoFrame(index: 17, captureTime: 1))
        let f1 = a.videoFrame(index: 1, captureTime: 1)
        let f2 = a.videoFrame(index: 2, captureTime: 1)
        let changed = zip(f1.y, f2.y).filter { $0 != $1 }.count
        // Scroll panel, video window and cursor move; most of the desktop stays still.
        #expect(changed > 640 * 360 / 50)
        #expect(changed < 640 * 360 / 2)
    }

    @Test func flashAndBeepShareTheFirst100msOfEachSecond() throws {
        let source = try SyntheticScreenSource(frameRate: 30)
        let flashes = (0..<90).filter { source.isFlash(frameIndex: $0) }
        #expect(flashes == [0, 1, 2, 30, 31, 32, 60, 61, 62])
        #expect(SyntheticScreenSource.isBeep(sample: 0))
        #expect(SyntheticScreenSource.isBeep(sample: 4799))
        #expect(!SyntheticScreenSource.isBeep(sample: 4800))
        #expect(SyntheticScreenSource.isBeep(sample: 48_000 + 100))
        let flashFrame = source.videoFrame(index: 30, captureTime: 0)
        let darkFrame = source.videoFrame(index: 40, captureTime: 0)
        let corner = (720 - 72) * 1280 + 10
        #expect(flashFrame.y[corner] == 235 && darkFrame.y[corner] == 16)
    }

    @Test func audioIsATonePlusBeepAtTheRightFrequencies() throws {
        let source = try SyntheticScreenSource()
        // 200 ms..1 s: tone only. Left 440 Hz, right 660 Hz, by zero crossings.
        let chunk = source.audioChunk(startSample: 9600, frameCount: 38_400, captureTime: 0)
        #expect(chunk.sampleRate == 48_000 && chunk.channels == 2)
        let left = stride(from: 0, to: chunk.samples.count, by: 2).map { chunk.samples[$0] }
        let right = stride(from: 1, to: chunk.samples.count, by: 2).map { chunk.samples[$0] }
        #expect(abs(Self.frequency(left, rate: 48_000) - 440) < 2)
        #expect(abs(Self.frequency(right, rate: 48_000) - 660) < 2)
        // The beep raises the level in the first 100 ms of a second.
        let beep = source.audioChunk(startSample: 48_000 + 480, frameCount: 2400, captureTime: 0)
        #expect(Self.rms(beep.samples) > 2 * Self.rms(chunk.samples))
        // Chunks join without a seam: sample-exact continuation.
        let whole = source.audioChunk(startSample: 100, frameCount: 200, captureTime: 0)
        let first = source.audioChunk(startSample: 100, frameCount: 73, captureTime: 0)
        let second = source.audioChunk(startSample: 173, frameCount: 127, captureTime: 0)
        #expect(whole.samples == first.samples + second.samples)
    }

    @Test func rejectsUnusableSizes() {
        #expect(throws: MediaError.self) { try SyntheticScreenSource(width: 0, height: 0) }
        #expect(throws: MediaError.self) { try SyntheticScreenSource(width: 641, height: 360) }
        #expect(throws: MediaError.self) { try SyntheticScreenSource(frameRate: 0) }
    }

    static func frequency(_ x: [Float], rate: Double) -> Double {
        var crossings = 0
        for i in 1..<x.count where (x[i - 1] < 0) != (x[i] < 0) { crossings += 1 }
        return Double(crossings) / 2 / (Double(x.count) / rate)
    }

    static func rms(_ x: [Float]) -> Float {
        (x.reduce(0) { $0 + $1 * $1 } / Float(max(1, x.count))).squareRoot()
    }
}

extension SyntheticSourceTests {
    @Test("the strip of a phone-sized picture reads back after scaling, given the width it was drawn at")
    func timecodeReadsAfterScaling() throws {
        let source = try SyntheticScreenSource(width: 886, height: 1920)
        let picture = source.videoFrame(index: 4321, captureTime: 77_000_000)
        let scaled = try VideoConverter().convert(RawVideoFrame(picture), width: 590, height: 1280)
        let value = scaled.y.withUnsafeBufferPointer {
            TimecodeStrip.decode(luma: $0, width: 590, height: 1280, stride: scaled.strideY, sourceWidth: 886)
        }
        #expect(value?.frame == 4321)
        // Read as if drawn at 590, the block pitch is wrong and the CRC refuses the result.
        let naive = scaled.y.withUnsafeBufferPointer {
            TimecodeStrip.decode(luma: $0, width: 590, height: 1280, stride: scaled.strideY)
        }
        #expect(naive == nil)
    }
}
