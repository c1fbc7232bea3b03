import Foundation
import TestSupport

/// Where Debian's GStreamer 1.22 tools are, and proof that every element the receiver pipeline
/// names is installed. A missing piece is a test failure naming the Debian package to install,
/// never a skip: these tests are the proof that a real peer's feedback works.
enum GStreamerInstallation {
    /// Each element the pipeline uses and the Debian package that ships it.
    static let elements: [(element: String, package: String)] = [
        ("udpsrc", "gstreamer1.0-plugins-good"),
        ("udpsink", "gstreamer1.0-plugins-good"),
        ("rtpbin", "gstreamer1.0-plugins-good"),
        ("rtph264depay", "gstreamer1.0-plugins-good"),
        ("srtpdec", "gstreamer1.0-plugins-bad"),
        ("srtpenc", "gstreamer1.0-plugins-bad"),
        ("avdec_h264", "gstreamer1.0-libav"),
        ("fakesink", "libgstreamer1.0-0"),
    ]

    /// The Debian packages the peer tests need, for error messages and the setup script.
    static let packages = [
        "gstreamer1.0-tools", "gstreamer1.0-plugins-base", "gstreamer1.0-plugins-good",
        "gstreamer1.0-plugins-bad", "gstreamer1.0-libav",
    ]

    /// The path of `gst-launch-1.0`, after checking every element with `gst-inspect-1.0`.
    static func launcher() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let launch = try tool("gst-launch-1.0", searchPath: path)
        let inspect = try tool("gst-inspect-1.0", searchPath: path)
        for (element, package) in elements where !exists(element, inspector: inspect) {
            throw InteropFailure(
                "GStreamer element \(element) is missing: install the Debian package \(package) "
                    + "(all of: apt-get install \(packages.joined(separator: " ")))"
            )
        }
        return launch
    }

    /// The first executable `name` in the directories of `searchPath` (colon-separated).
    static func tool(_ name: String, searchPath: String) throws -> String {
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw InteropFailure(
            "\(name) not found on PATH: install the Debian package gstreamer1.0-tools "
                + "(all of: apt-get install \(packages.joined(separator: " ")))"
        )
    }

    /// `gst-inspect-1.0 --exists NAME` exits 0 exactly when the element is registered.
    private static func exists(_ element: String, inspector: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: inspector)
        process.arguments = ["--exists", element]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
