import PublishCommand
import Publisher
import Testing

/// Files for the validation, in memory: the table needs no file system.
struct MemoryFiles: FileAccess {
    var files: [String: String] = [:]

    func fileExists(atPath path: String) -> Bool { files[path] != nil }

    func contents(atPath path: String) -> [UInt8]? { files[path].map { Array($0.utf8) } }
}

/// One bad command line and the one line rtc-publish answers it with (after `rtc-publish: `).
struct BadArguments: Sendable, CustomTestStringConvertible {
    let arguments: [String]
    let message: String

    /// `arguments` after `--room r --uid a`, unless they name the room themselves.
    init(_ arguments: [String], _ message: String) {
        self.arguments = arguments.contains("--room") ? arguments : ["--room", "r", "--uid", "a"] + arguments
        self.message = message
    }

    var testDescription: String { arguments.joined(separator: " ") }
}

/// Every argument rtc-publish refuses before it starts, parsed and validated in-process as the
/// executable does (`PublishArguments.parse`, then `publishOptions(files:)`): a usage error
/// (exit status 2) with exactly this one line. What can only be found by opening a resource (an
/// X display, the sound server, a socket path) stays with the end-to-end tests.
@Suite struct BadArgumentTests {
    static let files = MemoryFiles(files: ["bad.txt": "127.0.0.1:5004\nnot-an-address\n"])

