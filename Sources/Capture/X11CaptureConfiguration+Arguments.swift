import Media

extension X11CaptureConfiguration {
    /// The capture as the command line names it (rtc-publish `--video x11[:DISPLAY]`,
    /// rtc-capture `--display`): at most one of monitor, window and region; cursor `on` or `off`.
    /// Errors are `badTarget` with the option named.
    public static func fromArguments(
        display: String?,
        monitor: String?,
        window: String?,
        region: String?,
        cursor: String
    ) throws(CaptureError) -> X11CaptureConfiguration {
        let named = [("--capture-monitor", monitor), ("--capture-window", window), ("--capture-region", region)]
            .filter { $0.1 != nil }
            .map(\.0)
        guard named.count <= 1 else {
            throw CaptureError(.badTarget, "\(named.joined(separator: " and ")) both name what to capture; give one")
        }
        var configuration = X11CaptureConfiguration()
        if let display {
            guard !display.isEmpty else { throw CaptureError(.noDisplay, "the display name is empty") }
            configuration.display = display
        }
        switch cursor {
        case "on": configuration.cursor = true
        case "off": configuration.cursor = false
        default: throw CaptureError(.badTarget, "--cursor '\(cursor)' is not on or off")
        }
        if let monitor {
            guard !monitor.isEmpty else { throw CaptureError(.badTarget, "--capture-monitor is empty") }
            configuration.target = .monitor(monitor)
        } else if let window {
            configuration.target = .window(try CaptureTarget.parseWindow(window))
        } else if let region {
            configuration.target = .region(try CaptureTarget.parseRegion(region))
        }
        return configuration
    }
}
