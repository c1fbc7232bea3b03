import Foundation

/// DIR/summary.json as the viewer-page harnesses write it (Tests/Peers/viewer_page.py, shared by
/// chromium_viewer.py and firefox_viewer.py): what each tab's `<video>` showed over its window,
/// or, when the run failed, why (`error`) and what each page was doing (`pages`).
public struct ViewerPageSummary: Decodable, Sendable {
    public struct Tab: Decodable, Sendable {
        public struct Quality: Decodable, Sendable {
            public var framesInWindow: Int
            public var droppedInWindow: Int
            /// `getVideoPlaybackQuality()` frames over the window. Firefox's stay 0 for WebRTC
            /// video: its frames are `Frames.callbacks`.
            public var fps: Double?
        }

        public struct Frames: Decodable, Sendable {
            /// Frame callbacks over the window.
            public var callbacks: Int
            /// `callbacks` per second of the window.
            public var fps: Double?
            /// Gaps over 500 ms while playing throughout (so never across a `still` state).
            public var freezes: Int
            public var maxGapMs: Double?
            /// Every gap over 500 ms, whatever the page's state.
            public var gapsOver500Ms: [Double]?
            /// When each of those began, ms into the window.
            public var gapsOver500MsAtMs: [Double]?
            /// The page's own freeze count over the window (it counts none while still).
            public var pageFreezesInWindow: Int?
            /// The browser's getStats `freezeCount` at the end minus at the start of the window.
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
        /// The negotiated video codec at the end of the window: getStats' inbound-rtp video's
        /// codec `mimeType` (e.g. "video/H264").
        public var videoCodec: String?
        /// The page's statistics overlay at the end of the window, as it reads.
        public var overlay: String?
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
        /// The mean RGB of the harness's `region` at the tab's first frame and at its end.
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

    /// A page as it was when the run failed.
    public struct Page: Decodable, Sendable {
        public var tab: Int
        public var state: String?
        /// The page's status line, e.g. `error: subscribe-rejected: "alice_sub" rejected the
        /// subscribe: offer refused: …`.
        public var status: String?
        public var overlay: String?
        public var events: [String]?
        public var pageErrors: [String]?
    }

    public var url: String
    public var ok: Bool
    /// Why the run failed (one line), e.g. `tab 1: the page stopped before its first frame: …`.
    public var error: String?
    /// The browser's name and version, e.g. "Chrome/156.0…" or "firefox/153.8.0".
    public var browser: String?
    public var chromium: String?
    /// From starting the browser to its protocol (DevTools, WebDriver BiDi) answering.
    public var startSeconds: Double?
    public var tabs: [Tab]
    /// On failure: what each open page was doing.
    public var pages: [Page]?

    /// Reads `directory`/summary.json; `output`, the harness's, goes into the error without one.
    public init(directory: String, output: String) throws {
        let path = directory + "/summary.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InteropFailure("no \(path):\n\(output)")
        }
        self = try JSONDecoder().decode(Self.self, from: data)
    }
}

/// How ChromiumViewer and FirefoxViewer start their harness: Tests/Peers/`script` in out/venv's
/// Python (which has its `websockets`), `--url`, `--out` (a folder `name` in `directory`) and each
/// of `options` that has a value, through `launcher` as for `BackgroundProcess`.
enum ViewerPageHarness {
    static func start(
        script: String,
        url: String,
        options: [(String, String?)],
        directory: TemporaryDirectory,
        name: String,
        launcher: [String]
    ) throws -> (process: BackgroundProcess, outputDirectory: String) {
        let python = WebRTCSubscriber.repositoryRoot + "/out/venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw InteropFailure("\(python) is missing; run scripts/setup.sh")
        }
        let outputDirectory = directory.path + "/" + name
        var arguments = [
            WebRTCSubscriber.repositoryRoot + "/Tests/Peers/" + script, "--url", url, "--out", outputDirectory,
        ]
        for case let (option, value?) in options { arguments += [option, value] }
        let process = try BackgroundProcess(python, arguments, directory: directory, name: name, launcher: launcher)
        return (process, outputDirectory)
    }
}
