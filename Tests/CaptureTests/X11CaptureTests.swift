import Capture
import Glibc
import Media
import TestSupport
import Testing

/// The pixel at (x, y) as 0xRRGGBB (bytes B, G, R, X in memory).
private func rgb(_ picture: BorrowedBGRXPicture, _ x: Int, _ y: Int) -> UInt32 {
    picture.base.loadUnaligned(fromByteOffset: y * picture.stride + x * 4, as: UInt32.self) & 0xFF_FFFF
}

/// The CaptureError `body` threw (nil when it threw nothing or something else).
private func captureError(_ body: () throws -> Void) -> CaptureError? {
    do {
        try body()
        return nil
    } catch {
        return error as? CaptureError
    }
}

/// Xvfb's screen as a file (`-fbdir`): an XWD header, its colour map, then the pixels, which the
/// server maps and draws in. Writing there changes the screen without a drawing request, so no
/// DAMAGE reports it: the change a compositor or driver can hide from DAMAGE.
private struct Framebuffer {
    let path: String
    let width: Int
    let height: Int
    private let offset: Int
    private let bytesPerLine: Int

    init(directory: String, width: Int, height: Int) throws {
        path = directory + "/Xvfb_screen0"
        self.width = width
        self.height = height
        let header = try Self.read(path, at: 0, count: 100)
        // XWDFileHeader: big-endian 32-bit fields; header_size is the 1st, bytes_per_line the
        // 13th, ncolors the 20th; each XWDColor after the header is 12 bytes.
        let field = { (index: Int) in header[(index * 4)..<(index * 4 + 4)].reduce(0) { $0 << 8 | Int($1) } }
        offset = field(0) + field(19) * 12
        bytesPerLine = field(12)
        #expect(field(11) == 32 && bytesPerLine >= width * 4, "Xvfb's framebuffer: 32 bits per pixel")
    }

    /// Paints `rect` with `color` (0xRRGGBB) behind the X server's back.
    func fill(_ rect: PixelRect, color: UInt32) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw XClientError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let row = [UInt8]((0..<rect.width).flatMap { _ in [UInt8](withUnsafeBytes(of: color.littleEndian) { $0 }) })
        for y in rect.y..<(rect.y + rect.height) {
            let place = off_t(offset + y * bytesPerLine + rect.x * 4)
            guard pwrite(fd, row, row.count, place) == row.count else { throw XClientError("pwrite \(path)") }
        }
    }

    /// Where `picture` differs from the screen (0xRRGGBB, the fourth byte aside): nil when
    /// nowhere, else the first such pixel.
    func firstDifference(_ picture: BorrowedBGRXPicture) throws -> (x: Int, y: Int)? {
        let screen = try Self.read(path, at: offset, count: bytesPerLine * height)
        for y in 0..<height {
            for x in 0..<width {
                let place = y * bytesPerLine + x * 4
                let pixel = UInt32(screen[place]) | UInt32(screen[place + 1]) << 8 | UInt32(screen[place + 2]) << 16
                if pixel != rgb(picture, x, y) { return (x, y) }
            }
        }
        return nil
    }

    private static func read(_ path: String, at offset: Int, count: Int) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw XClientError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        guard pread(fd, &bytes, count, off_t(offset)) == count else { throw XClientError("short read of \(path)") }
        return bytes
    }
}

private func makeCapture(
    _ server: XvfbServer,
    _ target: CaptureTarget = .screen,
    cursor: Bool = false,
    shm: Bool = true
)
    throws -> X11Capture
{
    try X11Capture(X11CaptureConfiguration(display: server.display, target: target, cursor: cursor, sharedMemory: shm))
}

