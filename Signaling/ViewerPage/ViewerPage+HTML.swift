/// The viewer page rtc-signal serves at `GET /rooms/ROOM` (HTML and inline CSS; the script is
/// `ViewerPage.script`, served at `GET /viewer.js`). Plain HTML, no framework, nothing fetched
/// from elsewhere. What the page does and what it exposes for tests: `ViewerPage+Script.swift`.
///
/// Both are raw strings (`#"""…"""#`): no escaping; every line is served exactly as written.
public enum ViewerPage {
    /// The page for any room: the script reads the room from `location.pathname`.
    public static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Screen share</title>
        <style>
          html, body { margin: 0; height: 100%; background: #111; color: #ddd; font: 14px system-ui, sans-serif; }
          body { display: flex; flex-direction: column; }
          header { display: flex; gap: 8px; align-items: center; padding: 6px 10px; background: #222; flex-wrap: wrap; }
          header select, header button { font: inherit; background: #333; color: #eee; border: 1px solid #555; border-radius: 4px; padding: 2px 8px; }
          #status { margin-left: auto; color: #9c9; }
          #stage { position: relative; flex: 1; min-height: 0; background: #000; }
          video { width: 100%; height: 100%; object-fit: contain; display: block; }
          #overlay { position: absolute; right: 8px; bottom: 8px; padding: 4px 8px; border-radius: 4px; pointer-events: none;
                     background: rgba(0, 0, 0, 0.6); color: #fff; font: 12px/1.4 ui-monospace, monospace; white-space: pre; }
          #notice { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
                    font-size: 20px; color: #ccc; pointer-events: none; }
          #notice[hidden], button[hidden] { display: none; }
        </style>
        </head>
        <body>
        <header>
          <strong id="room"></strong>
          <label>Screen share <select id="shares" disabled></select></label>
          <button id="play" type="button">Play</button>
          <button id="unmute" type="button" hidden>Unmute</button>
          <button id="fullscreen" type="button">Fullscreen</button>
          <span id="status">connecting</span>
        </header>
        <main id="stage">
          <video id="video" autoplay playsinline></video>
          <div id="overlay"></div>
          <div id="notice" hidden></div>
        </main>
        <script src="/viewer.js"></script>
        </body>
        </html>
        """#
}
