import CXCB
import Glibc
import Media

public struct X11CaptureConfiguration: Sendable {
    /// nil: `DISPLAY`.
    public var display: String?
    public var target: CaptureTarget
    /// Report the pointer's sprite (XFIXES); it is never drawn into the picture.
    public var cursor: Bool
    /// false forces the GetImage path (benchmarks, tests).
    public var sharedMemory: Bool

    public init(display: String? = nil, target: CaptureTarget = .screen, cursor: Bool = true, sharedMemory: Bool = true)
    {
        self.display = display
        self.target = target
        self.cursor = cursor
        self.sharedMemory = sharedMemory
    }
}

/// One grab. Borrowed: the picture's memory is valid until the next `grab` or the capture's end.
public struct ScreenGrab {
    /// `captureTime` is the time passed to `grab`.
    public var picture: BorrowedBGRXPicture
    /// nil when the cursor is off, hidden or outside the target; placed relative to the picture.
    public var cursor: CursorSprite?
    /// Since the previous grab; everything on the first grab and after a size change.
    public var changed: ChangedArea
    /// The target's size differs from the previous grab's.
    public var sizeChanged: Bool
    /// The whole changed area (the cursor's places included) was converted into the capture's
    /// `converter` during the grab: the caller finishes the picture there (`finishChanges`).
    public var converted: Bool

    public init(
        picture: BorrowedBGRXPicture,
        cursor: CursorSprite?,
        changed: ChangedArea,
        sizeChanged: Bool,
        converted: Bool = false
    ) {
        self.picture = picture
        self.cursor = cursor
        self.changed = changed
        self.sizeChanged = sizeChanged
        self.converted = converted
    }
}

public struct CaptureStatistics: Sendable {
    public var framesGrabbed = 0
    public var lastGrabNanoseconds: UInt64 = 0
    public var totalGrabNanoseconds: UInt64 = 0
    public var sharedMemory = false
    public var damageEvents = 0
    /// Changed blocks the comparison found outside the damage region.
    public var changesMissedByDamage = 0
    /// Of the grab time, the block comparison's (confirming what changed), ns over all grabs.
    public var totalCompareNanoseconds: UInt64 = 0
    /// This thread's CPU time in grabs, ns over all grabs: the grab's wall time less the waits
    /// on the X server (which copies the picture into a segment on its own CPU).
    public var totalGrabCPUNanoseconds: UInt64 = 0
    public var lastChangedFraction = 0.0
    /// Quiet grabs: DAMAGE reported nothing, the pointer and the area stayed, and damage missed
    /// nothing in the last 2 s. They read only the comparison's stripe, or nothing at all.
    public var quietGrabs = 0
    /// Of them, those that read the stripe (one in `X11Capture.stripeEvery`).
    public var stripeReads = 0
    /// The changed blocks converted during the comparison (`X11Capture.converter`), ns over all
    /// grabs, and the grabs that did: counted as conversion, not in the grab or comparison times.
    public var totalConvertNanoseconds: UInt64 = 0
    public var conversions = 0

    public init() {}
}

/// X11 screen capture through XCB: MIT-SHM into two long-lived segments (GetImage into two
/// buffers when it cannot attach), the XFIXES cursor as a sprite, DAMAGE as a hint and a block
/// comparison as the truth of what changed. Always grabs from the root window, so windows need no
/// compositor.
///
/// The reference is the picture: one buffer holds exactly the picture last returned, which the
/// comparison takes as its reference, and each grab reads into the other. When every block was
/// compared the two swap places, so a screen that changes everywhere costs no copy; otherwise
/// the changed blocks are copied into the reference, which is returned.
///
/// Not Sendable: one thread (the caller's capture thread) uses it.
public final class X11Capture {
    private let connection: XConnection
    private var c: OpaquePointer { connection.handle }
    private var root: xcb_window_t { connection.root }
    private let configuration: X11CaptureConfiguration

    public var displayName: String { connection.name }
    public private(set) var screenSize: (width: Int, height: Int)
    public private(set) var targetDescription: String
    /// The size of what is captured now (the next grab's picture, unless the target changes).
    public var targetSize: (width: Int, height: Int) { (area.width, area.height) }
    public private(set) var usesSharedMemory = false
    /// Why SHM was wanted but not used, as one line.
    public private(set) var sharedMemoryFallbackReason: String?
    public private(set) var statistics = CaptureStatistics()
    /// Human lines about target changes since the last `drainEvents()` (at most `maximumEvents`).
    public private(set) var events: [String] = []
    public static let maximumEvents = 32

    // Extensions: first event numbers, nil when absent or unused.
    private var damageEventBase: UInt8?
    private var cursorEventBase: UInt8?
    private var damage: xcb_damage_damage_t = 0
    private var damageRegion: xcb_xfixes_region_t = 0
    private let maximumRequestBytes: Int

    // Target state.
    private var monitorAtom: xcb_atom_t?
    private var monitorIndex: Int?
    private var monitorName: String
    private var monitorPresent = true
    private var windowTitle = ""
    private var area = PixelRect(x: 0, y: 0, width: 0, height: 0)
    private var offScreen = false

    /// Memory a picture is read into: an MIT-SHM segment the server writes, or an allocation
    /// GetImage replies are copied into (`segment` nil).
    private struct PixelBuffer {
        var address: UnsafeMutableRawPointer
        var segment: xcb_shm_seg_t?
    }

    /// The two buffers of the captured area, `capacity` bytes each.
    private struct PictureBuffers {
        /// Exactly the picture last returned: what the comparison compares against.
        var reference: PixelBuffer
        /// Where the next picture is read.
        var scratch: PixelBuffer
        var capacity: Int
    }