@Suite("X11 capture on Xvfb", .serialized)
struct X11CaptureTests {
    @Test("screen pixels through MIT-SHM")
    func screenThroughSharedMemory() throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#102030"])
        let client = try XClient(display: server.display)
        _ = try client.window((100, 50, 80, 60), color: 0xFF0000)
        let capture = try makeCapture(server)
        #expect(capture.usesSharedMemory)
        #expect(capture.sharedMemoryFallbackReason == nil)
        #expect(capture.displayName == server.display)
        #expect(capture.screenSize == (640, 480))
        #expect(capture.targetDescription == "screen 640x480")
        let grab = try capture.grab(at: 1000)
        #expect(grab.picture.width == 640 && grab.picture.height == 480)
        #expect(grab.picture.stride >= 640 * 4)
        #expect(grab.picture.captureTime == 1000)
        #expect(rgb(grab.picture, 10, 10) == 0x102030)
        #expect(rgb(grab.picture, 639, 479) == 0x102030)
        #expect(rgb(grab.picture, 100, 50) == 0xFF0000)
        #expect(rgb(grab.picture, 179, 109) == 0xFF0000)
        #expect(rgb(grab.picture, 180, 110) == 0x102030)
        #expect(grab.changed == ChangedArea.whole(width: 640, height: 480))
        #expect(!grab.sizeChanged)
        #expect(capture.statistics.framesGrabbed == 1)
        #expect(capture.statistics.sharedMemory)
    }

    @Test("screen pixels through GetImage when the server has no MIT-SHM")
    func screenThroughGetImage() throws {
        let server = try XvfbServer(width: 640, height: 480, extraArguments: ["-extension", "MIT-SHM"])
        try server.run("xsetroot", ["-solid", "#00FF00"])
        let client = try XClient(display: server.display)
        _ = try client.window((600, 440, 40, 40), color: 0x0000FF)
        let capture = try makeCapture(server)
        #expect(!capture.usesSharedMemory)
        let reason = try #require(capture.sharedMemoryFallbackReason)
        #expect(reason.contains("MIT-SHM"))
        #expect(!reason.contains("\n"))
        let grab = try capture.grab(at: 1)
        #expect(rgb(grab.picture, 0, 0) == 0x00FF00)
        #expect(rgb(grab.picture, 620, 460) == 0x0000FF)
        #expect(rgb(grab.picture, 639, 479) == 0x0000FF)
        #expect(!capture.statistics.sharedMemory)
    }

    @Test("GetImage reads an area larger than one request allows in bands")
    func getImageBands() throws {
        // 2600x1700x4 bytes is more than BIG-REQUESTS' 16 MiB maximum: at least two bands.
        let server = try XvfbServer(width: 2600, height: 1700)
        try server.run("xsetroot", ["-solid", "#404040"])
        let client = try XClient(display: server.display)
        _ = try client.window((0, 0, 2600, 10), color: 0xFF0000)
        _ = try client.window((0, 1690, 2600, 10), color: 0x00FF00)
        let capture = try makeCapture(server, shm: false)
        #expect(!capture.usesSharedMemory)
        #expect(capture.sharedMemoryFallbackReason == nil)
        let grab = try capture.grab(at: 1)
        #expect(rgb(grab.picture, 2599, 0) == 0xFF0000)
        #expect(rgb(grab.picture, 1300, 850) == 0x404040)
        #expect(rgb(grab.picture, 2599, 1699) == 0x00FF00)
        #expect(rgb(grab.picture, 0, 1689) == 0x404040)
    }

    @Test("region and window strings")
    func parsing() throws {
        #expect(try CaptureTarget.parseRegion("320x240+10+20") == PixelRect(x: 10, y: 20, width: 320, height: 240))
        for bad in ["640x480", "0x10+0+0", "10x10+-1+0", "axb+0+0", "10x10+0+0+0", "", "10x+1+1"] {
            let error = captureError { _ = try CaptureTarget.parseRegion(bad) }
            #expect(error?.code == .badTarget, "\(bad)")
            #expect(error?.message.contains("'\(bad)'") == true)
        }
        #expect(try CaptureTarget.parseWindow("0x1a") == 26)
        #expect(try CaptureTarget.parseWindow("0X200001") == 0x20_0001)
        #expect(try CaptureTarget.parseWindow("123") == 123)
        for bad in ["zz", "0x", "-5", "0", "0x1ffffffff", "12 3"] {
            #expect(captureError { _ = try CaptureTarget.parseWindow(bad) }?.code == .badTarget, "\(bad)")
        }
    }

    @Test("a region is checked against the screen and grabbed at its place")
    func region() throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#000080"])
        let outside = captureError {
            _ = try X11Capture(
                X11CaptureConfiguration(
                    display: server.display,
                    target: .region(PixelRect(x: 400, y: 300, width: 320, height: 240))
                )
            )
        }
        #expect(outside?.code == .badTarget)
        #expect(outside?.message.contains("320x240+400+300") == true)
        #expect(outside?.message.contains("640x480") == true)

        let client = try XClient(display: server.display)
        _ = try client.window((200, 100, 10, 10), color: 0xFFFF00)
        let capture = try makeCapture(server, .region(PixelRect(x: 190, y: 95, width: 100, height: 50)))
        #expect(capture.targetDescription == "region 100x50+190+95")
        let grab = try capture.grab(at: 1)
        #expect(grab.picture.width == 100 && grab.picture.height == 50)
        #expect(rgb(grab.picture, 10, 5) == 0xFFFF00)
        #expect(rgb(grab.picture, 9, 5) == 0x000080)
    }

    @Test("connection errors name the display")
    func connectionErrors() {
        let refused = captureError { _ = try X11Capture(X11CaptureConfiguration(display: ":19999")) }
        #expect(refused?.code == .displayRefused)
        #expect(refused?.message.contains(":19999") == true)
        let malformed = captureError { _ = try X11Capture(X11CaptureConfiguration(display: "no display here")) }
        #expect(malformed?.code == .displayRefused)
    }

    @Test("a RandR monitor, its disappearance and return")
    func monitor() throws {
        let server = try XvfbServer(width: 1280, height: 720)
        try server.run("xrandr", ["--setmonitor", "A", "640/0x720/0+0+0", "none"])
        try server.run("xrandr", ["--setmonitor", "B", "640/0x720/0+640+0", "none"])
        let client = try XClient(display: server.display)
        _ = try client.window((0, 0, 640, 720), color: 0xFF0000)
        _ = try client.window((640, 0, 640, 720), color: 0x0000FF)

        let monitors = try X11Capture.monitors(display: server.display)
        let names = monitors.map(\.name)
        #expect(names.contains("A") && names.contains("B"))
        let indexOfB = try #require(names.firstIndex(of: "B"))
        #expect(monitors[indexOfB].rect == PixelRect(x: 640, y: 0, width: 640, height: 720))

        let unknown = captureError { _ = try makeCapture(server, .monitor("C")) }
        #expect(unknown?.code == .badTarget)
        #expect(unknown?.message.contains("'C'") == true)
        #expect(unknown?.message.contains("'A'") == true && unknown?.message.contains("'B'") == true)

        let byIndex = try makeCapture(server, .monitor("\(indexOfB)"))
        #expect(byIndex.targetDescription == "monitor 'B' 640x720+640+0")

        let capture = try makeCapture(server, .monitor("B"))
        #expect(capture.targetDescription == "monitor 'B' 640x720+640+0")
        var grab = try capture.grab(at: 1)
        #expect(grab.picture.width == 640 && grab.picture.height == 720)
        #expect(rgb(grab.picture, 0, 0) == 0x0000FF)
        #expect(rgb(grab.picture, 639, 719) == 0x0000FF)

        try server.run("xrandr", ["--delmonitor", "B"])
        grab = try capture.grab(at: 2)
        #expect(grab.sizeChanged)
        #expect(grab.picture.width == 1280 && grab.picture.height == 720)
        #expect(rgb(grab.picture, 0, 0) == 0xFF0000)
        #expect(capture.drainEvents().contains { $0.contains("'B' is gone") })
        #expect(capture.drainEvents().isEmpty)

        try server.run("xrandr", ["--setmonitor", "B", "640/0x720/0+640+0", "none"])
        grab = try capture.grab(at: 3)
        #expect(grab.sizeChanged)
        #expect(grab.picture.width == 640)
        #expect(rgb(grab.picture, 0, 0) == 0x0000FF)
        #expect(capture.drainEvents().contains { $0.contains("'B' is back") })
    }

    @Test("a window target follows moves and resizes, and its destruction ends the capture")
    func window() throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#000000"])
        let client = try XClient(display: server.display)
        let window = try client.window((50, 40, 200, 100), color: 0x00FF00, title: "probe")
        let hex = "0x" + String(window, radix: 16)

        let missing = captureError { _ = try makeCapture(server, .window(window + 1000)) }
        #expect(missing?.code == .badTarget)

        let capture = try makeCapture(server, .window(window))
        #expect(capture.targetDescription == "window \(hex) 'probe' 200x100+50+40")
        var grab = try capture.grab(at: 1)
        #expect(grab.picture.width == 200 && grab.picture.height == 100)
        #expect(rgb(grab.picture, 0, 0) == 0x00FF00 && rgb(grab.picture, 199, 99) == 0x00FF00)

        try client.configure(window, (300, 200, 150, 120))
        grab = try capture.grab(at: 2)
        #expect(grab.sizeChanged)
        #expect(grab.picture.width == 150 && grab.picture.height == 120)
        #expect(grab.changed == ChangedArea.whole(width: 150, height: 120))
        #expect(rgb(grab.picture, 0, 0) == 0x00FF00 && rgb(grab.picture, 149, 119) == 0x00FF00)
        #expect(capture.targetDescription == "window \(hex) 'probe' 150x120+300+200")
        #expect(capture.drainEvents().contains { $0.contains("resized to 150x120") })

        // Moved without resizing: same size, new place, what is on screen there.
        _ = try client.window((0, 0, 640, 100), color: 0x123456)
        try client.configure(window, (10, 20, 150, 120))
        grab = try capture.grab(at: 3)
        #expect(!grab.sizeChanged)
        #expect(rgb(grab.picture, 0, 0) == 0x123456)
        #expect(rgb(grab.picture, 0, 119) == 0x00FF00)

        try client.destroy(window)
        let gone = captureError { _ = try capture.grab(at: 4) }
        #expect(gone?.code == .windowGone)
        #expect(gone?.message == "window \(hex) was closed")
    }

    @Test("the server going away is displayGone")
    func displayGone() throws {
        let server = try XvfbServer(width: 320, height: 240)
        let capture = try makeCapture(server, cursor: true)
        _ = try capture.grab(at: 1)
        server.stop()
        let gone = captureError { _ = try capture.grab(at: 2) }
        #expect(gone?.code == .displayGone)
        #expect(gone?.message.contains("display \(server.display) is gone") == true)
    }

    @Test("changed area: whole, then nothing, then the drawn rectangle", arguments: [true, false])
    func changedArea(sharedMemory: Bool) throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#202020"])
        let client = try XClient(display: server.display)
        let capture = try makeCapture(server, shm: sharedMemory)
        var grab = try capture.grab(at: 1_000_000)
        #expect(grab.changed.fraction == 1)
        grab = try capture.grab(at: 2_000_000)
        #expect(grab.changed.isEmpty)
        #expect(grab.changed.fraction == 0)

        try client.fillRoot((100, 100, 50, 40), color: 0xFF00FF)
        grab = try capture.grab(at: 3_000_000)
        #expect(rgb(grab.picture, 120, 120) == 0xFF00FF)
        let bounds = grab.changed.bounds
        #expect(PixelRect(x: 100, y: 100, width: 50, height: 40).clipped(to: bounds).area == 50 * 40)
        // Blocks are 32x32: 96...160 by 96...160 covers it.
        #expect(bounds.clipped(to: PixelRect(x: 96, y: 96, width: 64, height: 64)) == bounds)
        #expect(grab.changed.fraction > 0 && grab.changed.fraction <= Double(64 * 64) / Double(640 * 480))
        #expect(capture.statistics.lastChangedFraction == grab.changed.fraction)

        grab = try capture.grab(at: 4_000_000)
        #expect(grab.changed.isEmpty)

        // Two separate changes stay two rectangles.
        try client.fillRoot((0, 0, 10, 10), color: 0x00FFFF)
        try client.fillRoot((600, 400, 10, 10), color: 0x00FFFF)
        grab = try capture.grab(at: 5_000_000)
        #expect(grab.changed.rects.count == 2)
        #expect(capture.statistics.framesGrabbed == 5)
    }

    @Test(
        "the returned picture is the reference: a whole repaint, partial damage, a change DAMAGE missed",
        arguments: [true, false]
    )
    func referenceIsThePicture(sharedMemory: Bool) throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer(width: 640, height: 480, extraArguments: ["-fbdir", directory.path])
        let screen = try Framebuffer(directory: directory.path, width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#202020"])
        let client = try XClient(display: server.display)
        let capture = try makeCapture(server, shm: sharedMemory)
        var time: UInt64 = 0
        func nextGrab() throws -> ScreenGrab {
            time += 33_000_000
            return try capture.grab(at: time)
        }
        var grab = try nextGrab()
        #expect(try screen.firstDifference(grab.picture) == nil)

        // The whole screen repainted: every block compared and changed (the buffers swap).
        try client.fillRoot((0, 0, 640, 480), color: 0x3060C0)
        grab = try nextGrab()
        #expect(grab.changed.fraction == 1 && grab.changed.bounds == PixelRect(x: 0, y: 0, width: 640, height: 480))
        #expect(try screen.firstDifference(grab.picture) == nil)

        // Repainted whole again with one new square: every block compared, one changed.
        try client.fillRoot((0, 0, 640, 480), color: 0x3060C0)
        try client.fillRoot((200, 200, 20, 20), color: 0xFFFF00)
        grab = try nextGrab()
        #expect(grab.changed.rects == [PixelRect(x: 192, y: 192, width: 32, height: 32)])
        #expect(try screen.firstDifference(grab.picture) == nil)

        // Partial damage, and a change beside it that DAMAGE never hears of: the damaged square
        // is copied into the reference; the hidden one is in the picture only once the stripe
        // (1/8 of the block rows a grab) has found it, and the picture never shows it unreported.
        let hidden = PixelRect(x: 520, y: 100, width: 8, height: 8)
        try screen.fill(hidden, color: 0x00FF00)
        try client.fillRoot((100, 400, 10, 10), color: 0xFF0000)
        grab = try nextGrab()
        #expect(rgb(grab.picture, 105, 405) == 0xFF0000)
        #expect(grab.changed.rects.contains(PixelRect(x: 96, y: 384, width: 32, height: 32)))
        let hiddenBlock = PixelRect(x: 512, y: 96, width: 32, height: 32)
        var found = grab.changed.rects.contains(hiddenBlock)
        #expect(rgb(grab.picture, 524, 104) == (found ? 0x00FF00 : 0x3060C0))
        var grabs = 1
        // The stripe visits one block row in eight at every `stripeEvery`-th quiet grab.
        while !found && grabs < 8 * X11Capture.stripeEvery {
            grab = try nextGrab()
            grabs += 1
            found = !grab.changed.isEmpty
            #expect(found ? grab.changed.rects == [hiddenBlock] : true)
            #expect(rgb(grab.picture, 524, 104) == (found ? 0x00FF00 : 0x3060C0))
        }
        #expect(found, "the stripe finds a hidden change within \(8 * X11Capture.stripeEvery) grabs")
        #expect(try screen.firstDifference(grab.picture) == nil)
        #expect(capture.statistics.changesMissedByDamage == 0)
        // The next grab's damage does not cover it either: a miss, and everything is compared for 2 s.
        grab = try nextGrab()
        #expect(grab.changed.isEmpty)
        #expect(capture.statistics.changesMissedByDamage == 1)
        let quiet = capture.statistics.quietGrabs
        try screen.fill(PixelRect(x: 10, y: 10, width: 4, height: 4), color: 0xFFFFFF)
        grab = try nextGrab()
        #expect(capture.statistics.quietGrabs == quiet)
        #expect(grab.changed.rects == [PixelRect(x: 0, y: 0, width: 32, height: 32)])
        #expect(try screen.firstDifference(grab.picture) == nil)
        #expect(capture.statistics.framesGrabbed == 5 + grabs)
    }

    @Test("a still screen is read a stripe at a time, one grab in four; a change or a pointer move reads it whole")
    func quietGrabs() throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#202020", "-cursor_name", "left_ptr"])
        try server.run("xdotool", ["mousemove", "300", "300"])
        let client = try XClient(display: server.display)
        let capture = try makeCapture(server, cursor: true)
        _ = try capture.grab(at: 1_000_000)
        #expect(capture.statistics.quietGrabs == 0, "the first grab reads everything")
        for index in 2...17 {
            let grab = try capture.grab(at: UInt64(index) * 1_000_000)
            #expect(grab.changed.isEmpty)
            #expect(rgb(grab.picture, 10, 470) == 0x202020 && rgb(grab.picture, 630, 10) == 0x202020)
        }
        // 16 quiet grabs; one in four read a stripe, the others nothing.
        #expect(capture.statistics.quietGrabs == 16)
        #expect(capture.statistics.stripeReads == 16 / X11Capture.stripeEvery)

        // A change DAMAGE reports: read whole, the picture has it, the next grab is quiet again.
        try client.fillRoot((100, 100, 50, 40), color: 0xFF00FF)
        var grab = try capture.grab(at: 18_000_000)
        #expect(capture.statistics.quietGrabs == 16)
        #expect(rgb(grab.picture, 120, 120) == 0xFF00FF)
        #expect(PixelRect(x: 100, y: 100, width: 50, height: 40).clipped(to: grab.changed.bounds).area == 50 * 40)
        grab = try capture.grab(at: 19_000_000)
        #expect(grab.changed.isEmpty && capture.statistics.quietGrabs == 17)
        // The rectangle stays in what a quiet grab hands on (the segment keeps the last picture).
        #expect(rgb(grab.picture, 120, 120) == 0xFF00FF)

        // The pointer moves: read whole; its old and new places are the change.
        try server.run("xdotool", ["mousemove", "400", "200"])
        grab = try capture.grab(at: 20_000_000)
        #expect(capture.statistics.quietGrabs == 17)
        #expect(!grab.changed.isEmpty)
        grab = try capture.grab(at: 21_000_000)
        #expect(grab.changed.isEmpty && capture.statistics.quietGrabs == 18)
    }

    @Test("the cursor sprite follows the pointer and is not drawn into the picture")
    func cursor() throws {
        let server = try XvfbServer(width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#303030"])
        try server.run("xdotool", ["mousemove", "200", "150"])
        let capture = try makeCapture(server, cursor: true)
        var grab = try capture.grab(at: 1)
        var first = try #require(grab.cursor)
        if first.width <= 1 || first.height <= 1 {
            // An empty root cursor: give the root a real one.
            try server.run("xsetroot", ["-cursor_name", "left_ptr"])
            grab = try capture.grab(at: 2)
            first = try #require(grab.cursor)
        }
        #expect(first.width > 1 && first.height > 1)
        #expect(first.pixels.count == first.width * first.height)
        #expect(first.pixels.contains { $0 >> 24 != 0 })
        #expect(rgb(grab.picture, 200, 150) == 0x303030)

        try server.run("xdotool", ["mousemove", "260", "190"])
        grab = try capture.grab(at: 3)
        let second = try #require(grab.cursor)
        #expect(second.x - first.x == 60 && second.y - first.y == 40)
        #expect(second.serial == first.serial)
        let bounds = grab.changed.bounds
        #expect(first.rect.clipped(to: bounds) == first.rect)
        #expect(second.rect.clipped(to: bounds) == second.rect)

        grab = try capture.grab(at: 4)
        #expect(grab.changed.isEmpty)

        // Relative to a region's corner; nil once the pointer leaves it.
        let region = try makeCapture(server, .region(PixelRect(x: 100, y: 100, width: 200, height: 200)), cursor: true)
        let inside = try #require(try region.grab(at: 1).cursor)
        #expect(inside.x == second.x - 100 && inside.y == second.y - 100)
        try server.run("xdotool", ["mousemove", "500", "400"])
        grab = try region.grab(at: 2)
        #expect(grab.cursor == nil)
        #expect(!grab.changed.isEmpty)

        let off = try makeCapture(server, cursor: false)
        #expect(try off.grab(at: 1).cursor == nil)
    }
}

