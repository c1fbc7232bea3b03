import Foundation
import Media

/// One of the real WebRTC subscriber peers in `Tests/Peers` (aiortc, or GStreamer's webrtcbin),
/// run as a child process: it joins an rtc-signal room, subscribes to a publisher with a WebRTC
/// offer (recvonly video + audio, BUNDLE, rtcp-mux, every candidate in it), applies the answer
/// and records what it decodes into its own directory. After it exits, `received()` reads that
/// back: summary.json, and every decoded picture's timecode strip from video.gray.
///
/// The aiortc peer runs in `out/venv` (made by scripts/setup.sh with a pinned aiortc), the
/// webrtcbin peer in the system Python with python3-gi. Both gather host candidates on
/// 127.0.0.1 only (or `Options.iceAddress`) and use no STUN or TURN server.
public final class WebRTCSubscriber {
    public enum Peer: String, CaseIterable, Sendable, CustomStringConvertible {
        case aiortc
        case webrtcbin

        public var description: String { rawValue }

        /// The interpreter and script that run this peer.
        var command: (interpreter: String, script: String) {
            switch self {
            case .aiortc:
                (WebRTCSubscriber.repositoryRoot + "/out/venv/bin/python", "aiortc_subscriber.py")
            case .webrtcbin:
                ("/usr/bin/python3", "webrtcbin_subscriber.py")
            }
        }
    }

    /// The scripts' options beyond the room, uids and signaling address.
    public struct Options: Sendable {
        /// How long to receive, counted from the first decoded video frame.
        public var seconds: Double
        /// The only address ICE gathers host candidates on (the scripts' default is 127.0.0.1).
        public var iceAddress: String?
        /// Send one RTCP PLI this long after the first decoded video frame.
        public var sendPLIAt: Double?
        /// This long after the first decoded video frame, exit at once: no BYE, no DTLS close,
        /// no unsubscribe, no leave (consent freshness has to notice).
        public var killAfter: Double?
        /// Subscribe without waiting for the publisher's stream and succeed when the reply is
        /// an error (an answer is then the failure).
        public var expectReject: Bool
        /// How long to wait for the publisher's stream (the scripts' default is 20 s).
        public var waitPublisher: Double?
        /// The scripts' global deadline (their default adds up every step's own limit).
        public var deadline: Double?
        /// A join token, when rtc-signal runs with a secret.
        public var token: String?
        /// This long after the first decoded video frame, close the ICE sockets (aiortc only) and
        /// keep signaling up: the publisher's consent checks must notice.
        public var dropMediaAfter: Double?
        /// Offer with changed `a=fingerprint` digests: the publisher must refuse DTLS.
        public var wrongFingerprint = false
        /// Subscribe over WHEP at this URL instead of the room's protocol.
        public var whep: String?
        /// Offer only this video codec ("vp8", "h264"), as a browser without H.264 does.
        public var videoCodec: String?
        /// How long, once connected, to wait for the first decoded picture (the scripts'
        /// default is 10 s): a viewer behind a slow link may keep receiving without one.
        public var firstFrameTimeout: Double?

        public init(
            seconds: Double = 5,
            iceAddress: String? = nil,
            sendPLIAt: Double? = nil,
            killAfter: Double? = nil,
            expectReject: Bool = false,
            waitPublisher: Double? = nil,
            deadline: Double? = nil,
            token: String? = nil,
            dropMediaAfter: Double? = nil,
            wrongFingerprint: Bool = false,
            whep: String? = nil,
            videoCodec: String? = nil,
            firstFrameTimeout: Double? = nil
        ) {
            self.firstFrameTimeout = firstFrameTimeout
            self.whep = whep
            self.videoCodec = videoCodec
            self.dropMediaAfter = dropMediaAfter
            self.wrongFingerprint = wrongFingerprint
            self.seconds = seconds
            self.iceAddress = iceAddress
            self.sendPLIAt = sendPLIAt
            self.killAfter = killAfter
            self.expectReject = expectReject
            self.waitPublisher = waitPublisher
            self.deadline = deadline
            self.token = token
        }
    }

    /// The repository's root: this file is Tests/TestSupport/WebRTCSubscriber.swift in it.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    public let peer: Peer
    public let process: BackgroundProcess
    /// Where the peer writes summary.json, video.gray, offer.sdp and answer.sdp.
    public let outputDirectory: String

