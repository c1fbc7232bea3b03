import Foundation
import ProcessSupport
import Testing

@Suite struct FrameMemoryTests {
    /// The kernel's own account of the process (`THP_enabled` in /proc/self/status, Linux 5.0
    /// on) says huge pages are off once asked; it said 1 before on a machine with THP on.
    @Test func hugePagesAreOffOnceAsked() throws {
        #expect(FrameMemory.avoidHugePages())
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("THP_enabled:") }
        #expect(line.map { $0.split(separator: "\t").last == "0" } == true, "\(line ?? "no THP_enabled line")")
    }
}
