import Foundation
import Ingest
import Media
import TestSupport
import Testing

/// What the abuse campaign of issue 22 sent rtc-publish's ingest socket, against the real
/// executable: pictures too small to stream end only their own session, and a capture session
/// of another shape re-opens the encoder instead of being letterboxed into the first one's.
extension PublishEndToEndTests {
    /// A full-range NV12 picture of any size, mid-gray.
    static func picture(width: Int, height: Int, value: Int64) throws -> IngestVideo {
        let chromaWidth = (width + 1) / 2
        let frame = try RawVideoFrame(
            format: .nv12FullRange,
            width: width,
            height: height,
            planes: [
                [UInt8](repeating: 128, count: width * height),
                [UInt8](repeating: 128, count: 2 * chromaWidth * ((height + 1) / 2)),
            ],
            strides: [width, 2 * chromaWidth],
            captureTime: 0
        )
        return IngestVideo(frame: frame, timestamp: IngestTimestamp(value: value, timescale: 30))
    }

    /// Connects as a capture client, retrying `busy` for a few seconds as the reference client
    /// does: the host frees the slot once the previous session has finished closing.
    static func connectRetryingBusy(_ address: IngestAddress, name: String) async throws -> IngestClient {
        let hello = IngestHello(role: .capture, capabilities: .all, name: name)
        for _ in 0..<200 {
            let attempt: Result<IngestClient, IngestError>
            do {
                attempt = .success(try await IngestClient.connect(to: address, hello: hello))
            } catch {
                attempt = .failure(error)
            }
            switch attempt {
            case .success(let client): return client
            case .failure(let error) where error.endReason == .busy: try await Task.sleep(for: .milliseconds(50))
            case .failure(let error): throw error
            }
        }
        throw InteropFailure("\(address) stayed busy for 10 s")
    }