    /// Starts the peer; `name` (default: the uid) names its output directory and log inside
    /// `directory`; `launcher` as for `BackgroundProcess`.
    public init(
        _ peer: Peer,
        signalPort: Int,
        room: String,
        uid: String,
        publisher: String,
        options: Options = Options(),
        directory: TemporaryDirectory,
        name: String? = nil,
        launcher: [String] = []
    ) throws {
        self.peer = peer
        let name = name ?? uid
        outputDirectory = directory.path + "/" + name
        let (interpreter, script) = peer.command
        guard FileManager.default.isExecutableFile(atPath: interpreter) else {
            throw InteropFailure("\(peer): \(interpreter) is missing; run scripts/setup.sh")
        }
        process = try BackgroundProcess(
            interpreter,
            [Self.repositoryRoot + "/Tests/Peers/" + script]
                + Self.arguments(
                    signalPort: signalPort,
                    room: room,
                    uid: uid,
                    publisher: publisher,
                    options: options,
                    out: outputDirectory
                ),
            directory: directory,
            name: "\(peer)-\(name)",
            launcher: launcher
        )
    }

    /// The scripts' command line after the script's path (both take the same arguments).
    public static func arguments(
        signalPort: Int,
        room: String,
        uid: String,
        publisher: String,
        options: Options,
        out: String
    ) -> [String] {
        var arguments = [
            "--signal", "127.0.0.1:\(signalPort)", "--room", room, "--uid", uid, "--publisher", publisher,
            "--seconds", "\(options.seconds)", "--out", out,
        ]
        let optional: [(String, String?)] = [
            ("--ice-address", options.iceAddress),
            ("--video-codec", options.videoCodec),
            ("--send-pli-at", options.sendPLIAt.map { "\($0)" }),
            ("--kill-after", options.killAfter.map { "\($0)" }),
            ("--wait-publisher", options.waitPublisher.map { "\($0)" }),
            ("--deadline", options.deadline.map { "\($0)" }),
            ("--token", options.token),
            ("--drop-media-after", options.dropMediaAfter.map { "\($0)" }),
            ("--whep", options.whep),
            ("--first-frame-timeout", options.firstFrameTimeout.map { "\($0)" }),
        ]
        for case let (option, value?) in optional { arguments += [option, value] }
        if options.expectReject { arguments.append("--expect-reject") }
        if options.wrongFingerprint { arguments.append("--wrong-fingerprint") }
        return arguments
    }

    /// Everything the peer printed so far: one progress line a second, states, the result.
    public var output: String { process.output }
    public var exitStatus: Int32? { process.exitStatus }

    /// Waits for the peer to end by itself (its own global deadline ends it in any case); false,
    /// and the peer killed, past `deadlineSeconds`.
    @discardableResult
    public func waitForExit(deadlineSeconds: Double) -> Bool { process.waitForExit(deadlineSeconds: deadlineSeconds) }

    /// What the peer recorded; `sourceWidth` as for `TimecodeStrip.decode` when the publisher
    /// scaled its pictures since drawing the strip.
    public func received(sourceWidth: Int? = nil) throws -> WebRTCReceived {
        try WebRTCReceived(directory: outputDirectory, sourceWidth: sourceWidth)
    }
}

/// summary.json as the peers write it (Tests/Peers/room.py, `Recorder`).
public struct WebRTCSummary: Decodable, Sendable {
    public struct Rejection: Decodable, Sendable {
        /// The server's error code (`no-such-member`, `subscribe-rejected`, …).
        public var code: String
        public var message: String
    }

    public struct StateChange: Decodable, Sendable {
        /// Seconds since the peer started.
        public var t: Double
        /// `ice`, `dtls`, `connection`, `gathering`, `signaling`, `track-video`, `track-audio`.
        public var what: String
        public var state: String
    }

    public struct PLI: Decodable, Sendable {
        public var t: Double
        public var sent: Bool
        public var detail: String
    }

    public struct FrameTime: Decodable, Sendable {
        /// RTP time in 90 kHz ticks since the first decoded picture (unwrapped).
        public var rtp: Int64
        /// Seconds since the peer started when the picture was decoded.
        public var arrival: Double
        public var width: Int
        public var height: Int
    }

    public struct Video: Decodable, Sendable {
        public var frames: Int
        public var width: Int?
        public var height: Int?
        /// `rtp` (RTP timestamps) or `pts` (webrtcbin's PTS where no packet matched).
        public var timestampSource: String?
        public var frameTimes: [FrameTime]
        /// RTP packets received and lost on the video SSRC (the peer's own statistics).
        public var packets: Int?
        public var packetsLost: Int?
        /// Every video packet as it arrived (aiortc only; nil for webrtcbin).
        public var sequence: Sequence?
        /// Where each key frame started arriving (aiortc only; empty for webrtcbin).
        public var keyFrames: [KeyFrame]
        /// The RTP payload bytes of every video packet that arrived, RTX too, in all and per
        /// second of the run (index i: arrived i…i+1 s after the peer started; aiortc only).
        public var payloadBytes: Int?
        public var payloadBytesBySecond: [Int]?
    }

