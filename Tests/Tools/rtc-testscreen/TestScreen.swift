import ArgumentParser
import CPulse
import CXCB
import CYUV
import Glibc
import Media

/// `rtc-testscreen`: a test X client. Paints the product's synthetic screen (with its timecode
/// strip) into an X window at a steady rate, or one solid colour, so the capture tests have real
/// X content to capture and can check the timecodes a receiver decoded.
///
/// With `--av-marker-every`, an A/V sync marker instead: a dark window that turns white for
/// `ClickPlayer.flashNanoseconds` every N seconds while a 10 ms click plays into a PulseAudio sink,
/// both due at the same CLOCK_MONOTONIC instant (see `Painter.runMarkers` and `ClickPlayer`).
///
/// Prints `window 0x…` (the window's id) once the window is mapped and holds its first picture.
/// Exits 0 at the end of `--duration` or on SIGINT/SIGTERM; exits 1 with one stderr line when the
/// display cannot be reached or goes away.
@main
struct TestScreen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-testscreen",
        abstract: "Paint the synthetic test screen (or a solid colour) into an X window."
    )

    @Option(help: "X display, e.g. :99 (default: $DISPLAY).")
    var display: String?

    @Option(help: "Window size WxH.")
    var size: String = "1280x720"

    @Option(help: "Window position X,Y on the root window.")
    var position: String = "0,0"

    @Option(help: "Frames per second.")
    var fps: Int = 30

    @Option(help: "Window title (WM_NAME and _NET_WM_NAME).")
    var title: String = "rtc-testscreen"

    @Option(help: "Exit 0 after this many seconds (default: run until SIGINT/SIGTERM).")
    var duration: Double?

    @Option(help: "Paint this colour (RRGGBB hex) once instead of the synthetic screen, then idle.")
    var solid: String?

    @Option(help: "Keep the first picture still for this many seconds, then animate from frame 1.")
    var hold: Double?

    @Option(
        help: """
            A/V sync marker: a dark window that turns white for 100 ms every SECONDS while a 10 ms 1 kHz \
            click plays into --pulse-sink, both due at the same instant (PULSE_SERVER picks the server).
            """
    )
    var avMarkerEvery: Double?

    @Option(help: "PulseAudio sink for --av-marker-every's click (default: the default sink).")
    var pulseSink: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Override-redirect window: no window manager moves, resizes or decorates it."
    )
    var overrideRedirect = true

    @Flag(help: "Send pictures with PutImage in bands even when MIT-SHM is available.")
    var putImage = false

    @Flag(
        help: """
            At the end of --duration, print one stderr line: frames painted and skipped, time per frame. \
            With --av-marker-every: a line per marker (its due time, when the flash was on the screen, \
            when the click was scheduled to play and when the sink's monitor had it).
            """
    )
    var stats = false

    func validate() throws {
        guard parsedSize != nil else { throw ValidationError("--size must be WxH with W, H ≥ 1, got \(size)") }
        guard parsedPosition != nil else { throw ValidationError("--position must be X,Y, got \(position)") }
        guard (1...240).contains(fps) else { throw ValidationError("--fps must be 1...240, got \(fps)") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if let hold, !(0...3600).contains(hold) { throw ValidationError("--hold must be 0...3600 seconds") }
        if let solid, parseColour(solid) == nil { throw ValidationError("--solid must be RRGGBB hex, got \(solid)") }
        if let avMarkerEvery {
            guard (0.3...60).contains(avMarkerEvery) else {
                throw ValidationError("--av-marker-every must be 0.3...60 seconds, got \(avMarkerEvery)")
            }
            guard solid == nil else { throw ValidationError("--av-marker-every and --solid exclude each other") }
        } else if pulseSink != nil {
            throw ValidationError("--pulse-sink needs --av-marker-every")
        }
    }

    var parsedSize: (width: Int, height: Int)? {
        let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, (1...8192).contains(parts[0]), (1...8192).contains(parts[1]) else { return nil }
        return (parts[0], parts[1])
    }

    var parsedPosition: (x: Int, y: Int)? {
        let parts = position.split(separator: ",").compactMap { Int($0.trimmingPrefix("+")) }
        guard parts.count == 2, parts.allSatisfy({ (-32768...32767).contains($0) }) else { return nil }
        return (parts[0], parts[1])
    }

    func run() throws {
        guard let (width, height) = parsedSize, let (x, y) = parsedPosition else { throw ExitCode(2) }
        let name = display ?? getenv("DISPLAY").map { String(cString: $0) } ?? ""
        guard !name.isEmpty else { fail("no X display: give --display or set DISPLAY") }
        // SIGINT and SIGTERM end it at once with status 0: the server drops the window with the
        // connection, and the SHM segment is already marked for removal.
        // Unblocked too: a child inherits its parent's mask, and a test runner's threads block them.
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGTERM) { _ in _exit(0) }
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)

        let painter = try Painter(
            display: name,
            x: x,
            y: y,
            width: width,
            height: height,
            title: title,
            overrideRedirect: overrideRedirect,
            sharedMemory: !putImage,
            solid: avMarkerEvery == nil ? solid.flatMap(parseColour) : Painter.markerDark
        )
        if let avMarkerEvery {
            painter.runMarkers(every: avMarkerEvery, sink: pulseSink, duration: duration, stats: stats)
        } else {
            painter.run(fps: fps, duration: duration, hold: hold ?? 0, stats: stats)
        }
    }
}