    /// Cases marked "e2e:" were process tests that spawned rtc-publish for this line:
    /// [P] PublishEndToEndTests.badArgumentsExitTwoWithOneLine, [F] its destinationsFromAFile,
    /// [S] ScreenCaptureEndToEndTests.startUpErrorsExitTwoWithOneLine,
    /// [A] SystemAudioEndToEndTests.startUpErrorsExitTwoWithOneLine.
    static let cases: [BadArguments] = [
        // Signaling
        // e2e: P
        .init(["--room", "bad room!", "--uid", "a"], "room \"bad room!\" must be 1–64 characters of A-Z a-z 0-9 _ -"),
        .init(["--room", "r", "--uid", "bad uid"], "uid \"bad uid\" must be 1–64 characters of A-Z a-z 0-9 _ -"),
        // e2e: P
        .init(["--signal", "nowhere"], "--signal 'nowhere' is not HOST:PORT"),
        .init(["--signal", ":80"], "--signal ':80' is not HOST:PORT"),
        .init(["--signal", "host:0"], "--signal 'host:0' is not HOST:PORT"),
        .init(["--signal", "host:x"], "--signal 'host:x' is not HOST:PORT"),

        // Input: ingest
        // e2e: P
        .init(["--ingest", "ftp:x"], "--ingest 'ftp:x': 'ftp:x' is not unix:/path or tcp:HOST:PORT"),
        .init(["--ingest", "unix:"], "--ingest 'unix:': 'unix:' has no socket path after 'unix:'"),
        // e2e: P
        .init(
            ["--ingest", "unix:/tmp/x.sock", "--video", "a.y4m"],
            "--video and --ingest both name the video; the capture process sends it with --ingest"
        ),
        .init(["--ingest", "unix:/tmp/x.sock", "--unpaced"], "--unpaced reads files; a capture process is live"),
        .init(
            ["--ingest", "unix:/tmp/x.sock", "--bogus-timestamps"],
            "--bogus-timestamps is for the test source; use rtc-capture-sim --bogus-timestamps"
        ),
        // e2e: P
        .init(
            ["--no-signal", "--ingest", "tcp:192.0.2.1:9000"],
            "--ingest tcp:192.0.2.1:9000: tcp:192.0.2.1:9000 is not a loopback address; the ingest socket carries "
                + "unencrypted screen content, so only 127.0.0.0/8, ::1, localhost or a unix: path are allowed"
        ),

        // Input: X11 capture
        // e2e: S
        .init(["--capture-region", "20x20+0+0"], "--capture-region needs --video x11"),
        .init(["--capture-monitor", "A"], "--capture-monitor needs --video x11"),
        .init(["--capture-window", "0x1"], "--capture-window needs --video x11"),
        .init(["--cursor", "off"], "--cursor needs --video x11"),
        .init(["--cursor", "maybe"], "--cursor needs --video x11"),
        // e2e: S
        .init(["--video", "x11:"], "--video x11:: the display name is empty"),
        // e2e: S
        .init(["--video", "x11:99", "--fps", "61"], "--fps 61 is outside 1...60 for --video x11"),
        .init(["--video", "x11", "--fps", "0"], "--fps 0 is outside 1...60 for --video x11"),
        .init(
            ["--video", "x11:99", "--unpaced"],
            "--unpaced and --bogus-timestamps are for files and the test source"
        ),
        .init(
            ["--video", "x11:99", "--bogus-timestamps"],
            "--unpaced and --bogus-timestamps are for files and the test source"
        ),
        // e2e: S
        .init(
            ["--video", "x11:99", "--capture-region", "20x"],
            "--video x11:99: region '20x' is not WxH+X+Y with a positive width and height and offsets of 0 or more "
                + "(e.g. 640x480+0+0)"
        ),
        .init(
            ["--video", "x11:99", "--capture-monitor", "A", "--capture-window", "0x1"],
            "--video x11:99: --capture-monitor and --capture-window both name what to capture; give one"
        ),
        .init(["--video", "x11:99", "--cursor", "maybe"], "--cursor 'maybe' is not on or off"),
        .init(["--video", "x11:99", "--capture-monitor", ""], "--video x11:99: --capture-monitor is empty"),
        .init(
            ["--video", "x11:99", "--capture-window", "zz"],
            "--video x11:99: window 'zz' is not a window id (decimal or 0x hexadecimal, not 0)"
        ),

        // Input: files, the test source, system audio
        .init(["--video", "foo.mp4"], "--video 'foo.mp4' is not 'test', a .y4m file, 'x11' or 'x11:DISPLAY'"),
        // e2e: P
        .init(["--video", "missing.y4m"], "--video missing.y4m: no such file"),
        .init(["--audio", "foo.mp3"], "--audio 'foo.mp3' is not 'system', 'test', 'none' or a .wav file"),
        .init(["--audio", "missing.wav"], "--audio missing.wav: no such file"),
        // e2e: A
        .init(["--app-audio", "app.monitor"], "--app-audio needs --audio system"),
        .init(["--mic", "x"], "--mic needs --audio system"),
        .init(["--audio", "system", "--app-audio", ""], "--app-audio is empty"),
        .init(["--audio", "system", "--mic", ""], "--mic is empty"),
        .init(
            ["--audio", "system", "--app-audio", "none", "--mic", "none"],
            "--app-audio none and --mic none leave --audio system nothing to capture"
        ),
        // e2e: P
        .init(["--size", "0x0"], "--size '0x0' is not WIDTHxHEIGHT with positive numbers"),
        .init(["--size", "640"], "--size '640' is not WIDTHxHEIGHT with positive numbers"),
        .init(["--size", "axb"], "--size 'axb' is not WIDTHxHEIGHT with positive numbers"),
        .init(["--size", "640x360x2"], "--size '640x360x2' is not WIDTHxHEIGHT with positive numbers"),
        .init(["--duration", "0"], "--duration must be positive"),
        .init(["--start-delay", "61"], "--start-delay is outside 0...60"),

        // Encoder
        // e2e: P
        .init(["--audio-complexity", "11"], "--audio-complexity 11 is outside 0...10"),
        .init(
            ["--min-video-bitrate", "2000"],
            "--min-video-bitrate 2000 must be within 50...50000 and at most --video-bitrate"
        ),
        .init(
            ["--min-video-bitrate", "40"],
            "--min-video-bitrate 40 must be within 50...50000 and at most --video-bitrate"
        ),
        .init(
            ["--max-video-bitrate", "1000"],
            "--max-video-bitrate 1000 must be within 50...50000 and at least --video-bitrate"
        ),

        // Feedback and congestion control
        .init(["--nack", "maybe"], "--nack 'maybe' is not same-ssrc, rtx or off"),
        // e2e: P
        .init(["--pacing-burst-ms", "101"], "--pacing-burst-ms must be 0-100; got 101"),

        // Output
        // e2e: P
        .init(
            ["--srtp-suite", "NULL"],
            "--srtp-suite 'NULL' is not one of AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AEAD_AES_128_GCM"
        ),
        .init(["--mtu", "100"], "--mtu 100 is outside 200...9000"),
        .init(["--preview", "nowhere"], "--preview 'nowhere' is not HOST:PORT"),
        .init(["--content-hint", "fast"], "--content-hint 'fast' is not one of motion, detail, text"),
        .init(["--preview", "example.org:5004"], "--preview 'example.org' is not a numeric IPv4 or IPv6 address"),
        // e2e: P
        .init(["--to", "example.org:5004"], "--to 'example.org' is not a numeric IPv4 or IPv6 address"),
        .init(["--to", "127.0.0.1"], "--to '127.0.0.1' is not HOST:PORT"),
        // e2e: P
        .init(["--to-file", "/nonexistent/list"], "--to-file /nonexistent/list: cannot read the file"),
        // e2e: F
        .init(["--to-file", "bad.txt"], "--to-file bad.txt line 2: 'not-an-address' is not HOST:PORT"),

        // WebRTC
        .init(["--ice-address", "10.0.0.x"], "--ice-address '10.0.0.x' is not a numeric IPv4 or IPv6 address"),
        .init((1...9).flatMap { ["--ice-address", "127.0.0.\($0)"] }, "--ice-address: at most 8 addresses"),
        .init(["--stun", "nowhere"], "--stun 'nowhere' is not HOST:PORT"),
        // e2e: P
        .init(
            ["--turn", "turn:nopass@127.0.0.1:3478"],
            "--turn 'turn:nopass@127.0.0.1:3478' is not turn:USER:PASS@HOST:PORT"
        ),
        .init(["--turn", "turn:u:p@host"], "--turn 'host' is not HOST:PORT"),
        .init(["--turn", "stun:u:p@h:1"], "--turn 'stun:u:p@h:1' is not turn:USER:PASS@HOST:PORT"),
        // e2e: P
        .init(["--ice-transport-policy", "relay"], "--ice-transport-policy relay needs --turn"),
        // e2e: P
        .init(["--ice-transport-policy", "direct"], "--ice-transport-policy 'direct' is not all or relay"),
        .init(["--dtls-cert", "c.pem"], "--dtls-cert and --dtls-key go together"),
        .init(["--dtls-key", "k.pem"], "--dtls-cert and --dtls-key go together"),
        // e2e: P
        .init(["--ice-ports", "70000-1"], "--ice-ports '70000-1': port 70000 is outside 1-65535"),
        // e2e: P
        .init(["--ice-ports", "0-10"], "--ice-ports '0-10': port 0 is outside 1-65535"),
        // e2e: P
        .init(
            ["--ice-ports", "41000-40000"],
            "--ice-ports '41000-40000': the first port 41000 is above the last 40000"
        ),
        // e2e: P
        .init(["--ice-ports", "40000"], "--ice-ports '40000': not MIN-MAX, two UDP ports such as 40000-40999"),
        // e2e: P
        .init(["--ice-ports", "1-2-3"], "--ice-ports '1-2-3': not MIN-MAX, two UDP ports such as 40000-40999"),
        // e2e: P
        .init(["--ice-ports", "+1-20"], "--ice-ports '+1-20': not MIN-MAX, two UDP ports such as 40000-40999"),
        // e2e: P
        .init(
            ["--ice-ports", "40000-4x"],
            "--ice-ports '40000-4x': not MIN-MAX, two UDP ports such as 40000-40999"
        ),
        // e2e: P
        .init(["--max-viewers", "5000"], "--max-viewers must be 0-1000; got 5000"),

        // WHIP
        .init(["--whip-token", "abc"], "--whip-token and --whip-ca need --whip"),
        .init(["--whip-ca", "x.pem"], "--whip-token and --whip-ca need --whip"),
        .init(
            ["--whip", "ftp://x"],
            "--whip 'ftp://x' is not an http or https URL: the scheme is not http or https"
        ),
        .init(["--whip", ""], "--whip '' is not an http or https URL: it is empty"),
        .init(
            ["--whip", "http://127.0.0.1:7080/whip", "--whip-token", "a b"],
            "--whip-token is not a bearer token (RFC 6750 section 2.1 characters)"
        ),
    ]