    // Pixels: made at the start with SHM, at the first grab without.
    private var buffers: PictureBuffers?
    /// Quiet grabs in a row (`stripeEvery`).
    private var quietStreak = 0
    private var bandCookies: [xcb_get_image_cookie_t] = []
    private var stripeCookies: [xcb_shm_get_image_cookie_t] = []

    /// Where the changed blocks are converted during the comparison, at the encoder's size: set
    /// by whoever converts the grabs (rtc-publish), so the pixels are read there while in this
    /// core's cache rather than from memory afterwards. nil when the pictures are copied out
    /// (rtc-capture) or converted otherwise.
    public var converter: (converter: ScreenConverter, width: Int, height: Int)?

    // Change tracking.
    private let differ = BlockDiffer()
    private var changed = ChangedArea()
    private var lastMissTime: UInt64?
    private var hasGrabbed = false

    // Cursor: the shape is fetched again only when XFIXES says it changed.
    private var cursorDirty = true
    private var cursorPixels: [UInt32] = []
    private var cursorWidth = 0
    private var cursorHeight = 0
    private var cursorHotX = 0
    private var cursorHotY = 0
    private var cursorSerial: UInt32 = 0
    private var lastCursor: (rect: PixelRect, serial: UInt32)?

    public init(_ configuration: X11CaptureConfiguration) throws(CaptureError) {
        Self.ignoreBrokenPipe()
        self.configuration = configuration
        let connection = try XConnection(display: configuration.display)
        self.connection = connection
        let screen = connection.screen.pointee
        screenSize = (Int(screen.width_in_pixels), Int(screen.height_in_pixels))
        targetDescription = ""
        monitorName = ""
        maximumRequestBytes = Int(xcb_get_maximum_request_length(connection.handle)) * 4
        try Self.checkFormat(connection)
        try resolveTarget()
        try setUpExtensions()
        area = try locate(announce: false)
        if configuration.sharedMemory { setUpSharedMemory(bytes: area.area * 4) }
        statistics.sharedMemory = usesSharedMemory
        xcb_flush(c)
    }

    deinit {
        releaseBuffers()
        if damage != 0 { xcb_damage_destroy(c, damage) }
        if damageRegion != 0 { xcb_xfixes_destroy_region(c, damageRegion) }
        if xcb_connection_has_error(c) == 0 { xcb_flush(c) }
    }

    /// libxcb writes to its socket without MSG_NOSIGNAL on Linux: a dead X server would kill the
    /// process with SIGPIPE instead of giving `displayGone`. A handler the program set is kept.
    private static func ignoreBrokenPipe() {
        if let previous = signal(SIGPIPE, SIG_IGN), unsafeBitCast(previous, to: Int.self) != 1 {
            signal(SIGPIPE, previous)
        }
    }

    /// Bytes B, G, R, X are what the consumer reads: depth 24 or 32, 32 bits per pixel, least
    /// significant byte first, red in 0xFF0000 (X11 protocol, "Connection Setup").
    private static func checkFormat(_ connection: XConnection) throws(CaptureError) {
        let screen = connection.screen.pointee
        let depth = screen.root_depth
        guard let setup = xcb_get_setup(connection.handle) else {
            throw CaptureError(.x11, "no connection setup from \(connection.name)")
        }
        var bitsPerPixel: UInt8 = 0
        var formats = xcb_setup_pixmap_formats_iterator(setup)
        while formats.rem > 0, let format = formats.data {
            if format.pointee.depth == depth { bitsPerPixel = format.pointee.bits_per_pixel }
            xcb_format_next(&formats)
        }
        var redMask: UInt32 = 0
        var depths = xcb_screen_allowed_depths_iterator(connection.screen)
        while depths.rem > 0, let allowed = depths.data {
            var visuals = xcb_depth_visuals_iterator(allowed)
            while visuals.rem > 0, let visual = visuals.data {
                if visual.pointee.visual_id == screen.root_visual { redMask = visual.pointee.red_mask }
                xcb_visualtype_next(&visuals)
            }
            xcb_depth_next(&depths)
        }
        let lsbFirst = setup.pointee.image_byte_order == UInt8(XCB_IMAGE_ORDER_LSB_FIRST.rawValue)
        guard depth == 24 || depth == 32, bitsPerPixel == 32, lsbFirst, redMask == 0xFF0000 else {
            throw CaptureError(
                .unsupportedFormat,
                "display \(connection.name) has depth \(depth), \(bitsPerPixel) bits per pixel, "
                    + "\(lsbFirst ? "LSB" : "MSB") first, red mask 0x\(String(redMask, radix: 16)); "
                    + "only depth 24/32 in 32-bit LSB-first BGRX is captured"
            )
        }
    }

    // MARK: - Target