/// 0x00RRGGBB from "RRGGBB" (a leading "#" or "0x" allowed).
func parseColour(_ text: String) -> UInt32? {
    var hex = Substring(text)
    if hex.hasPrefix("#") { hex = hex.dropFirst() } else if hex.lowercased().hasPrefix("0x") { hex = hex.dropFirst(2) }
    guard hex.count == 6 else { return nil }
    return UInt32(hex, radix: 16)
}

/// One stderr line, exit 1.
func fail(_ message: String) -> Never {
    emit("rtc-testscreen: \(message)\n", to: 2)
    exit(1)
}

/// `text` written straight to a file descriptor (1: stdout, 2: stderr), unbuffered.
func emit(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

/// `value` with two decimals, for the --stats line.
func hundredths(_ value: Double) -> String {
    let scaled = Int((value * 100).rounded())
    let fraction = abs(scaled % 100)
    return "\(scaled / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

/// `value` with a sign and two decimals ("+1.25", "-0.16"), for the marker lines.
func signedMilliseconds(_ value: Double) -> String {
    (value < 0 ? "-" : "+") + hundredths(abs(value))
}

/// Nanoseconds on the monotonic clock (the capture times of `VideoFrame`).
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The X connection, the window and the pixels going into it.
final class Painter {
    private let connection: OpaquePointer
    private let displayName: String
    private let window: xcb_window_t
    private let gc: xcb_gcontext_t
    private let depth: UInt8
    /// The colour painted instead of the synthetic screen; the marker mode switches it.
    private var solid: UInt32?
    /// The window's size as the server last reported it.
    private var windowWidth: Int
    private var windowHeight: Int
    /// The picture's size: the window's, rounded up to even (and at least the synthetic
    /// source's 160x96); what does not fit the window is not sent.
    private var pictureWidth = 0
    private var pictureHeight = 0
    private var source: SyntheticScreenSource?
    private var frameRate = 30
    /// BGRX pixels of the picture: the MIT-SHM segment, or plain memory without SHM.
    private var pixels: UnsafeMutablePointer<UInt32>?
    private var capacity = 0
    private var shm: (segment: xcb_shm_seg_t, id: Int32)?
    private let shmAvailable: Bool
    private let shmCompletion: UInt8
    /// A ShmPutImage the server may still be reading from the segment.
    private var putPending = false
    private let maxRequestBytes: Int

    init(
        display: String,
        x: Int,
        y: Int,
        width: Int,
        height: Int,
        title: String,
        overrideRedirect: Bool,
        sharedMemory: Bool,
        solid: UInt32?
    ) throws {
        displayName = display
        self.solid = solid
        windowWidth = width
        windowHeight = height
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(display, &screenNumber), xcb_connection_has_error(connection) == 0
        else { fail("cannot connect to X display \(display)") }
        self.connection = connection
        var roots = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<max(0, Int(screenNumber)) where roots.rem > 0 { xcb_screen_next(&roots) }
        guard roots.rem > 0, let screen = roots.data?.pointee else {
            fail("display \(display) has no screen \(screenNumber)")
        }
        depth = screen.root_depth
        guard Self.bitsPerPixel(connection, depth: depth) == 32, depth == 24 || depth == 32 else {
            fail("display \(display) has depth \(depth); need 24-bit TrueColor at 32 bits per pixel")
        }
        maxRequestBytes = Int(xcb_get_maximum_request_length(connection)) * 4

        // MIT-SHM, unless the server lacks it (Xvfb -extension MIT-SHM) or cannot attach our
        // segments (another IPC namespace): then PutImage in bands.
        var shmFirstEvent: UInt8 = 0
        var haveShm = false
        let shmName = "MIT-SHM"
        let query = xcb_query_extension(connection, UInt16(shmName.utf8.count), shmName)
        if sharedMemory, let present = xcb_query_extension_reply(connection, query, nil) {
            if present.pointee.present != 0 {
                let reply = xcb_shm_query_version_reply(connection, xcb_shm_query_version(connection), nil)
                haveShm = reply != nil
                free(reply)
                shmFirstEvent = present.pointee.first_event
            }
            free(present)
        }
        shmAvailable = haveShm
        shmCompletion = shmFirstEvent &+ UInt8(XCB_SHM_COMPLETION)

        window = xcb_generate_id(connection)
        // Value list in the order of the mask bits: BACK_PIXEL, OVERRIDE_REDIRECT, EVENT_MASK.
        let events = XCB_EVENT_MASK_EXPOSURE.rawValue | XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue
        let values: [UInt32] = [screen.black_pixel, overrideRedirect ? 1 : 0, events]
        xcb_create_window(
            connection,
            depth,
            window,
            screen.root,
            Int16(x),
            Int16(y),
            UInt16(width),
            UInt16(height),
            0,
            UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue),
            screen.root_visual,
            XCB_CW_BACK_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue | XCB_CW_EVENT_MASK.rawValue,
            values
        )
        gc = xcb_generate_id(connection)
        xcb_create_gc(connection, gc, window, 0, nil)
        setTitle(title)
        if !overrideRedirect { setPositionHints(x: x, y: y, width: width, height: height) }
        resize(width: width, height: height)
        xcb_map_window(connection, window)
    }

    /// Paints until the duration ends or a signal comes; never returns on a lost display.
    /// Paints at `fps` until `duration`; with `hold`, frame 0 stays alone on the screen that many
    /// seconds before frame 1 (a still screen, then a moving one).
    func run(fps: Int, duration: Double?, hold: Double, stats: Bool) {
        frameRate = fps
        if solid == nil { makeSource() }
        let period = UInt64(1_000_000_000 / fps)
        let held = UInt64(hold * 1e9)
        // Frame k (k ≥ 1) is due at start + k periods; with a hold, `start` is that much later.
        let start = monotonicNanoseconds() + held
        let end = duration.map { (start &- held) + UInt64($0 * 1e9) }
        var lastIndex = -1
        // First picture, then the window's id: a test that has read the line finds it painted.
        paint(index: 0, captureTime: start &- held)
        lastIndex = 0
        sync()
        emit("window 0x\(String(window, radix: 16))\n", to: 1)

        var connectionFD = pollfd(fd: xcb_get_file_descriptor(connection), events: Int16(POLLIN), revents: 0)
        while true {
            handleEvents()
            let now = monotonicNanoseconds()
            if let end, now >= end { break }
            if solid == nil, now >= start {
                // The frame wall time is in: a late frame is skipped, never caught up in a burst.
                let index = Int((now - start) / period)
                if index > lastIndex {
                    skipped += index - lastIndex - 1
                    paint(index: index, captureTime: now)
                    let cost = monotonicNanoseconds() - now
                    painted += 1
                    paintNanoseconds += cost
                    slowestPaint = max(slowestPaint, cost)
                    lastIndex = index
                }
            }
            var wake = solid == nil ? max(start, start + UInt64(lastIndex + 1) * period) : UInt64.max
            if let end { wake = min(wake, end) }
            let after = monotonicNanoseconds()
            let timeout =
                wake == .max ? -1 : wake <= after ? 0 : Int32(min((wake - after + 999_999) / 1_000_000, 60_000))
            connectionFD.revents = 0
            if poll(&connectionFD, 1, timeout) < 0, errno != EINTR { fail("poll failed: errno \(errno)") }
            if connectionFD.revents & Int16(POLLHUP | POLLERR) != 0 { lost() }
        }
        if stats {
            let seconds = Double(monotonicNanoseconds() - (start &- held)) / 1e9
            let frames = painted + 1
            let average = Double(paintNanoseconds) / Double(max(painted, 1)) / 1e6
            emit(
                "rtc-testscreen: \(pictureWidth)x\(pictureHeight) painted \(frames) frames in \(hundredths(seconds)) s "
                    + "(\(hundredths(Double(frames) / seconds)) fps), skipped \(skipped), "
                    + "paint avg \(hundredths(average)) ms, max \(hundredths(Double(slowestPaint) / 1e6)) ms, "
                    + "source init \(hundredths(Double(sourceNanoseconds) / 1e6)) ms, "
                    + (shm == nil ? "PutImage" : "MIT-SHM") + "\n",
                to: 2
            )
        }
        xcb_disconnect(connection)
    }

    /// The marker mode's colours: dark between flashes, white during one.
    static let markerDark: UInt32 = 0x10_1010
    static let markerLight: UInt32 = 0xFF_FFFF

    /// The A/V sync marker: marker k is due at `first + k·every` on CLOCK_MONOTONIC, where
    /// `first` is 2 s (or one period, if longer) after the click stream is ready. The flash is sent at its due time
    /// (slept to with `clock_nanosleep`, not a millisecond poll) and followed by a round trip, so
    /// when it returns the X server has the white pixels in the window: that is "shown", logged
    /// against the due time. `ClickPlayer` schedules the click for the same due time.
    func runMarkers(every: Double, sink: String?, duration: Double?, stats: Bool) {
        let player = ClickPlayer(sink: sink, stats: stats)
        let start = monotonicNanoseconds()
        let period = UInt64(every * 1e9)
        // The stream's first second carries start-up timing (no latency yet, a sink still at its
        // idle latency): the first marker comes after it.
        let first = start + max(period, 2_000_000_000)
        player.begin(first: first, period: period)
        let end = duration.map { start + UInt64($0 * 1e9) }
        fill(Self.markerDark)
        sync()
        emit("window 0x\(String(window, radix: 16))\n", to: 1)
        var marker = 0
        var lit = false
        var lateness: [Double] = []
        var connectionFD = pollfd(fd: xcb_get_file_descriptor(connection), events: Int16(POLLIN), revents: 0)
        while true {
            handleEvents()
            let now = monotonicNanoseconds()
            if let end, now >= end { break }
            let due = first + UInt64(marker) * period
            let next = lit ? due + ClickPlayer.flashNanoseconds : due
            if now >= next {
                if lit {
                    fill(Self.markerDark)
                    lit = false
                    marker += 1
                } else {
                    fill(Self.markerLight)
                    sync()
                    let shown = Double(Int64(monotonicNanoseconds()) - Int64(due)) / 1e6
                    lateness.append(shown)
                    if stats {
                        emit(
                            "rtc-testscreen: marker \(marker) due \(due) ns: flash shown \(signedMilliseconds(shown)) ms\n",
                            to: 2
                        )
                    }
                    lit = true
                }
                continue
            }
            var wake = next
            if let end { wake = min(wake, end) }
            if wake - now < 3_000_000 {
                // The last few milliseconds slept to the nanosecond: poll's timeout is in ms.
                var target = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
                continue
            }
            connectionFD.revents = 0
            let timeout = Int32(min((wake - now) / 1_000_000 - 2, 60_000))
            if poll(&connectionFD, 1, timeout) < 0, errno != EINTR { fail("poll failed: errno \(errno)") }
            if connectionFD.revents & Int16(POLLHUP | POLLERR) != 0 { lost() }
        }
        if stats {
            let sorted = lateness.sorted()
            emit(
                "rtc-testscreen: \(lateness.count) markers every \(every) s; flash shown after its due time: "
                    + "median \(signedMilliseconds(sorted.isEmpty ? 0 : sorted[sorted.count / 2])) ms, "
                    + "max \(signedMilliseconds(sorted.last ?? 0)) ms; " + player.summary() + "\n",
                to: 2
            )
        }
        player.finish()
        xcb_disconnect(connection)
    }

    /// The whole picture in one colour, sent at once.
    private func fill(_ colour: UInt32) {
        solid = colour
        waitForPut()
        pixels?.update(repeating: 0xFF00_0000 | colour, count: pictureWidth * pictureHeight)
        putPixels()
    }

    private var painted = 0
    private var skipped = 0
    private var paintNanoseconds: UInt64 = 0
    private var slowestPaint: UInt64 = 0
    private var sourceNanoseconds: UInt64 = 0

    private func lost() -> Never { fail("lost the X display \(displayName)") }

    /// Handles what the server sent: size changes, exposures, completions, errors.
    private func handleEvents() {
        while let event = xcb_poll_for_event(connection) {
            note(event)
            free(event)
        }
        if xcb_connection_has_error(connection) != 0 { lost() }
        if let (width, height) = requestedSize {
            requestedSize = nil
            if width != windowWidth || height != windowHeight {
                resize(width: width, height: height)
                if solid == nil { makeSource() }
                exposed = false
                paintCurrent()
            }
        }
        if exposed {
            exposed = false
            putPixels()
        }
    }

    /// A size the window was given, to follow at the next turn of the loop.
    private var requestedSize: (width: Int, height: Int)?
    /// An Expose series ended: the window needs its picture again.
    private var exposed = false

    /// Records one event (acted on by `handleEvents`, so this is safe while waiting for a
    /// completion in the middle of painting).
    private func note(_ event: UnsafeMutablePointer<xcb_generic_event_t>) {
        let raw = UnsafeMutableRawPointer(event)
        switch event.pointee.response_type & 0x7f {
        case 0:
            let error = raw.assumingMemoryBound(to: xcb_generic_error_t.self).pointee
            fail(
                "X error \(error.error_code) for request \(error.major_code).\(error.minor_code) "
                    + "(resource 0x\(String(error.resource_id, radix: 16)))"
            )
        case UInt8(XCB_CONFIGURE_NOTIFY):
            let configure = raw.assumingMemoryBound(to: xcb_configure_notify_event_t.self).pointee
            if configure.window == window { requestedSize = (Int(configure.width), Int(configure.height)) }
        case UInt8(XCB_EXPOSE):
            if raw.assumingMemoryBound(to: xcb_expose_event_t.self).pointee.count == 0 { exposed = true }
        case shmCompletion where shmAvailable:
            putPending = false
        default:
            break
        }
    }

    /// New window size: the picture follows it, in a buffer (or segment) grown only when needed.
    private func resize(width: Int, height: Int) {
        windowWidth = width
        windowHeight = height
        pictureWidth = max(160, (width + 1) & ~1)
        pictureHeight = max(96, (height + 1) & ~1)
        let needed = pictureWidth * pictureHeight
        if needed > capacity {
            waitForPut()
            releasePixels()
            allocatePixels(count: needed)
        }
        if let solid {
            pixels?.update(repeating: 0xFF00_0000 | solid, count: pictureWidth * pictureHeight)
        }
    }

    private func makeSource() {
        let started = monotonicNanoseconds()
        defer { sourceNanoseconds = monotonicNanoseconds() - started }
        do {
            source = try SyntheticScreenSource(width: pictureWidth, height: pictureHeight, frameRate: frameRate)
        } catch {
            fail("synthetic screen at \(pictureWidth)x\(pictureHeight): \(error)")
        }
    }

    /// After a resize: the same stream time, drawn at the new size.
    private var lastPainted: (index: Int, captureTime: UInt64) = (0, 0)

    private func paintCurrent() {
        if solid == nil { paint(index: lastPainted.index, captureTime: lastPainted.captureTime) } else { putPixels() }
    }

    /// Renders frame `index` as BGRX into the buffer and sends it.
    private func paint(index: Int, captureTime: UInt64) {
        lastPainted = (index, captureTime)
        if let source {
            let frame = source.videoFrame(index: index, captureTime: captureTime)
            waitForPut()
            guard let pixels else { return }
            let destination = UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt8.self)
            frame.y.withUnsafeBufferPointer { y in
                frame.u.withUnsafeBufferPointer { u in
                    frame.v.withUnsafeBufferPointer { v in
                        _ = I420ToARGB(
                            y.baseAddress,
                            Int32(frame.strideY),
                            u.baseAddress,
                            Int32(frame.strideU),
                            v.baseAddress,
                            Int32(frame.strideV),
                            destination,
                            Int32(pictureWidth * 4),
                            Int32(frame.width),
                            Int32(frame.height)
                        )
                    }
                }
            }
        }
        putPixels()
    }

    /// Sends the buffer to the window: one ShmPutImage, or PutImage in bands under the request
    /// size limit. Only the part inside the window is sent.
    private func putPixels() {
        guard let pixels else { return }
        let width = min(pictureWidth, windowWidth)
        let height = min(pictureHeight, windowHeight)
        if let shm {
            xcb_shm_put_image(
                connection,
                window,
                gc,
                UInt16(pictureWidth),
                UInt16(pictureHeight),
                0,
                0,
                UInt16(width),
                UInt16(height),
                0,
                0,
                depth,
                UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue),
                1,
                shm.segment,
                0
            )
            putPending = true
        } else {
            // Rows of the window's width, copied out of the picture's rows in place: PutImage
            // has no source stride, so bands are sent row by row when the widths differ.
            let rowBytes = width * 4
            let rowsPerBand = max(1, (maxRequestBytes - 64) / max(rowBytes, 1))
            var top = 0
            while top < height {
                let rows = width == pictureWidth ? min(rowsPerBand, height - top) : 1
                xcb_put_image(
                    connection,
                    UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue),
                    window,
                    gc,
                    UInt16(width),
                    UInt16(rows),
                    0,
                    Int16(top),
                    0,
                    depth,
                    UInt32(rows * rowBytes),
                    UnsafeRawPointer(pixels + top * pictureWidth).assumingMemoryBound(to: UInt8.self)
                )
                top += rows
            }
        }
        if xcb_flush(connection) <= 0 { lost() }
    }

    /// Waits until the server has read the segment of the last ShmPutImage (its completion
    /// event), so the next picture is not written under it.
    private func waitForPut() {
        while putPending {
            guard let event = xcb_wait_for_event(connection) else { lost() }
            note(event)
            free(event)
        }
    }

    /// A round trip: everything sent so far has been processed by the server.
    private func sync() {
        let reply = xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), nil)
        guard reply != nil else { lost() }
        free(reply)
    }

    private func allocatePixels(count: Int) {
        let bytes = count * 4
        if shmAvailable {
            let id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0o600)
            if id >= 0, let address = shmat(id, nil, 0), address != UnsafeMutableRawPointer(bitPattern: -1) {
                let segment = xcb_generate_id(connection)
                let error = xcb_request_check(connection, xcb_shm_attach_checked(connection, segment, UInt32(id), 0))
                // Marked for removal now: it goes when both sides have detached, even after a crash.
                shmctl(id, IPC_RMID, nil)
                if error == nil {
                    shm = (segment, id)
                    pixels = address.bindMemory(to: UInt32.self, capacity: count)
                    capacity = count
                    return
                }
                free(error)
                shmdt(address)
            } else if id >= 0 {
                shmctl(id, IPC_RMID, nil)
            }
        }
        pixels = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
        pixels?.initialize(repeating: 0, count: count)
        capacity = count
    }

    private func releasePixels() {
        guard let pixels else { return }
        if let shm {
            xcb_shm_detach(connection, shm.segment)
            shmdt(pixels)
            self.shm = nil
        } else {
            pixels.deallocate()
        }
        self.pixels = nil
        capacity = 0
    }

    private func setTitle(_ title: String) {
        var bytes = Array(title.utf8)
        xcb_change_property(
            connection,
            UInt8(XCB_PROP_MODE_REPLACE.rawValue),
            window,
            XCB_ATOM_WM_NAME.rawValue,
            XCB_ATOM_STRING.rawValue,
            8,
            UInt32(bytes.count),
            &bytes
        )
        let netName = atom("_NET_WM_NAME")
        let utf8 = atom("UTF8_STRING")
        if netName != 0, utf8 != 0 {
            xcb_change_property(
                connection,
                UInt8(XCB_PROP_MODE_REPLACE.rawValue),
                window,
                netName,
                utf8,
                8,
                UInt32(bytes.count),
                &bytes
            )
        }
    }

    /// WM_NORMAL_HINTS with a user-specified position and size, for a window manager to honour.
    private func setPositionHints(x: Int, y: Int, width: Int, height: Int) {
        // flags (USPosition | USSize | PPosition | PSize), x, y, width, height, then 13 unused.
        var hints = [UInt32](repeating: 0, count: 18)
        hints[0] = 1 | 2 | 4 | 8
        hints[1] = UInt32(bitPattern: Int32(x))
        hints[2] = UInt32(bitPattern: Int32(y))
        hints[3] = UInt32(width)
        hints[4] = UInt32(height)
        xcb_change_property(
            connection,
            UInt8(XCB_PROP_MODE_REPLACE.rawValue),
            window,
            XCB_ATOM_WM_NORMAL_HINTS.rawValue,
            XCB_ATOM_WM_SIZE_HINTS.rawValue,
            32,
            UInt32(hints.count),
            &hints
        )
    }

    private func atom(_ name: String) -> xcb_atom_t {
        let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
        guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { return 0 }
        defer { free(reply) }
        return reply.pointee.atom
    }

    private static func bitsPerPixel(_ connection: OpaquePointer, depth: UInt8) -> Int {
        var formats = xcb_setup_pixmap_formats_iterator(xcb_get_setup(connection))
        while formats.rem > 0 {
            if let format = formats.data?.pointee, format.depth == depth { return Int(format.bits_per_pixel) }
            xcb_format_next(&formats)
        }
        return 0
    }
}

