import CXCB
import Glibc
import Media

/// One XCB connection, the screen it opened on, and the reply handling every request shares:
/// X errors become `CaptureError`s naming the request, a dead connection `displayGone`.
final class XConnection {
    let handle: OpaquePointer
    /// As given or found in `DISPLAY`, for messages.
    let name: String
    let screen: UnsafeMutablePointer<xcb_screen_t>
    let root: xcb_window_t

    init(display: String?) throws(CaptureError) {
        let environment = getenv("DISPLAY").map { String(cString: $0) }
        guard let name = [display, environment].compactMap({ $0 }).first(where: { !$0.isEmpty }) else {
            throw CaptureError(.noDisplay, "no X display: DISPLAY is not set and none was given (e.g. :0)")
        }
        var screenNumber: Int32 = 0
        guard let handle = xcb_connect(name, &screenNumber) else {
            throw CaptureError(.displayRefused, "cannot connect to X display \(name): out of memory")
        }
        // xcb_connect always returns a connection object; a failed one must still be disconnected.
        let status = xcb_connection_has_error(handle)
        guard status == 0 else {
            xcb_disconnect(handle)
            throw CaptureError(.displayRefused, "cannot connect to X display \(name): \(Self.meaning(status))")
        }
        var roots = xcb_setup_roots_iterator(xcb_get_setup(handle))
        var index: Int32 = 0
        while index < screenNumber && roots.rem > 0 {
            xcb_screen_next(&roots)
            index += 1
        }
        guard roots.rem > 0, let screen = roots.data else {
            xcb_disconnect(handle)
            throw CaptureError(.displayRefused, "X display \(name) has no screen \(screenNumber)")
        }
        self.handle = handle
        self.name = name
        self.screen = screen
        self.root = screen.pointee.root
    }

    deinit { xcb_disconnect(handle) }

    /// What `xcb_connection_has_error`'s codes mean (xcb.h).
    static func meaning(_ status: Int32) -> String {
        switch status {
        case XCB_CONN_ERROR:
            return "connection error (no X server there, it refused us — check xauth — or the socket broke)"
        case XCB_CONN_CLOSED_EXT_NOTSUPPORTED: return "an extension is not supported"
        case XCB_CONN_CLOSED_MEM_INSUFFICIENT: return "out of memory"
        case XCB_CONN_CLOSED_REQ_LEN_EXCEED: return "a request exceeded the server's maximum length"
        case XCB_CONN_CLOSED_PARSE_ERR: return "the display name could not be parsed"
        case XCB_CONN_CLOSED_INVALID_SCREEN: return "the server has no such screen"
        case XCB_CONN_CLOSED_FDPASSING_FAILED: return "file descriptor passing failed"
        default: return "error \(status)"
        }
    }

    /// `displayGone` when the connection has broken, else nil.
    func lostConnection() -> CaptureError? {
        let status = xcb_connection_has_error(handle)
        guard status != 0 else { return nil }
        return CaptureError(.displayGone, "display \(name) is gone (\(Self.meaning(status)))")
    }

    /// A reply or its failure. Frees nothing: the caller owns both (so replies taken together
    /// are all freed when one of them fails). `mapError` may turn an X error code into a more
    /// specific error (a closed window).
    func check<R>(
        _ reply: UnsafeMutablePointer<R>?,
        _ error: UnsafeMutablePointer<xcb_generic_error_t>?,
        _ request: String,
        mapError: (UInt8) -> CaptureError? = { _ in nil }
    ) throws(CaptureError) -> UnsafeMutablePointer<R> {
        if let error {
            let code = error.pointee.error_code
            throw mapError(code)
                ?? CaptureError(.x11, "X request \(request) failed on \(name): \(Self.errorName(code))")
        }
        if let reply { return reply }
        throw lostConnection() ?? CaptureError(.x11, "X request \(request) got no reply from \(name)")
    }