    private func resolveTarget() throws(CaptureError) {
        switch configuration.target {
        case .screen:
            break
        case .region(let region):
            let screen = PixelRect(x: 0, y: 0, width: screenSize.width, height: screenSize.height)
            guard !region.isEmpty, region.clipped(to: screen) == region else {
                throw CaptureError(
                    .badTarget,
                    "region \(region) does not fit the \(screen.width)x\(screen.height) screen of display \(displayName)"
                )
            }
        case .monitor(let wanted):
            guard try connection.hasMonitors() else {
                throw CaptureError(
                    .extensionMissing,
                    "display \(displayName) has no RandR 1.5, so it has no monitors to capture; capture the screen or a region"
                )
            }
            let monitors = try Self.named(try connection.monitors(), connection)
            if let index = monitors.firstIndex(where: { $0.name == wanted }) {
                monitorAtom = try connection.internAtom(wanted, onlyIfExists: true)
                monitorName = monitors[index].name
            } else if let index = Int(wanted), index >= 0, index < monitors.count, wanted.allSatisfy(\.isNumber) {
                monitorIndex = index
                monitorName = monitors[index].name
            } else {
                let list = monitors.enumerated().map { "\($0.offset) '\($0.element.name)' \($0.element.rect)" }
                throw CaptureError(
                    .badTarget,
                    "no monitor '\(wanted)' on display \(displayName); monitors: "
                        + (list.isEmpty ? "none" : list.joined(separator: ", "))
                )
            }
        case .window(let window):
            let hex = "0x" + String(window, radix: 16)
            let cookie = xcb_translate_coordinates(c, window, root, 0, 0)
            let name = displayName
            let reply = try connection.reply(
                "TranslateCoordinates",
                mapError: { code in
                    code == 3 || code == 9 ? CaptureError(.badTarget, "no window \(hex) on display \(name)") : nil
                },
                { xcb_translate_coordinates_reply(c, cookie, $0) }
            )
            free(reply)
            windowTitle = try title(of: window)
        }
    }

    private static func named(
        _ monitors: [(atom: xcb_atom_t, rect: PixelRect)],
        _ connection: XConnection
    ) throws(CaptureError) -> [(name: String, rect: PixelRect)] {
        var result: [(name: String, rect: PixelRect)] = []
        for monitor in monitors { result.append((try connection.atomName(monitor.atom), monitor.rect)) }
        return result
    }

    /// `_NET_WM_NAME` (UTF-8), else `WM_NAME`; "" when neither is set.
    private func title(of window: xcb_window_t) throws(CaptureError) -> String {
        let netName = try connection.internAtom("_NET_WM_NAME", onlyIfExists: true)
        for atom in [netName, XCB_ATOM_WM_NAME.rawValue] where atom != 0 {
            let cookie = xcb_get_property(c, 0, window, atom, XCB_GET_PROPERTY_TYPE_ANY.rawValue, 0, 256)
            var error: UnsafeMutablePointer<xcb_generic_error_t>?
            guard let reply = xcb_get_property_reply(c, cookie, &error) else {
                free(error)
                continue
            }
            defer { free(reply) }
            let length = Int(xcb_get_property_value_length(reply))
            if reply.pointee.format == 8, length > 0, let value = xcb_get_property_value(reply) {
                return String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
            }
        }
        return ""
    }

    /// Where the target is now, in root coordinates, clipped to the screen. Also refreshes
    /// `screenSize` and `targetDescription`, and notes a monitor coming or going.
    private func locate(announce: Bool) throws(CaptureError) -> PixelRect {
        let rootCookie = xcb_get_geometry(c, root)
        var windowCookies: (xcb_get_geometry_cookie_t, xcb_translate_coordinates_cookie_t)?
        var monitorsCookie: xcb_randr_get_monitors_cookie_t?
        switch configuration.target {
        case .window(let window):
            windowCookies = (xcb_get_geometry(c, window), xcb_translate_coordinates(c, window, root, 0, 0))
        case .monitor:
            monitorsCookie = xcb_randr_get_monitors(c, root, 1)
        case .screen, .region:
            break
        }
        // Every reply is taken before any is checked, so none is left queued in libxcb.
        var rootError: UnsafeMutablePointer<xcb_generic_error_t>?
        let rootReply = xcb_get_geometry_reply(c, rootCookie, &rootError)
        var geometryError: UnsafeMutablePointer<xcb_generic_error_t>?
        let geometryReply = windowCookies.flatMap { xcb_get_geometry_reply(c, $0.0, &geometryError) }
        var translateError: UnsafeMutablePointer<xcb_generic_error_t>?
        let translateReply = windowCookies.flatMap { xcb_translate_coordinates_reply(c, $0.1, &translateError) }
        var monitorsError: UnsafeMutablePointer<xcb_generic_error_t>?
        let monitorsReply = monitorsCookie.flatMap { xcb_randr_get_monitors_reply(c, $0, &monitorsError) }
        defer {
            free(rootReply)
            free(geometryReply)
            free(translateReply)
            free(monitorsReply)
            free(rootError)
            free(geometryError)
            free(translateError)
            free(monitorsError)
        }
        let rootGeometry = try connection.check(rootReply, rootError, "GetGeometry(root)")
        let screen = PixelRect(
            x: 0,
            y: 0,
            width: Int(rootGeometry.pointee.width),
            height: Int(rootGeometry.pointee.height)
        )
        if announce && (screen.width != screenSize.width || screen.height != screenSize.height) {
            note("screen is now \(screen.width)x\(screen.height)")
        }
        screenSize = (screen.width, screen.height)

        var wanted: PixelRect
        switch configuration.target {
        case .screen:
            wanted = screen
            targetDescription = "screen \(screen.width)x\(screen.height)"
        case .region(let region):
            wanted = region
        case .window(let window):
            let hex = "0x" + String(window, radix: 16)
            let gone: (UInt8) -> CaptureError? = { code in
                code == 3 || code == 9 ? CaptureError(.windowGone, "window \(hex) was closed") : nil
            }
            let geometry = try connection.check(geometryReply, geometryError, "GetGeometry(window)", mapError: gone)
            let origin = try connection.check(translateReply, translateError, "TranslateCoordinates", mapError: gone)
            wanted = PixelRect(
                x: Int(origin.pointee.dst_x),
                y: Int(origin.pointee.dst_y),
                width: Int(geometry.pointee.width),
                height: Int(geometry.pointee.height)
            )
            if announce && (wanted.width != area.width || wanted.height != area.height) && !offScreen {
                note("window \(hex) resized to \(wanted.width)x\(wanted.height)")
            }
        case .monitor:
            let monitors = try connection.check(monitorsReply, monitorsError, "RRGetMonitors")
            var found: PixelRect?
            var iterator = xcb_randr_get_monitors_monitors_iterator(monitors)
            var index = 0
            while iterator.rem > 0, let info = iterator.data {
                if index == monitorIndex || (monitorAtom != nil && info.pointee.name == monitorAtom) {
                    found = XConnection.rect(info.pointee)
                    break
                }
                index += 1
                xcb_randr_monitor_info_next(&iterator)
            }
            if let found {
                if !monitorPresent { note("monitor '\(monitorName)' is back; capturing \(found)") }
                monitorPresent = true
                wanted = found
            } else {
                if monitorPresent { note("monitor '\(monitorName)' is gone; capturing the whole screen") }
                monitorPresent = false
                wanted = screen
            }
        }
        var clipped = wanted.clipped(to: screen)
        if clipped.isEmpty {
            // Wholly off the screen: keep the size, slide it onto the screen.
            let width = min(max(wanted.width, 1), screen.width)
            let height = min(max(wanted.height, 1), screen.height)
            clipped = PixelRect(
                x: min(max(wanted.x, 0), screen.width - width),
                y: min(max(wanted.y, 0), screen.height - height),
                width: width,
                height: height
            )
            if !offScreen { note("the target \(wanted) is off the \(screen.width)x\(screen.height) screen") }
            offScreen = true
        } else {
            offScreen = false
        }
        switch configuration.target {
        case .screen: break
        case .region: targetDescription = "region \(clipped)"
        case .window(let window):
            targetDescription = "window 0x\(String(window, radix: 16)) '\(windowTitle)' \(clipped)"
        case .monitor:
            targetDescription =
                monitorPresent
                ? "monitor '\(monitorName)' \(clipped)" : "monitor '\(monitorName)' (gone): screen \(clipped)"
        }
        return clipped
    }