/// The marker's click: 10 ms of a 1 kHz sine at 0.9 of full scale, played through libpulse into
/// one sink on a low-latency playback stream (20 ms target), so it sounds at a marker's due time.
///
/// Scheduling: the stream is kept fed (silence between clicks) by its write callback. Before
/// each write, `pa_stream_get_latency` (interpolated, auto-updated timing) says how long until a
/// sample written now is played by the sink: the first sample of this write plays at
/// `now + latency`. A marker due inside the span this write covers starts at the sample that
/// plays at its due time; one whose due time has already passed (never, unless the callback is
/// late) starts at the first sample and its lateness is logged.
///
/// With `--stats`, it also records the sink's monitor, stamps each sample the way rtc-publish
/// does (now − the record stream's latency, negative on a monitor), and logs when the click was
/// there against its due time: the client's own audio skew, as the sound server's clocks see it.
final class ClickPlayer: @unchecked Sendable {
    static let rate = 48_000
    static let channels = 2
    static let bytesPerFrame = 8
    /// How long the flash stays on: three frame periods at 30 fps, so a 30 fps capture never
    /// misses it.
    static let flashNanoseconds: UInt64 = 100_000_000

    private let mainloop: OpaquePointer
    private var context: OpaquePointer?
    private var playback: OpaquePointer?
    private var monitor: OpaquePointer?
    private let sink: String?
    private let stats: Bool
    private let click: [Float] = (0..<480).map { Float(0.9 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    private var first: UInt64 = .max
    private var period: UInt64 = 1
    private var nextMarker = 0
    /// Frames of a click still to write (its tail crossed the end of the last write).
    private var clickPosition: Int?
    private var scheduled: [Double] = []
    private var heard: [Double] = []
    private var latencies: [Double] = []
    /// Monitor frames below the onset threshold since the last click.
    private var quietFrames = 0

    init(sink: String?, stats: Bool) {
        self.sink = sink
        self.stats = stats
        guard let mainloop = pa_threaded_mainloop_new() else { fail("pa_threaded_mainloop_new failed") }
        self.mainloop = mainloop
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard pa_threaded_mainloop_start(mainloop) == 0 else { fail("pa_threaded_mainloop_start failed") }
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), "rtc-testscreen") else {
            fail("pa_context_new failed")
        }
        self.context = context
        pa_context_set_state_callback(context, { _, userdata in ClickPlayer.signal(userdata) }, userdata)
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { pulseFailed("connect") }
        while pa_context_get_state(context) != PA_CONTEXT_READY {
            guard PA_CONTEXT_IS_GOOD(pa_context_get_state(context)) != 0 else { pulseFailed("connect") }
            pa_threaded_mainloop_wait(mainloop)
        }
        playback = openPlayback(context)
        if stats { monitor = openMonitor(context) }
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func player(_ userdata: UnsafeMutableRawPointer?) -> ClickPlayer? {
        userdata.map { Unmanaged<ClickPlayer>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func signal(_ userdata: UnsafeMutableRawPointer?) {
        guard let player = player(userdata) else { return }
        pa_threaded_mainloop_signal(player.mainloop, 0)
    }

    private func pulseFailed(_ what: String) -> Never {
        let why = context.map { String(cString: pa_strerror(pa_context_errno($0))) } ?? "no context"
        fail("PulseAudio \(what) failed: \(why)")
    }

    /// A float32 stereo 48 kHz stream whose state changes wake the waiting thread.
    private func newStream(_ context: OpaquePointer, _ name: String) -> OpaquePointer {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(Self.rate), channels: UInt8(Self.channels))
        guard let stream = pa_stream_new(context, name, &spec, nil) else { pulseFailed("stream") }
        pa_stream_set_state_callback(stream, { _, userdata in ClickPlayer.signal(userdata) }, userdata)
        return stream
    }

    /// Float32 stereo at 48 kHz into the sink, 20 ms target latency, 5 ms requests.
    private func openPlayback(_ context: OpaquePointer) -> OpaquePointer {
        let stream = newStream(context, "rtc-testscreen click")
        pa_stream_set_write_callback(
            stream,
            { stream, bytes, userdata in ClickPlayer.player(userdata)?.onWrite(stream, bytes: bytes) },
            userdata
        )
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: UInt32(Self.rate / 50 * Self.bytesPerFrame),
            prebuf: UInt32.max,
            minreq: UInt32(Self.rate / 200 * Self.bytesPerFrame),
            fragsize: UInt32.max
        )
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_ADJUST_LATENCY.rawValue
        )
        guard pa_stream_connect_playback(stream, sink, &attributes, flags, nil, nil) >= 0 else {
            pulseFailed("playback into \(sink ?? "the default sink")")
        }
        waitUntilReady(stream, "playback into \(sink ?? "the default sink")")
        return stream
    }

