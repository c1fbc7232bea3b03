import CXCB
import Glibc

/// A second X client that draws what the capture must then see: windows with a background
/// colour and rectangles on the root, each call finished with a round trip so the server has
/// done the drawing before the test grabs.
final class XClient {
    let connection: OpaquePointer
    let root: xcb_window_t
    let visual: xcb_visualid_t
    private let gc: xcb_gcontext_t

    init(display: String) throws {
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(display, &screenNumber), xcb_connection_has_error(connection) == 0 else {
            throw XClientError("cannot connect to \(display)")
        }
        guard let screen = xcb_setup_roots_iterator(xcb_get_setup(connection)).data else {
            xcb_disconnect(connection)
            throw XClientError("no screen on \(display)")
        }
        self.connection = connection
        root = screen.pointee.root
        visual = screen.pointee.root_visual
        gc = xcb_generate_id(connection)
        var values: [UInt32] = [0]
        xcb_create_gc(connection, gc, root, UInt32(XCB_GC_FOREGROUND.rawValue), &values)
        try sync()
    }

    deinit { xcb_disconnect(connection) }

    /// Waits until the server has processed everything sent so far.
    func sync() throws {
        let cookie = xcb_get_input_focus(connection)
        guard let reply = xcb_get_input_focus_reply(connection, cookie, nil) else {
            throw XClientError("X connection broke")
        }
        free(reply)
    }

    /// A mapped override-redirect window filled with `color` (0xRRGGBB).
    func window(
        _ rect: (x: Int, y: Int, width: Int, height: Int),
        color: UInt32,
        title: String? = nil
    ) throws
        -> xcb_window_t
    {
        let window = xcb_generate_id(connection)
        var values: [UInt32] = [color, 1]
        xcb_create_window(
            connection,
            0,
            window,
            root,
            Int16(rect.x),
            Int16(rect.y),
            UInt16(rect.width),
            UInt16(rect.height),
            0,
            UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue),
            visual,
            UInt32(XCB_CW_BACK_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue),
            &values
        )
        if let title {
            xcb_change_property(
                connection,
                UInt8(XCB_PROP_MODE_REPLACE.rawValue),
                window,
                XCB_ATOM_WM_NAME.rawValue,
                XCB_ATOM_STRING.rawValue,
                8,
                UInt32(title.utf8.count),
                title
            )
        }
        xcb_map_window(connection, window)
        try sync()
        return window
    }

    func configure(_ window: xcb_window_t, _ rect: (x: Int, y: Int, width: Int, height: Int)) throws {
        var values: [UInt32] = [
            UInt32(bitPattern: Int32(rect.x)), UInt32(bitPattern: Int32(rect.y)), UInt32(rect.width),
            UInt32(rect.height),
        ]
        let mask =
            XCB_CONFIG_WINDOW_X.rawValue | XCB_CONFIG_WINDOW_Y.rawValue | XCB_CONFIG_WINDOW_WIDTH.rawValue
            | XCB_CONFIG_WINDOW_HEIGHT.rawValue
        xcb_configure_window(connection, window, UInt16(mask), &values)
        try sync()
    }

    func destroy(_ window: xcb_window_t) throws {
        xcb_destroy_window(connection, window)
        try sync()
    }

    /// Fills a rectangle of the root window (where no window covers it).
    func fillRoot(_ rect: (x: Int, y: Int, width: Int, height: Int), color: UInt32) throws {
        var values: [UInt32] = [color]
        xcb_change_gc(connection, gc, UInt32(XCB_GC_FOREGROUND.rawValue), &values)
        var rectangle = xcb_rectangle_t(
            x: Int16(rect.x),
            y: Int16(rect.y),
            width: UInt16(rect.width),
            height: UInt16(rect.height)
        )
        xcb_poly_fill_rectangle(connection, root, gc, 1, &rectangle)
        try sync()
    }
}

struct XClientError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