    /// Video RTP sequence numbers (extended past 16 bits) between the first and last received
    /// as sent, the last `tailLeftOut` left out (too late to be repaired before the end).
    public struct Sequence: Decodable, Sendable {
        public var first: Int
        public var last: Int
        public var tailLeftOut: Int
        /// Arrived as sent.
        public var received: Int
        /// Never arrived as sent: lost on the way.
        public var missing: Int
        /// Of those, brought back by RTX (RFC 4588: the original sequence number it carries).
        public var repaired: Int
        /// RTX packets received in all (repairs, and any that came after the original).
        public var retransmitted: Int
        /// The first 50 missing and never repaired.
        public var unrepaired: [Int]
    }

    public struct KeyFrame: Decodable, Sendable {
        /// Seconds since the peer started when the key frame's first packet arrived.
        public var t: Double
        public var sequence: Int
    }

    public struct Audio: Decodable, Sendable {
        public var frames: Int
        public var sampleRate: Int?
        public var channels: Int?
        /// Decoded samples per channel.
        public var samples: Int
        public var seconds: Double
        public var packets: Int?
        public var packetsLost: Int?
        /// As for video: the RTP payload bytes that arrived, in all and per second (aiortc only).
        public var payloadBytes: Int?
        public var payloadBytesBySecond: [Int]?
    }

    /// `aiortc_subscriber` or `webrtcbin_subscriber`.
    public var peer: String
    /// Library versions (aiortc, aioice, av, gstreamer, python).
    public var versions: [String: String]
    public var room: String
    public var uid: String
    public var publisher: String
    /// True when the run ended without error (a rejection with `--expect-reject` is no error).
    public var ok: Bool
    public var error: String?
    public var rejected: Rejection?
    /// Why receiving ended (`received for 5 s`, `unsubscribed: publisher-left`, `killed after 2 s`).
    public var endReason: String?
    public var killed: Bool
    /// When things first happened, in seconds since the start: joined, published, offerSent,
    /// answer, answerApplied, connected, firstVideoFrame, firstAudioFrame, end.
    /// The peer's CLOCK_MONOTONIC reading at its start, in seconds: `times` and every arrival
    /// count from it.
    public var monotonicStart: Double?
    public var times: [String: Double]
    public var states: [StateChange]
    public var pli: [PLI]
    public var video: Video
    public var audio: Audio
    /// The WHEP exchange, when the peer subscribed over WHEP.
    public var whep: WHEP?
    /// The codec of the video packets that arrived ("H264", "VP8"; aiortc only).
    public var videoCodec: String?

    public struct WHEP: Decodable, Sendable {
        public var url: String
        /// The POST's status (201 when created), its Content-Type and Location.
        public var status: Int?
        public var contentType: String?
        public var location: String?
        /// The DELETE's status at the end.
        public var deleteStatus: Int?
    }
}

/// What a WebRTC peer received: its summary, and every decoded picture's timecode.
public struct WebRTCReceived: Sendable, CustomStringConvertible {
    public let summary: WebRTCSummary
    /// The timecode strips of the decoded pictures, in decoding order.
    public let timecodes: TimecodeReport
    /// Each picture's timecode (nil where unreadable), aligned with `summary.video.frameTimes`.
    public let values: [TimecodeStrip.Value?]
    /// The indices of the pictures counted stale (`stalePictures`).
    public let stale: Set<Int>
    /// The offer the peer sent and the answer it got (nil when it never got that far).
    public let offer: String?
    public let answer: String?