    private func note(_ line: String) {
        if events.count >= Self.maximumEvents { events.removeFirst() }
        events.append(line)
    }

    /// The lines noted since the last call.
    public func drainEvents() -> [String] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    // MARK: - Extensions

    private func setUpExtensions() throws(CaptureError) {
        let xfixes = try connection.queryExtension("XFIXES")
        let damageBase = try connection.queryExtension("DAMAGE")
        var xfixesReady = false
        if xfixes != nil {
            // The server ignores XFIXES requests from a client that has not stated its version.
            let cookie = xcb_xfixes_query_version(c, 4, 0)
            let reply = try connection.reply("XFixesQueryVersion") { xcb_xfixes_query_version_reply(c, cookie, $0) }
            xfixesReady = reply.pointee.major_version >= 4
            free(reply)
        }
        if configuration.cursor {
            if xfixesReady, let xfixes {
                xcb_xfixes_select_cursor_input(c, root, UInt32(XCB_XFIXES_CURSOR_NOTIFY_MASK_DISPLAY_CURSOR.rawValue))
                cursorEventBase = xfixes
            } else {
                note("XFIXES 4 is missing on display \(displayName): no cursor")
            }
        }
        if let damageBase, xfixesReady {
            let cookie = xcb_damage_query_version(c, 1, 1)
            free(try connection.reply("DamageQueryVersion") { xcb_damage_query_version_reply(c, cookie, $0) })
            damageRegion = xcb_generate_id(c)
            xcb_xfixes_create_region(c, damageRegion, 0, nil)
            damage = xcb_generate_id(c)
            xcb_damage_create(c, damage, root, UInt8(XCB_DAMAGE_REPORT_LEVEL_NON_EMPTY.rawValue))
            damageEventBase = damageBase
        } else {
            note("DAMAGE is missing on display \(displayName): every block is compared each grab")
        }
    }

    /// Two segments for the whole capture, each removed from the system as soon as the server
    /// has attached it, so a crash leaks nothing. Falls back to GetImage, saying why.
    private func setUpSharedMemory(bytes: Int) {
        guard extensionPresent("MIT-SHM") else {
            fallBack("display \(displayName) has no MIT-SHM extension; using GetImage (slower)")
            return
        }
        if let reason = makeSegments(bytes: max(bytes, 4)) {
            fallBack(reason)
            return
        }
        usesSharedMemory = true
    }

    private func extensionPresent(_ name: String) -> Bool {
        // `try?` flattens: nil when the query failed or the extension is absent.
        (try? connection.queryExtension(name)) != nil
    }

    private func fallBack(_ reason: String) {
        sharedMemoryFallbackReason = reason
        usesSharedMemory = false
        statistics.sharedMemory = false
    }

    /// Both buffers as segments; nil when both are attached, else the reason (neither is kept).
    private func makeSegments(bytes: Int) -> String? {
        var made: [PixelBuffer] = []
        do throws(CaptureError) {
            while made.count < 2 { made.append(try makeSegment(bytes: bytes)) }
        } catch {
            for buffer in made { release(buffer) }
            return error.message
        }
        buffers = PictureBuffers(reference: made[0], scratch: made[1], capacity: bytes)
        return nil
    }