extension X11CaptureTests {
    /// The changed blocks converted as the comparison finds them (rtc-publish's path) give the
    /// planes a whole conversion of the returned picture gives, byte for byte: after a whole
    /// repaint (the buffers swap), partial damage (blocks copied into the reference), a pointer
    /// move (its old and new places converted after the comparison), a quiet grab (nothing), a
    /// change DAMAGE missed found by the stripe, and with shared memory or GetImage.
    @Test("changes converted during the comparison equal a whole conversion", arguments: [true, false])
    func changesConvertedDuringTheComparison(sharedMemory: Bool) throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer(width: 640, height: 480, extraArguments: ["-fbdir", directory.path])
        let screen = try Framebuffer(directory: directory.path, width: 640, height: 480)
        try server.run("xsetroot", ["-solid", "#202020", "-cursor_name", "left_ptr"])
        try server.run("xdotool", ["mousemove", "300", "200"])
        let client = try XClient(display: server.display)
        let capture = try makeCapture(server, cursor: true, shm: sharedMemory)
        let fused = ScreenConverter()
        capture.converter = (fused, 640, 480)
        var time: UInt64 = 0
        var convertedGrabs = 0
        /// One grab as ScreenCaptureLoop takes it, against a fresh converter's whole conversion.
        func step(_ what: String) throws {
            time += 33_000_000
            let grab = try capture.grab(at: time)
            let frame: VideoFrame
            if grab.converted {
                convertedGrabs += 1
                frame = try fused.finishChanges(grab.picture, cursor: grab.cursor)
            } else if grab.changed.isEmpty, let last = try fused.lastPicture(captureTime: time) {
                frame = last
            } else {
                frame = try fused.convert(
                    grab.picture,
                    cursor: grab.cursor,
                    changed: grab.changed,
                    width: 640,
                    height: 480
                )
            }
            let whole = try ScreenConverter().convert(grab.picture, cursor: grab.cursor, width: 640, height: 480)
            #expect(frame.y == whole.y && frame.u == whole.u && frame.v == whole.v, "\(what): planes differ")
        }
        try step("the first picture")
        try client.fillRoot((0, 0, 640, 480), color: 0x3060C0)
        try step("a whole repaint")
        try client.fillRoot((0, 0, 640, 480), color: 0x3060C0)
        try client.fillRoot((200, 200, 20, 20), color: 0xFFFF00)
        try step("a whole repaint with one new square")
        try client.fillRoot((100, 400, 70, 10), color: 0xFF0000)
        try client.fillRoot((333, 17, 5, 90), color: 0x00FF00)
        try step("partial damage")
        try server.run("xdotool", ["mousemove", "420", "310"])
        try step("a pointer move")
        try client.fillRoot((410, 300, 40, 40), color: 0xFFFFFF)
        try step("a change under the pointer")
        try step("a quiet grab")
        try screen.fill(PixelRect(x: 520, y: 100, width: 8, height: 8), color: 0x00FF00)
        for index in 0..<(8 * X11Capture.stripeEvery) { try step("quiet grab \(index) with a hidden change") }
        #expect(convertedGrabs >= 4, "\(convertedGrabs) grabs converted during the comparison")
    }
}