    public init(directory: String, sourceWidth: Int? = nil) throws {
        let summaryPath = directory + "/summary.json"
        guard let json = FileManager.default.contents(atPath: summaryPath) else {
            throw InteropFailure("\(summaryPath) is missing: the peer did not get to write it")
        }
        do {
            summary = try JSONDecoder().decode(WebRTCSummary.self, from: json)
        } catch {
            throw InteropFailure("\(summaryPath) does not decode: \(error)")
        }
        offer = try? String(contentsOfFile: directory + "/offer.sdp", encoding: .utf8)
        answer = try? String(contentsOfFile: directory + "/answer.sdp", encoding: .utf8)
        // video.gray: the pictures' luma planes back to back, each as big as its frameTimes entry.
        let gray = [UInt8](FileManager.default.contents(atPath: directory + "/video.gray") ?? Data())
        let frameTimes = summary.video.frameTimes
        let needed = frameTimes.reduce(0) { $0 + $1.width * $1.height }
        guard gray.count >= needed else {
            throw InteropFailure("video.gray has \(gray.count) bytes; summary.json lists \(needed)")
        }
        var values: [TimecodeStrip.Value?] = []
        gray.withUnsafeBufferPointer { all in
            var offset = 0
            for frame in frameTimes {
                let size = frame.width * frame.height
                values.append(
                    TimecodeStrip.decode(
                        luma: UnsafeBufferPointer(rebasing: all[offset..<(offset + size)]),
                        width: frame.width,
                        height: frame.height,
                        stride: frame.width,
                        sourceWidth: sourceWidth
                    )
                )
                offset += size
            }
        }
        stale = Self.stalePictures(values, frameTimes, packetsLost: summary.video.packetsLost ?? 0)
        var report = TimecodeReport()
        for (index, value) in values.enumerated() { report.add(value, stale: stale.contains(index)) }
        timecodes = report
        self.values = values
    }

    /// Pictures whose strip's capture time is more than `slackMs` older than their RTP time
    /// says, against the median of all pictures. Only a decoder concealing a packet that never
    /// arrived paints those (it repaints from an older picture), so only a peer that lost
    /// packets gets any; in a run without loss such a picture stays out of order.
    static func stalePictures(
        _ values: [TimecodeStrip.Value?],
        _ times: [WebRTCSummary.FrameTime],
        packetsLost: Int,
        slackMs: Double = 20
    ) -> Set<Int> {
        guard packetsLost > 0 else { return [] }
        let offsets = zip(values, times).enumerated().compactMap { index, pair -> (Int, Double)? in
            guard let value = pair.0 else { return nil }
            return (index, Double(value.timeMs) - Double(pair.1.rtp) / 90)
        }
        guard !offsets.isEmpty else { return [] }
        let median = offsets.map(\.1).sorted()[offsets.count / 2]
        return Set(offsets.filter { $0.1 < median - slackMs }.map(\.0))
    }

    /// Where the timecodes went backwards, as `timecodes.outOfOrder` counts it (stale pictures
    /// left out): each such picture's index, its frame number and RTP time, after the frame
    /// before it; empty when the pictures came in order.
    public var orderBreaks: String {
        let times = summary.video.frameTimes
        var breaks: [String] = []
        var last: (index: Int, value: TimecodeStrip.Value)?
        for (index, value) in values.enumerated() where !stale.contains(index) {
            guard let value else { continue }
            if let previous = last, value.frame < previous.value.frame, index < times.count {
                breaks.append(
                    "picture \(index) (rtp \(times[index].rtp)) shows frame \(value.frame) "
                        + "after frame \(previous.value.frame) in picture \(previous.index) "
                        + "(rtp \(times[previous.index].rtp))"
                )
            }
            last = (index, value)
        }
        return breaks.joined(separator: "; ")
    }

    /// Frames per second by RTP time: pictures after the first over the RTP time they span.
    public var framesPerSecondByRTP: Double? {
        let times = summary.video.frameTimes
        guard let first = times.first, let last = times.last, last.rtp > first.rtp else { return nil }
        return Double(times.count - 1) * 90_000 / Double(last.rtp - first.rtp)
    }

    /// The longest RTP-time step between consecutive pictures, in seconds (a freeze).
    public var largestRTPGap: Double {
        let times = summary.video.frameTimes.map(\.rtp)
        return zip(times, times.dropFirst()).map { Double($1 - $0) / 90_000 }.max() ?? 0
    }

    /// The states one layer went through, in order (`"ice"`: new, checking, connected, …).
    public func states(of what: String) -> [String] { summary.states.filter { $0.what == what }.map(\.state) }

    public var description: String {
        let video = summary.video
        let size = video.width.map { "\($0)x\(video.height ?? 0)" } ?? "-"
        let fps = framesPerSecondByRTP.map { String(format: "%.2f", $0) } ?? "?"
        let outcome = summary.error.map { "FAILED: \($0)" } ?? (summary.rejected.map { "rejected: \($0.code)" } ?? "ok")
        return "\(summary.peer) \(outcome): video \(video.frames) frames \(size), \(fps) fps by RTP time, "
            + "\(video.packets ?? 0) packets (\(video.packetsLost ?? 0) lost); \(timecodes); "
            + "audio \(summary.audio.frames) frames, \(summary.audio.seconds) s, "
            + "\(summary.audio.sampleRate ?? 0) Hz x\(summary.audio.channels ?? 0), \(summary.audio.packets ?? 0) packets"
    }
}