    /// One attached segment; the error's message says why it could not be.
    private func makeSegment(bytes: Int) throws(CaptureError) -> PixelBuffer {
        let id = shmget(0 /* IPC_PRIVATE */, bytes, IPC_CREAT | 0o600)
        guard id >= 0 else {
            throw CaptureError(
                .x11,
                "shmget of \(bytes) bytes failed (\(String(cString: strerror(errno)))); using GetImage (slower)"
            )
        }
        guard let address = shmat(id, nil, 0), Int(bitPattern: address) != -1 else {
            let reason = String(cString: strerror(errno))
            shmctl(id, IPC_RMID, nil)
            throw CaptureError(.x11, "shmat failed (\(reason)); using GetImage (slower)")
        }
        let segmentID = xcb_generate_id(c)
        let error = xcb_request_check(c, xcb_shm_attach_checked(c, segmentID, UInt32(id), 0))
        shmctl(id, IPC_RMID, nil)
        if let error {
            let code = error.pointee.error_code
            free(error)
            shmdt(address)
            throw CaptureError(
                .x11,
                "the X server could not attach our shared memory (\(XConnection.errorName(code)); "
                    + "a remote display or another IPC namespace?); using GetImage (slower)"
            )
        }
        if xcb_connection_has_error(c) != 0 {
            shmdt(address)
            throw CaptureError(.x11, "display \(displayName) went away while attaching shared memory")
        }
        return PixelBuffer(address: address, segment: segmentID)
    }

    /// Both buffers hold `bytes`. Re-made only when the area outgrows them, which is a new size,
    /// so the next picture is taken as the reference anyway; with SHM as segments again, and if
    /// they cannot be made, GetImage from then on.
    private func ensureBuffers(bytes: Int) {
        if let buffers, buffers.capacity >= bytes { return }
        releaseBuffers()
        if usesSharedMemory {
            guard let reason = makeSegments(bytes: bytes) else { return }
            fallBack(reason)
        }
        buffers = PictureBuffers(
            reference: PixelBuffer(address: .allocate(byteCount: bytes, alignment: 64), segment: nil),
            scratch: PixelBuffer(address: .allocate(byteCount: bytes, alignment: 64), segment: nil),
            capacity: bytes
        )
    }

    private func releaseBuffers() {
        guard let buffers else { return }
        release(buffers.reference)
        release(buffers.scratch)
        self.buffers = nil
    }

    private func release(_ buffer: PixelBuffer) {
        if let segment = buffer.segment {
            xcb_shm_detach(c, segment)
            shmdt(buffer.address)
        } else {
            buffer.address.deallocate()
        }
    }

    // MARK: - Grab

    public func grab(at captureTime: UInt64) throws(CaptureError) -> ScreenGrab {
        let started = Self.now()
        let startedCPU = Self.threadCPU()
        try drainXEvents()
        // Requests whose replies ride along with the geometry's: damage is subtracted before
        // the image is read, so a change after this point shows up in the next grab's region.
        let pointerCookie = cursorEventBase != nil ? xcb_query_pointer(c, root) : nil
        let cursorCookie = cursorEventBase != nil && cursorDirty ? xcb_xfixes_get_cursor_image(c) : nil
        var regionCookie: xcb_xfixes_fetch_region_cookie_t?
        if damageEventBase != nil {
            xcb_damage_subtract(c, damage, 0, damageRegion)
            regionCookie = xcb_xfixes_fetch_region(c, damageRegion)
        }
        var pointerError: UnsafeMutablePointer<xcb_generic_error_t>?
        let pointerReply = pointerCookie.flatMap { xcb_query_pointer_reply(c, $0, &pointerError) }
        var cursorError: UnsafeMutablePointer<xcb_generic_error_t>?
        let cursorReply = cursorCookie.flatMap { xcb_xfixes_get_cursor_image_reply(c, $0, &cursorError) }
        var regionError: UnsafeMutablePointer<xcb_generic_error_t>?
        let regionReply = regionCookie.flatMap { xcb_xfixes_fetch_region_reply(c, $0, &regionError) }
        defer {
            free(pointerReply)
            free(cursorReply)
            free(regionReply)
            free(pointerError)
            free(cursorError)
            free(regionError)
        }
        let previousArea = area
        let newArea: PixelRect
        newArea = try locate(announce: true)
        area = newArea
        let sizeChanged = hasGrabbed && (newArea.width != previousArea.width || newArea.height != previousArea.height)

        let pointer = pointerCookie == nil ? nil : try connection.check(pointerReply, pointerError, "QueryPointer")
        if cursorCookie != nil {
            let image = try connection.check(cursorReply, cursorError, "XFixesGetCursorImage")
            takeCursor(image)
        }
        let region = regionCookie == nil ? nil : try connection.check(regionReply, regionError, "XFixesFetchRegion")
        let cursor = pointer.flatMap { sprite(at: $0.pointee, in: newArea) }
        // Read into the scratch buffer; the reference still holds the last picture. A quiet
        // grab reads only the stripe, and only one in `stripeEvery`: in between nothing is read
        // or compared, and the reference is the picture.
        let fresh: BorrowedBGRXPicture?
        if let region,
            isQuiet(region: region, area: newArea, previousArea: previousArea, cursor: cursor, at: captureTime)
        {
            quietStreak &+= 1
            statistics.quietGrabs += 1
            if quietStreak % Self.stripeEvery != 0, !differ.hasSuspects {
                fresh = nil
            } else {
                statistics.stripeReads += 1
                // Without shared memory the stripe cannot be read on its own: everything then.
                if let stripe = try readStripe(newArea, captureTime: captureTime) {
                    fresh = stripe
                } else {
                    fresh = try readImage(newArea, captureTime: captureTime)
                }
            }
        } else {
            quietStreak = 0
            fresh = try readImage(newArea, captureTime: captureTime)
        }
        guard var pair = buffers else { throw CaptureError(.x11, "no image buffers") }

        changed.removeAll()
        var converted = false
        var convertNanoseconds: UInt64 = 0
        if let fresh {
            (converted, convertNanoseconds) = try compare(
                fresh,
                in: &pair,
                damage: region,
                area: newArea,
                cursor: cursor,
                resetting: !hasGrabbed || sizeChanged,
                at: captureTime
            )
        }
        buffers = pair
        let picture = Self.picture(at: pair.reference.address, area: newArea, captureTime: captureTime)
        lastCursor = cursor.map { ($0.rect, $0.serial) }
        hasGrabbed = true

        // The conversion done here is counted as conversion, not as grabbing.
        let elapsed = (Self.now() &- started) &- convertNanoseconds
        statistics.framesGrabbed += 1
        statistics.lastGrabNanoseconds = elapsed
        statistics.totalGrabNanoseconds &+= elapsed
        let cpu = Self.threadCPU() &- startedCPU
        statistics.totalGrabCPUNanoseconds &+= cpu &- min(convertNanoseconds, cpu)
        statistics.lastChangedFraction = changed.fraction
        converted = converted && !changed.isEmpty
        if converted {
            statistics.totalConvertNanoseconds &+= convertNanoseconds
            statistics.conversions += 1
        }
        return ScreenGrab(
            picture: picture,
            cursor: cursor,
            changed: changed,
            sizeChanged: sizeChanged,
            converted: converted
        )
    }

