/// The viewer page rtc-signal serves: `html` at `GET /rooms/ROOM` (HTML and inline CSS) and
/// `script` at `GET /viewer.js`. Plain HTML, no framework, nothing fetched from elsewhere.
///
/// Both are real files, `Resources/viewer.html` and `Resources/viewer.js`, which SwiftPM embeds
/// in this module as byte arrays (`resources: [.embedInCode(…)]` in Package.swift; the
/// generated `PackageResources`): no bundle, no Foundation, nothing read from disk at run time.
/// They are served exactly as the files hold them, byte for byte; neither ends with a newline
/// (as the string literals they were did not).
public enum ViewerPage {
    /// The page for any room: the script reads the room from `location.pathname`.
    public static let html = String(decoding: PackageResources.viewer_html, as: UTF8.self)

    /// The viewer's script (`GET /viewer.js`). It joins the room named in the address over the
    /// WebSocket at `/ws` (the protocol of Docs/signaling.md, one JSON message per text frame) as a
    /// subscriber (`?uid=`, or `web_` + random; `?token=`; `?publisher=UID` to pick a share),
    /// lists the room's screen shares, plays one over WebRTC (a complete recvonly offer, the
    /// publisher's answer) and follows the room: shares that come and go, reconnecting with
    /// backoff when the WebSocket closes. Its overlay shows resolution, codec, fps, bitrate, round
    /// trip, loss, freezes and the glass-to-glass delay read from the synthetic source's timecode
    /// strip (Sources/Media/Sources/TimecodeStrip.swift) against `GET /clock`. Tests read
    /// `window.viewer` (Tests/Peers/viewer_page.py, for chromium_viewer.py and firefox_viewer.py).
    public static let script = String(decoding: PackageResources.viewer_js, as: UTF8.self)
}
