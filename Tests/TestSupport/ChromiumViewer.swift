import Foundation

/// Headless Chromium on rtc-signal's viewer page, driven over the DevTools protocol by
/// Tests/Peers/chromium_viewer.py (in out/venv, which has its `websockets`): one browser, one
/// or two tabs, and DIR/summary.json with what each tab's `<video>` showed.
public final class ChromiumViewer {
    public struct Options: Sendable {
        /// The measuring window, from tab 1's first frame (after `warmup`).
        public var seconds: Double
        /// Seconds after tab 1's first frame before the window starts.
        public var warmup: Double
        /// Open a second tab this far into the window, and close it at `closeTabAt`.
        public var secondTabAt: Double?
        public var closeTabAt: Double?
        /// A PNG of tab 1 at the end of the window.
        public var screenshot: String?
        /// A region of the picture (x, y, width, height in picture pixels) whose mean RGB each
        /// tab reports at its first frame and at its end (`Tab.regionFirst`, `regionEnd`).
        public var region: (x: Int, y: Int, width: Int, height: Int)?
        public var deadline: Double?
        /// The base64 SHA-256 of the test server's public key, for https/wss with a self-signed
        /// certificate (`--ignore-certificate-errors-spki-list`: that key only).
        public var trustSPKI: String?

        public init(
            seconds: Double,
            warmup: Double = 0,
            secondTabAt: Double? = nil,
            closeTabAt: Double? = nil,
            screenshot: String? = nil,
            deadline: Double? = nil,
            trustSPKI: String? = nil,
            region: (x: Int, y: Int, width: Int, height: Int)? = nil
        ) {
            self.seconds = seconds
            self.warmup = warmup
            self.secondTabAt = secondTabAt
            self.closeTabAt = closeTabAt
            self.screenshot = screenshot
            self.deadline = deadline
            self.trustSPKI = trustSPKI
            self.region = region
        }
    }

    public let process: BackgroundProcess
    public let outputDirectory: String

    /// `launcher` as for `BackgroundProcess` (e.g. a `NetworkNamespace`'s).
    public init(
        url: String,
        options: Options,
        directory: TemporaryDirectory,
        name: String = "chromium",
        launcher: [String] = []
    ) throws {
        let python = WebRTCSubscriber.repositoryRoot + "/out/venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw InteropFailure("\(python) is missing; run scripts/setup.sh")
        }
        outputDirectory = directory.path + "/" + name
        var arguments = [
            WebRTCSubscriber.repositoryRoot + "/Tests/Peers/chromium_viewer.py", "--url", url, "--seconds",
            "\(options.seconds)", "--out", outputDirectory,
        ]
        let optional: [(String, String?)] = [
            ("--warmup", options.warmup > 0 ? "\(options.warmup)" : nil),
            ("--second-tab-at", options.secondTabAt.map { "\($0)" }),
            ("--close-tab-at", options.closeTabAt.map { "\($0)" }),
            ("--screenshot", options.screenshot),
            ("--deadline", options.deadline.map { "\($0)" }),
            ("--trust-spki", options.trustSPKI),
            ("--region", options.region.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }),
        ]
        for case let (option, value?) in optional { arguments += [option, value] }
        process = try BackgroundProcess(python, arguments, directory: directory, name: name, launcher: launcher)
    }

    public var output: String { process.output }

    public func summary() throws -> ChromiumSummary {
        let path = outputDirectory + "/summary.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InteropFailure("no \(path):\n\(output)")
        }
        return try JSONDecoder().decode(ChromiumSummary.self, from: data)
    }

    /// `openssl`'s base64 SHA-256 of a PEM certificate's SubjectPublicKeyInfo: what Chromium's
    /// `--ignore-certificate-errors-spki-list` takes.
    public static func spkiHash(certificate: String) throws -> String {
        let command =
            "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der"
            + " | openssl dgst -sha256 -binary | base64"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let hash = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, hash.count == 44 else {
            throw InteropFailure("no SPKI hash of \(certificate): \(output)")
        }
        return hash
    }
}

/// summary.json as chromium_viewer.py writes it.
public struct ChromiumSummary: Decodable, Sendable {
    public struct Tab: Decodable, Sendable {
        public struct Quality: Decodable, Sendable {
            public var framesInWindow: Int
            public var droppedInWindow: Int
            /// `getVideoPlaybackQuality()` frames over the window.
            public var fps: Double?
        }

        public struct Frames: Decodable, Sendable {
            /// Frame callbacks over the window.
            public var callbacks: Int
            /// Gaps over 500 ms while playing throughout (so never across a `still` state).
            public var freezes: Int
            public var maxGapMs: Double?
            /// Every gap over 500 ms, whatever the page's state.
            public var gapsOver500Ms: [Double]?
            /// The page's own freeze count over the window (it counts none while still).
            public var pageFreezesInWindow: Int?
            /// Chromium's getStats `freezeCount` at the end minus at the start of the window.
            public var statsFreezeCountInWindow: Int?
        }

        public struct Audio: Decodable, Sendable {
            public var arriving: Bool
            public var samplesInWindow: Double?
        }

        public struct Timecodes: Decodable, Sendable {
            public var count: Int
            public var inOrder: Bool
            public var backwards: Int
            public var repeats: Int
            public var skipped: Int
            /// Callbacks for the frame read last (same RTP time and picture): shown again by
            /// the browser, not repeated by the stream.
            public var shownAgain: Int?
            /// Reads of the still picture sent again (idle repeats), not counted as frames.
            public var stillRepeats: Int?
            /// The frame numbers read, in display order.
            public var list: [Int]?
        }

        public struct State: Decodable, Sendable {
            public var t: Double
            public var state: String
        }

        /// The selected candidate pair's `currentRoundTripTime`, sampled once a second.
        public struct RoundTrip: Decodable, Sendable {
            public var count: Int
            public var p50: Double?
            public var p95: Double?
            public var max: Double?
        }

        public struct GlassToGlass: Decodable, Sendable {
            public var count: Int
            public var p50: Double?
            public var p95: Double?
        }

        public var tab: Int
        public var uid: String?
        public var publisher: String?
        public var state: String?
        public var status: String?
        public var width: Int
        public var height: Int
        public var windowSeconds: Double
        /// From opening the tab to its first frame.
        public var firstFrameMs: Double?
        /// From the page starting its media session (the `connecting media` state: offer made,
        /// subscribe sent) to the first frame shown.
        public var firstFrameAfterMediaStartMs: Double?
        /// From the publisher's answer arriving (`subscribed`) to the first frame shown: ICE,
        /// DTLS and the publisher's key frame.
        public var firstFrameAfterAnswerMs: Double?
        /// The last frame number the page had read when the window started (its first frame).
        public var timecodeAtStart: Int?
        /// Seconds of the window the page spent in `still`.
        public var stillSeconds: Double?
        /// The mean RGB of `Options.region` at the tab's first frame and at its end.
        public var regionFirst: [Double]?
        public var regionEnd: [Double]?
        public var playbackQuality: Quality
        /// The page's states over the window (`playing`, `still`, `reconnecting`, …), page time in
        /// ms: the one in force when the window opened, then each change.
        public var states: [State]
        public var frames: Frames
        public var audio: Audio
        public var timecodes: Timecodes
        public var glassToGlassMs: GlassToGlass
        public var rttMs: RoundTrip?
    }

    public var url: String
    public var ok: Bool
    public var error: String?
    public var chromium: String?
    public var tabs: [Tab]
}
