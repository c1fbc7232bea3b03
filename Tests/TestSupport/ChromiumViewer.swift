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
        (process, outputDirectory) = try ViewerPageHarness.start(
            script: "chromium_viewer.py",
            url: url,
            options: [
                ("--seconds", "\(options.seconds)"),
                ("--warmup", options.warmup > 0 ? "\(options.warmup)" : nil),
                ("--second-tab-at", options.secondTabAt.map { "\($0)" }),
                ("--close-tab-at", options.closeTabAt.map { "\($0)" }),
                ("--screenshot", options.screenshot),
                ("--deadline", options.deadline.map { "\($0)" }),
                ("--trust-spki", options.trustSPKI),
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