    /// One publisher, one abusive session per shape (each refused by name), then a healthy
    /// client that streams: no picture a capture client sends ends the process.
    @Test func picturesTooSmallToStreamEndOnlyTheirSessions() async throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(directory, port: Int(ports[0]), seconds: 10)
        try Self.waitForSocket(publish, directory)
        let address = IngestAddress.unix(path: directory.path + "/in.sock")
        let shapes = [
            (1, 1, ""), (2, 1, ""), (1, 2, ""), (1, 4096, ""), (4096, 2, ""), (3, 3, ""), (15, 720, ""),
            (4096, 16, " (it would stream as 1280x6)"), (16, 4096, " (it would stream as 6x1280)"),
        ]
        for (width, height, fitted) in shapes {
            let abuser = try await Self.connectRetryingBusy(address, name: "abuser")
            try await abuser.send(.video(try Self.picture(width: width, height: height, value: 0)))
            let end = try #require(await abuser.waitForEnd(timeout: .seconds(10)), "\(publish.output)")
            let expected = "a \(width)x\(height) picture is under the smallest stream picture of 16x16\(fitted)"
            #expect(end.reason == .pictureTooSmall, "\(end)")
            #expect(end.message == expected, "\(end)")
            #expect(publish.output.contains("capture picture refused (picture-too-small): \(expected)"))
            await abuser.close()
        }
        // The process went on, and the next, healthy client streams.
        let capture = try Self.captureSimulator(directory, ["--duration", "2"])
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        #expect(publish.output.contains("stream: 886x1920 capture → 590x1280"), "\(publish.output)")
        let totals = try #require(try Self.finalStatistics(directory)["totals"] as? [String: Any])
        #expect((totals["framesOut"] as? Int ?? 0) > 0, "\(totals)")
    }

    /// A portrait phone, then a landscape one: the second session re-opens the encoder at its own
    /// fitted size (new SPS/PPS, an IDR) on the same stream, and a stock ffmpeg, opened once on
    /// the SDP file, decodes both sizes in order. The SDP file is rewritten with the new
    /// parameter sets for players opened later.
    @Test func aCaptureSessionOfAnotherSizeReopensTheEncoderAndTheReceiverFollows() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(
            directory,
            port: Int(ports[0]),
            seconds: 9,
            extra: ["--start-delay", "1"]
        )
        try Self.waitForSocket(publish, directory)
        let portrait = try Self.captureSimulator(directory, ["--duration", "3"], name: "portrait")
        let sdp = directory.path + "/alice_sub.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "alice_sub.sdp written") {
            FileManager.default.fileExists(atPath: sdp)
        }
        let firstSDP = try String(contentsOfFile: sdp, encoding: .utf8)
        let ffmpeg = try FFmpegRun(
            arguments: [
                "-protocol_whitelist", "file,udp,rtp", "-i", sdp, "-map", "0:v", "-vf", "showinfo", "-f", "null", "-",
            ],
            directory: directory
        )
        #expect(portrait.waitForExit(deadlineSeconds: 30) && portrait.exitStatus == 0, "\(portrait.output)")
        let landscape = try Self.captureSimulator(
            directory,
            ["--duration", "3", "--size", "1920x886"],
            name: "landscape"
        )
        #expect(landscape.waitForExit(deadlineSeconds: 30) && landscape.exitStatus == 0, "\(landscape.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        _ = try ffmpeg.waitForExit(deadlineSeconds: 20)
        // showinfo prints each decoded picture's size as "s:WxH".
        let sizes = ffmpeg.standardError.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("Parsed_showinfo"),
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("s:") })
            else { return nil }
            return String(field.dropFirst(2))
        }
        var runs: [(size: String, count: Int)] = []
        for size in sizes {
            if runs.last?.size == size { runs[runs.count - 1].count += 1 } else { runs.append((size, 1)) }
        }
        #expect(runs.map(\.size) == ["590x1280", "1280x590"], "\(runs)")
        #expect(runs.allSatisfy { $0.count >= 15 }, "\(runs)")
        #expect(publish.output.contains("re-opened at 1280x590 (was 590x1280)"), "\(publish.output)")
        let secondSDP = try String(contentsOfFile: sdp, encoding: .utf8)
        let sprop = { (text: String) in text.split(separator: "\r\n").first { $0.contains("sprop-parameter-sets") } }
        #expect(sprop(firstSDP) != nil && sprop(firstSDP) != sprop(secondSDP), "\(firstSDP)\n\(secondSDP)")
        let ssrcs = { (text: String) in text.split(separator: "\r\n").filter { $0.hasPrefix("a=ssrc:") } }
        #expect(ssrcs(firstSDP) == ssrcs(secondSDP))
        print("re-open: \(runs)")
    }

    /// Within one session the size follows the pictures (a phone turned), but at most once a
    /// second: a client that flips its size every frame cannot force an IDR per frame.
    @Test func withinASessionTheSizeFollowsAtMostOnceASecond() async throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(directory, port: Int(ports[0]), seconds: 6)
        try Self.waitForSocket(publish, directory)
        let client = try await Self.connectRetryingBusy(.unix(path: directory.path + "/in.sock"), name: "flipper")
        let portrait = try Self.picture(width: 480, height: 640, value: 0)
        let landscape = try Self.picture(width: 640, height: 480, value: 0)
        let start = ContinuousClock.now
        var frame: Int64 = 0
        // 1 s portrait, then 2.5 s flipping every frame, 30 frames a second.
        while ContinuousClock.now - start < .milliseconds(3_500) {
            var picture = frame < 30 || frame % 2 == 0 ? portrait : landscape
            picture.timestamp = IngestTimestamp(value: frame, timescale: 30)
            try await client.send(.video(picture))
            frame += 1
            try await Task.sleep(until: start + .milliseconds(Int(frame) * 1000 / 30))
        }
        await client.finish()
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        let reopens = publish.output.components(separatedBy: "re-opened at").count - 1
        // 2.5 s of flipping after the first open: at most one re-open a second.
        #expect(reopens >= 1 && reopens <= 3, "\(reopens) re-opens:\n\(publish.output)")
    }
}
