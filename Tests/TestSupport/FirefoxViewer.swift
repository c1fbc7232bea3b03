import Foundation

/// Headless Firefox ESR on rtc-signal's viewer page, driven over WebDriver BiDi by
/// Tests/Peers/firefox_viewer.py (in out/venv, which has its `websockets`): a fresh profile that
/// reaches nothing beyond loopback, one or two tabs, and DIR/summary.json in the shape
/// ChromiumViewer's has (`ViewerPageSummary`). Firefox's frames are the page's frame callbacks
/// (`Frames.callbacks`, `Frames.fps`): its `getVideoPlaybackQuality()` stays 0 for WebRTC.
public final class FirefoxViewer {
    /// The preferences the profile starts with.
    public enum Preferences: String, Sendable {
        /// What a Debian user's Firefox offers: VP8, VP9 and AV1, no H.264.
        case stock
        /// H.264 offered as well ("hardware" H.264 allowed without a GPU, decoded by the system
        /// FFmpeg): ../shared/field-notes.md, "Firefox ESR as a viewer".
        case h264
    }

    public struct Options: Sendable {
        /// The measuring window, from tab 1's first frame (after `warmup`).
        public var seconds: Double
        /// Seconds after tab 1's first frame before the window starts.
        public var warmup: Double
        public var preferences: Preferences
        /// Open a second tab this far into the window, and close it at `closeTabAt`.
        public var secondTabAt: Double?
        public var closeTabAt: Double?
        /// A PNG of tab 1 at the end of the window.
        public var screenshot: String?
        public var deadline: Double?
        /// A region of the picture (x, y, width, height in picture pixels) whose mean RGB each
        /// tab reports at its first frame and at its end (`Tab.regionFirst`, `regionEnd`).
        public var region: (x: Int, y: Int, width: Int, height: Int)?

        public init(
            seconds: Double,
            warmup: Double = 0,
            preferences: Preferences = .stock,
            secondTabAt: Double? = nil,
            closeTabAt: Double? = nil,
            screenshot: String? = nil,
            deadline: Double? = nil,
            region: (x: Int, y: Int, width: Int, height: Int)? = nil
        ) {
            self.seconds = seconds
            self.warmup = warmup
            self.preferences = preferences
            self.secondTabAt = secondTabAt
            self.closeTabAt = closeTabAt
            self.screenshot = screenshot
            self.deadline = deadline
            self.region = region
        }
    }

    public let process: BackgroundProcess
    public let outputDirectory: String

    /// `launcher` as for `BackgroundProcess` (e.g. a `NetworkNamespace`'s: Firefox then finds
    /// only loopback, where its ICE gathers thanks to the profile's camera permission).
    public init(
        url: String,
        options: Options,
        directory: TemporaryDirectory,
        name: String = "firefox",
        launcher: [String] = []
    ) throws {
        (process, outputDirectory) = try ViewerPageHarness.start(
            script: "firefox_viewer.py",
            url: url,
            options: [
                ("--seconds", "\(options.seconds)"),
                ("--warmup", options.warmup > 0 ? "\(options.warmup)" : nil),
                ("--prefs", options.preferences.rawValue),
                ("--second-tab-at", options.secondTabAt.map { "\($0)" }),
                ("--close-tab-at", options.closeTabAt.map { "\($0)" }),
                ("--screenshot", options.screenshot),
                ("--deadline", options.deadline.map { "\($0)" }),
                ("--region", options.region.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }),
            ],
            directory: directory,
            name: name,
            launcher: launcher
        )
    }

    public var output: String { process.output }

    public func summary() throws -> ViewerPageSummary {
        try ViewerPageSummary(directory: outputDirectory, output: output)
    }
}