    /// Converts the changed area's rectangles after the first `converted` (the cursor's old and
    /// new places, which the comparison did not convert) into `target`; false when it could not.
    private func convertCursorPlaces(
        into target: (converter: ScreenConverter, width: Int, height: Int),
        picture: BorrowedBGRXPicture,
        after converted: Int
    ) -> Bool {
        guard
            target.converter.canConvertChanges(
                pictureWidth: picture.width,
                pictureHeight: picture.height,
                width: target.width,
                height: target.height
            )
        else { return false }
        for rect in changed.rects.dropFirst(converted) {
            do throws(MediaError) {
                try target.converter.convertChanged(picture, area: rect)
            } catch {
                return false
            }
        }
        return true
    }

    /// On a quiet screen one grab in this many reads the stripe: a change DAMAGE missed is found
    /// within `BlockDiffer.stripeCount` × this many grabs (about a second at 30 fps), and a still
    /// screen costs the X requests alone in between.
    public static let stripeEvery = 4

    /// Takes `fresh` (read into the scratch buffer): as the reference whole (`resetting`: a first
    /// picture or a new size), or compared with it, the changed area filled. With a `converter`,
    /// the changed blocks are converted as the comparison finds them, then the cursor's places:
    /// returns whether the whole changed area was, and the time it took.
    private func compare(
        _ fresh: BorrowedBGRXPicture,
        in pair: inout PictureBuffers,
        damage region: UnsafeMutablePointer<xcb_xfixes_fetch_region_reply_t>?,
        area newArea: PixelRect,
        cursor: CursorSprite?,
        resetting: Bool,
        at captureTime: UInt64
    ) throws(CaptureError) -> (converted: Bool, nanoseconds: UInt64) {
        if resetting {
            // A first picture or a new size: the fresh one becomes the reference as it is.
            differ.reset(width: fresh.width, height: fresh.height)
            changed = ChangedArea.whole(width: fresh.width, height: fresh.height)
            swap(&pair.reference, &pair.scratch)
            return (false, 0)
        }
        let compareStart = Self.now()
        let reference = pair.reference.address
        var fusing =
            converter.map {
                $0.converter.canConvertChanges(
                    pictureWidth: fresh.width,
                    pictureHeight: fresh.height,
                    width: $0.width,
                    height: $0.height
                )
            } ?? false
        var convertNanoseconds: UInt64 = 0
        // Every block compared: the fresh picture is the new one whole, so the buffers swap
        // instead of copying it; otherwise its changed blocks were copied into the reference.
        let everyBlock = trackChanges(
            fresh,
            against: reference,
            damage: region,
            origin: newArea,
            captureTime: captureTime,
            reportingRuns: fusing
        ) { rect in
            guard let target = converter else { return false }
            let start = Self.now()
            defer { convertNanoseconds &+= Self.now() &- start }
            do throws(MediaError) {
                try target.converter.convertChanged(fresh, area: rect)
                return true
            } catch {
                fusing = false
                return false
            }
        }
        if everyBlock { swap(&pair.reference, &pair.scratch) }
        statistics.totalCompareNanoseconds &+= (Self.now() &- compareStart) &- convertNanoseconds
        let compared = changed.rects.count
        addCursorChange(cursor, bounds: PixelRect(x: 0, y: 0, width: fresh.width, height: fresh.height))
        guard fusing, let target = converter else { return (false, convertNanoseconds) }
        let start = Self.now()
        let picture = Self.picture(at: pair.reference.address, area: newArea, captureTime: captureTime)
        let done = convertCursorPlaces(into: target, picture: picture, after: compared)
        return (done, convertNanoseconds &+ (Self.now() &- start))
    }