    /// Waits for one reply; the caller frees it.
    func reply<R>(
        _ request: String,
        mapError: (UInt8) -> CaptureError? = { _ in nil },
        _ wait: (UnsafeMutablePointer<UnsafeMutablePointer<xcb_generic_error_t>?>) -> UnsafeMutablePointer<R>?
    ) throws(CaptureError) -> UnsafeMutablePointer<R> {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let raw = wait(&error)
        defer { free(error) }
        do {
            return try check(raw, error, request, mapError: mapError)
        } catch {
            free(raw)
            throw error
        }
    }

    /// Core protocol error names (X11 protocol, section "Errors").
    static func errorName(_ code: UInt8) -> String {
        let names = [
            1: "BadRequest", 2: "BadValue", 3: "BadWindow", 4: "BadPixmap", 5: "BadAtom", 6: "BadCursor",
            7: "BadFont", 8: "BadMatch", 9: "BadDrawable", 10: "BadAccess", 11: "BadAlloc", 12: "BadColormap",
            13: "BadGContext", 14: "BadIDChoice", 15: "BadName", 16: "BadLength", 17: "BadImplementation",
        ]
        return names[Int(code)].map { "\($0) (\(code))" } ?? "error \(code)"
    }

    /// An extension's presence and first event number, or nil when the server lacks it.
    func queryExtension(_ extensionName: String) throws(CaptureError) -> UInt8? {
        let cookie = extensionName.withCString { xcb_query_extension(handle, UInt16(strlen($0)), $0) }
        let reply = try self.reply("QueryExtension") { xcb_query_extension_reply(handle, cookie, $0) }
        defer { free(reply) }
        return reply.pointee.present != 0 ? reply.pointee.first_event : nil
    }

    func internAtom(_ atomName: String, onlyIfExists: Bool) throws(CaptureError) -> xcb_atom_t {
        let cookie = atomName.withCString { xcb_intern_atom(handle, onlyIfExists ? 1 : 0, UInt16(strlen($0)), $0) }
        let reply = try self.reply("InternAtom") { xcb_intern_atom_reply(handle, cookie, $0) }
        defer { free(reply) }
        return reply.pointee.atom
    }

    func atomName(_ atom: xcb_atom_t) throws(CaptureError) -> String {
        let cookie = xcb_get_atom_name(handle, atom)
        let reply = try self.reply("GetAtomName") { xcb_get_atom_name_reply(handle, cookie, $0) }
        defer { free(reply) }
        let length = Int(xcb_get_atom_name_name_length(reply))
        guard length > 0, let bytes = xcb_get_atom_name_name(reply) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    /// RandR 1.5 is there (monitors need it).
    func hasMonitors() throws(CaptureError) -> Bool {
        guard try queryExtension("RANDR") != nil else { return false }
        let cookie = xcb_randr_query_version(handle, 1, 5)
        let reply = try self.reply("RRQueryVersion") { xcb_randr_query_version_reply(handle, cookie, $0) }
        defer { free(reply) }
        return reply.pointee.major_version > 1 || (reply.pointee.major_version == 1 && reply.pointee.minor_version >= 5)
    }

    /// Active RandR monitors in server order (the numbering of `xrandr --listactivemonitors`).
    func monitors() throws(CaptureError) -> [(atom: xcb_atom_t, rect: PixelRect)] {
        let cookie = xcb_randr_get_monitors(handle, root, 1)
        let reply = try self.reply("RRGetMonitors") { xcb_randr_get_monitors_reply(handle, cookie, $0) }
        defer { free(reply) }
        var result: [(atom: xcb_atom_t, rect: PixelRect)] = []
        var iterator = xcb_randr_get_monitors_monitors_iterator(reply)
        while iterator.rem > 0, let info = iterator.data {
            result.append((info.pointee.name, Self.rect(info.pointee)))
            xcb_randr_monitor_info_next(&iterator)
        }
        return result
    }

    static func rect(_ info: xcb_randr_monitor_info_t) -> PixelRect {
        PixelRect(x: Int(info.x), y: Int(info.y), width: Int(info.width), height: Int(info.height))
    }
}