    /// The sink's monitor, 5 ms fragments, for the client's own skew.
    private func openMonitor(_ context: OpaquePointer) -> OpaquePointer {
        let stream = newStream(context, "rtc-testscreen monitor")
        pa_stream_set_read_callback(
            stream,
            { stream, _, userdata in ClickPlayer.player(userdata)?.onRead(stream) },
            userdata
        )
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: UInt32.max,
            prebuf: UInt32.max,
            minreq: UInt32.max,
            fragsize: UInt32(Self.rate / 200 * Self.bytesPerFrame)
        )
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_ADJUST_LATENCY.rawValue
        )
        let name = sink.map { $0 + ".monitor" } ?? "@DEFAULT_MONITOR@"
        guard pa_stream_connect_record(stream, name, &attributes, flags) >= 0 else { pulseFailed("record \(name)") }
        waitUntilReady(stream, "record \(name)")
        return stream
    }

    private func waitUntilReady(_ stream: OpaquePointer, _ what: String) {
        while pa_stream_get_state(stream) != PA_STREAM_READY {
            guard PA_STREAM_IS_GOOD(pa_stream_get_state(stream)) != 0 else { pulseFailed(what) }
            pa_threaded_mainloop_wait(mainloop)
        }
    }

    /// Marker k is due at `first + k·period`.
    func begin(first: UInt64, period: UInt64) {
        pa_threaded_mainloop_lock(mainloop)
        self.first = first
        self.period = period
        pa_threaded_mainloop_unlock(mainloop)
    }

    func finish() {
        pa_threaded_mainloop_lock(mainloop)
        for stream in [playback, monitor].compactMap({ $0 }) {
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        playback = nil
        monitor = nil
        if let context {
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        context = nil
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// "click scheduled median/max, in monitor median/max": for the --stats summary.
    func summary() -> String {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        func spread(_ values: [Double]) -> String {
            let sorted = values.sorted()
            guard let low = sorted.first, let high = sorted.last else { return "none" }
            let median = signedMilliseconds(sorted[sorted.count / 2])
            return "median \(median) ms (\(signedMilliseconds(low))…\(signedMilliseconds(high)))"
        }
        return "click scheduled to play after its due time \(spread(scheduled)), "
            + "in the sink's monitor \(spread(heard)) (\(heard.count) heard), "
            + "playback latency \(spread(latencies))"
    }

    /// Fills what the server asks for: silence, and the click where a marker falls.
    private func onWrite(_ stream: OpaquePointer?, bytes: Int) {
        guard let stream else { return }
        let frames = bytes / Self.bytesPerFrame
        guard frames > 0 else { return }
        let now = monotonicNanoseconds()
        var latency: pa_usec_t = 0
        var negative: Int32 = 0
        let known = pa_stream_get_latency(stream, &latency, &negative) == 0
        let playStart = Int64(now) + (negative != 0 ? -1 : 1) * Int64(latency) * 1000
        var samples = [Float](repeating: 0, count: frames * Self.channels)
        var position = 0
        // The tail of a click that did not fit the last write.
        if let pending = clickPosition {
            position = writeClick(into: &samples, at: 0, from: pending, frames: frames)
        }
        while known, first != .max {
            let due = Int64(first + UInt64(nextMarker) * period)
            let offset = Int((due - playStart) * Int64(Self.rate) / 1_000_000_000)
            guard offset < frames else { break }
            let at = max(position, offset)
            let start = playStart + Int64(at) * 1_000_000_000 / Int64(Self.rate)
            let skew = Double(start - due) / 1e6
            scheduled.append(skew)
            latencies.append(Double(latency) / 1000)
            if stats {
                emit(
                    "rtc-testscreen: marker \(nextMarker) due \(due) ns: click scheduled \(signedMilliseconds(skew)) ms"
                        + " (playback latency \(hundredths(Double(latency) / 1000)) ms)\n",
                    to: 2
                )
            }
            position = writeClick(into: &samples, at: at, from: 0, frames: frames)
            nextMarker += 1
        }
        samples.withUnsafeBytes { raw in
            _ = pa_stream_write(stream, raw.baseAddress, frames * Self.bytesPerFrame, nil, 0, PA_SEEK_RELATIVE)
        }
    }

    /// Writes click frames from `from` into `samples` at frame `at`; returns the frame after it.
    private func writeClick(into samples: inout [Float], at: Int, from: Int, frames: Int) -> Int {
        let count = min(click.count - from, frames - at)
        for i in 0..<count {
            samples[2 * (at + i)] = click[from + i]
            samples[2 * (at + i) + 1] = click[from + i]
        }
        clickPosition = from + count < click.count ? from + count : nil
        return at + count
    }

    /// The monitor's samples, stamped as rtc-publish stamps them; a click's onset is the first
    /// sample above 0.3 after 50 ms below it.
    private func onRead(_ stream: OpaquePointer?) {
        guard let stream else { return }
        let now = monotonicNanoseconds()
        var latency: pa_usec_t = 0
        var negative: Int32 = 0
        let known = pa_stream_get_latency(stream, &latency, &negative) == 0
        var time = Int64(now) - (negative != 0 ? -1 : 1) * Int64(latency) * 1000
        while true {
            var data: UnsafeRawPointer?
            var length = 0
            guard pa_stream_peek(stream, &data, &length) == 0, length > 0 else { break }
            let frames = length / Self.bytesPerFrame
            if let data, known, first != .max {
                let samples = data.assumingMemoryBound(to: Float.self)
                for i in 0..<frames {
                    guard abs(samples[2 * i]) > 0.3 else {
                        quietFrames += 1
                        continue
                    }
                    if quietFrames > Self.rate / 20 {
                        let at = time + Int64(i) * 1_000_000_000 / Int64(Self.rate)
                        let marker = Int(((Double(at) - Double(first)) / Double(period)).rounded())
                        let due = Int64(first) + Int64(marker) * Int64(period)
                        let skew = Double(at - due) / 1e6
                        heard.append(skew)
                        emit(
                            "rtc-testscreen: marker \(marker) due \(due) ns: click in monitor \(signedMilliseconds(skew)) ms"
                                + " (record latency \(negative != 0 ? "-" : "")"
                                + "\(hundredths(Double(latency) / 1000)) ms)\n",
                            to: 2
                        )
                    }
                    quietFrames = 0
                }
            }
            pa_stream_drop(stream)
            time += Int64(frames) * 1_000_000_000 / Int64(Self.rate)
        }
    }
}