    /// The picture of `area` held at `address`, rows packed (`area.width * 4` bytes each).
    private static func picture(
        at address: UnsafeMutableRawPointer,
        area: PixelRect,
        captureTime: UInt64
    ) -> BorrowedBGRXPicture {
        BorrowedBGRXPicture(
            base: UnsafeRawPointer(address),
            stride: area.width * 4,
            width: area.width,
            height: area.height,
            captureTime: captureTime
        )
    }

    private static func threadCPU() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Damage notifies, cursor shape changes and errors of requests without replies.
    private func drainXEvents() throws(CaptureError) {
        while let event = xcb_poll_for_event(c) {
            defer { free(event) }
            let type = event.pointee.response_type & 0x7F
            if type == 0 {
                let error = UnsafeMutableRawPointer(event).assumingMemoryBound(to: xcb_generic_error_t.self).pointee
                if case .window(let window) = configuration.target, error.error_code == 3 || error.error_code == 9,
                    error.resource_id == window
                {
                    throw CaptureError(.windowGone, "window 0x\(String(window, radix: 16)) was closed")
                }
                note(
                    "X error \(XConnection.errorName(error.error_code)) for request \(error.major_code).\(error.minor_code)"
                )
            } else if let base = damageEventBase, type == base &+ UInt8(XCB_DAMAGE_NOTIFY) {
                statistics.damageEvents += 1
            } else if let base = cursorEventBase, type == base &+ UInt8(XCB_XFIXES_CURSOR_NOTIFY) {
                let notify = UnsafeMutableRawPointer(event).assumingMemoryBound(
                    to: xcb_xfixes_cursor_notify_event_t.self
                )
                if notify.pointee.cursor_serial != cursorSerial { cursorDirty = true }
            }
        }
        if let gone = connection.lostConnection() { throw gone }
    }

    /// Nothing to read but the stripe: DAMAGE reported no rectangle since the last grab, the
    /// area and the pointer (place and shape) are as they were, and damage missed nothing lately.
    /// On a still screen this is most grabs; the stripe still finds what damage misses.
    private func isQuiet(
        region: UnsafeMutablePointer<xcb_xfixes_fetch_region_reply_t>,
        area: PixelRect,
        previousArea: PixelRect,
        cursor: CursorSprite?,
        at captureTime: UInt64
    ) -> Bool {
        guard hasGrabbed, area == previousArea, xcb_xfixes_fetch_region_rectangles_length(region) == 0 else {
            return false
        }
        if let lastMissTime, captureTime &- lastMissTime < 2_000_000_000 { return false }
        let now = cursor.map { ($0.rect, $0.serial) }
        return now?.0 == lastCursor?.rect && now?.1 == lastCursor?.serial
    }