    /// The error the validation refuses `arguments` with, as the executable gets it; nil when
    /// it accepts them.
    static func refusal(_ arguments: [String], files: any FileAccess) throws -> PublishError? {
        let parsed = try PublishArguments.parse(arguments)
        do {
            _ = try parsed.publishOptions(files: files)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: cases)
    func isOneUsageLine(_ bad: BadArguments) throws {
        let error = try #require(try Self.refusal(bad.arguments, files: Self.files), "accepted")
        #expect(error.code == .usage)
        #expect(error.description == bad.message)
    }

    /// The process's own file system (`LocalFiles`) refuses the same way.
    @Test func theLocalFileSystemRefusesMissingFiles() throws {
        for (arguments, message) in [
            (["--video", "/nonexistent/missing.y4m"], "--video /nonexistent/missing.y4m: no such file"),
            (["--audio", "/nonexistent/missing.wav"], "--audio /nonexistent/missing.wav: no such file"),
            (["--to-file", "/nonexistent/list"], "--to-file /nonexistent/list: cannot read the file"),
        ] {
            let error = try Self.refusal(["--room", "r", "--uid", "a"] + arguments, files: LocalFiles())
            #expect(error?.description == message)
        }
    }

    /// `--to-file` beyond its limits: the file's size, the number of destinations.
    @Test func destinationFilesHaveLimits() throws {
        let many = (1...257).map { "127.0.0.1:\(5000 + 4 * $0)" }.joined(separator: "\n")
        let large = String(repeating: "# padding\n", count: 7000)
        let files = MemoryFiles(files: ["many.txt": many, "large.txt": large])
        for (path, message) in [
            ("many.txt", "--to-file many.txt: more than 256 destinations"),
            ("large.txt", "--to-file large.txt: larger than 64 KiB"),
        ] {
            let error = try Self.refusal(["--room", "r", "--uid", "a", "--to-file", path], files: files)
            #expect(error?.description == message)
        }
    }

    /// Of two mistakes, the one the validation meets first is named: the room and uid first, then
    /// the groups in the order `--help` lists them; within a group, the order the checks have
    /// always had (`--ingest` with `--video` before what `--video` names).
    @Test func theFirstMistakeIsNamed() throws {
        for (arguments, message) in [
            (["--room", "bad room!", "--uid", "a", "--signal", "nowhere"], "room \"bad room!\" must be"),
            (["--room", "r", "--uid", "a", "--ingest", "unix:/x", "--video", "foo.mp4"], "--video and --ingest"),
            (["--room", "r", "--uid", "a", "--size", "0x0", "--mtu", "1"], "--size '0x0'"),
        ] {
            let error = try Self.refusal(arguments, files: MemoryFiles())
            #expect(error?.description.hasPrefix(message) == true, "\(String(describing: error))")
        }
    }
}