    /// A quiet grab: only the block rows the comparison's stripe checks next, each read into its
    /// own place in the scratch segment (ShmGetImage writes at the offset it is given, MIT-SHM
    /// 1.2); the rest of it is stale, and only the stripe's blocks are compared and taken from it.
    /// nil without shared memory: read everything then.
    private func readStripe(_ area: PixelRect, captureTime: UInt64) throws(CaptureError) -> BorrowedBGRXPicture? {
        let stride = area.width * 4
        guard usesSharedMemory, let buffers, let segment = buffers.scratch.segment,
            buffers.capacity >= stride * area.height
        else { return nil }
        stripeCookies.removeAll(keepingCapacity: true)
        for rows in differ.nextStripeRows() {
            let cookie = xcb_shm_get_image(
                c,
                root,
                Int16(area.x),
                Int16(area.y + rows.lowerBound),
                UInt16(area.width),
                UInt16(rows.count),
                ~0,
                UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue),
                segment,
                UInt32(rows.lowerBound * stride)
            )
            stripeCookies.append(cookie)
        }
        var failure: CaptureError?
        for cookie in stripeCookies {
            do throws(CaptureError) {
                let reply = try connection.reply("ShmGetImage") { xcb_shm_get_image_reply(c, cookie, $0) }
                free(reply)
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return Self.picture(at: buffers.scratch.address, area: area, captureTime: captureTime)
    }

    /// The area's pixels in the scratch buffer: through its segment, or GetImage bands copied
    /// into it.
    private func readImage(_ area: PixelRect, captureTime: UInt64) throws(CaptureError) -> BorrowedBGRXPicture {
        let stride = area.width * 4
        let bytes = stride * area.height
        ensureBuffers(bytes: bytes)
        guard let buffer = buffers?.scratch else { throw CaptureError(.x11, "no image buffers") }
        if usesSharedMemory, let segment = buffer.segment {
            let cookie = xcb_shm_get_image(
                c,
                root,
                Int16(area.x),
                Int16(area.y),
                UInt16(area.width),
                UInt16(area.height),
                ~0,
                UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue),
                segment,
                0
            )
            let reply = try connection.reply("ShmGetImage") { xcb_shm_get_image_reply(c, cookie, $0) }
            defer { free(reply) }
            guard Int(reply.pointee.size) >= bytes else {
                throw CaptureError(.x11, "ShmGetImage gave \(reply.pointee.size) bytes for \(area), wanted \(bytes)")
            }
            return Self.picture(at: buffer.address, area: area, captureTime: captureTime)
        }
        // A reply cannot be longer than the server's maximum request length allows here, so a
        // large area is read in horizontal bands, all requested before the first is waited for.
        let bandRows = max(1, (maximumRequestBytes - 64) / stride)
        bandCookies.removeAll(keepingCapacity: true)
        var top = 0
        while top < area.height {
            let rows = min(bandRows, area.height - top)
            bandCookies.append(
                xcb_get_image(
                    c,
                    UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue),
                    root,
                    Int16(area.x),
                    Int16(area.y + top),
                    UInt16(area.width),
                    UInt16(rows),
                    ~0
                )
            )
            top += rows
        }
        top = 0
        var failure: CaptureError?
        for cookie in bandCookies {
            let rows = min(bandRows, area.height - top)
            var error: UnsafeMutablePointer<xcb_generic_error_t>?
            let raw = xcb_get_image_reply(c, cookie, &error)
            defer {
                top += rows
                free(raw)
                free(error)
            }
            guard failure == nil else { continue }
            do throws(CaptureError) {
                let reply = try connection.check(raw, error, "GetImage")
                let length = Int(xcb_get_image_data_length(reply))
                guard length >= rows * stride, let data = xcb_get_image_data(reply) else {
                    throw CaptureError(.x11, "GetImage gave \(length) bytes for \(rows) rows of \(area)")
                }
                buffer.address.advanced(by: top * stride).copyMemory(from: data, byteCount: rows * stride)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return Self.picture(at: buffer.address, area: area, captureTime: captureTime)
    }

    // MARK: - Changes

    /// Damaged blocks and a rotating stripe of the rest are compared; everything when damage is
    /// missing or missed a change in the last 2 s. True when every block was compared (`fresh`
    /// is then the new picture whole); else the changed blocks were copied into `reference`.
    private func trackChanges(
        _ fresh: BorrowedBGRXPicture,
        against reference: UnsafeMutableRawPointer,
        damage region: UnsafeMutablePointer<xcb_xfixes_fetch_region_reply_t>?,
        origin: PixelRect,
        captureTime: UInt64,
        reportingRuns: Bool,
        changedRun: (PixelRect) -> Bool
    ) -> Bool {
        let recentMiss = lastMissTime.map { captureTime &- $0 < 2_000_000_000 } ?? false
        if let region {
            differ.begin(everything: false)
            if let rects = xcb_xfixes_fetch_region_rectangles(region) {
                for index in 0..<Int(xcb_xfixes_fetch_region_rectangles_length(region)) {
                    let rect = rects[index]
                    differ.markDamaged(
                        PixelRect(
                            x: Int(rect.x) - origin.x,
                            y: Int(rect.y) - origin.y,
                            width: Int(rect.width),
                            height: Int(rect.height)
                        )
                    )
                }
            }
            differ.markStripe(all: recentMiss)
        } else {
            differ.begin(everything: true)
        }
        let result = differ.compare(
            fresh,
            against: reference,
            into: &changed,
            reportingRuns: reportingRuns,
            changedRun: changedRun
        )
        if result.missed > 0 {
            statistics.changesMissedByDamage += result.missed
            lastMissTime = captureTime
        }
        changed.setFraction(Double(result.changedPixels) / Double(max(1, fresh.width * fresh.height)))
        return result.everyBlock
    }

    /// The old and new cursor rectangles when it moved, changed shape, appeared or went away.
    private func addCursorChange(_ cursor: CursorSprite?, bounds: PixelRect) {
        let now = cursor.map { ($0.rect, $0.serial) }
        guard now?.0 != lastCursor?.rect || now?.1 != lastCursor?.serial else { return }
        var extra = 0
        for rect in [lastCursor?.rect, now?.0].compactMap({ $0?.clipped(to: bounds) }) where !rect.isEmpty {
            changed.add(rect)
            extra += rect.area
        }
        let total = Double(max(1, bounds.area))
        changed.setFraction(changed.fraction + Double(extra) / total)
    }

    // MARK: - Cursor

    private func takeCursor(_ image: UnsafeMutablePointer<xcb_xfixes_get_cursor_image_reply_t>) {
        cursorDirty = false
        let reply = image.pointee
        let count = Int(reply.width) * Int(reply.height)
        cursorPixels.removeAll(keepingCapacity: true)
        if count > 0, Int(xcb_xfixes_get_cursor_image_cursor_image_length(image)) >= count,
            let words = xcb_xfixes_get_cursor_image_cursor_image(image)
        {
            cursorPixels.append(contentsOf: UnsafeBufferPointer(start: words, count: count))
            cursorWidth = Int(reply.width)
            cursorHeight = Int(reply.height)
        } else {
            cursorWidth = 0
            cursorHeight = 0
        }
        cursorHotX = Int(reply.xhot)
        cursorHotY = Int(reply.yhot)
        cursorSerial = reply.cursor_serial
    }

    /// nil when the pointer is on another screen, outside the target, or the cursor is empty.
    private func sprite(at pointer: xcb_query_pointer_reply_t, in area: PixelRect) -> CursorSprite? {
        guard pointer.same_screen != 0, cursorWidth > 0, cursorHeight > 0 else { return nil }
        let x = Int(pointer.root_x)
        let y = Int(pointer.root_y)
        guard x >= area.x, y >= area.y, x < area.x + area.width, y < area.y + area.height else { return nil }
        return CursorSprite(
            pixels: cursorPixels,
            width: cursorWidth,
            height: cursorHeight,
            x: x - cursorHotX - area.x,
            y: y - cursorHotY - area.y,
            serial: cursorSerial
        )
    }

    // MARK: - Monitors

    /// Active RandR 1.5 monitors, in the order `xrandr --listactivemonitors` numbers them.
    public static func monitors(display: String?) throws(CaptureError) -> [(name: String, rect: PixelRect)] {
        let connection = try XConnection(display: display)
        guard try connection.hasMonitors() else {
            throw CaptureError(.extensionMissing, "display \(connection.name) has no RandR 1.5 monitors")
        }
        return try named(try connection.monitors(), connection)
    }
}
