import Foundation
import Glibc
import TestSupport
import Testing

/// `BackgroundProcess.zombieStatus` reads a dead, unreaped child's status from `/proc`: what the
/// end-to-end tests fall back on when Foundation's `Process` loses a child that died at once.
@Suite struct ZombieStatusTests {
    /// Starts `/bin/sh -c script` with posix_spawn and does not reap it.
    func spawnUnreaped(_ script: String) throws -> pid_t {
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", script]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        guard status == 0 else { throw InteropFailure("posix_spawn failed: \(status)") }
        return pid
    }

    /// Waits (bounded) for the child to become a zombie; returns its decoded status.
    func statusOnceDead(_ pid: pid_t) -> Int32? {
        for _ in 0..<500 {
            if let status = BackgroundProcess.zombieStatus(pid) { return status }
            usleep(10_000)
        }
        return nil
    }

    @Test func anExitCodeIsReadFromTheZombie() throws {
        let pid = try spawnUnreaped("exit 3")
        #expect(statusOnceDead(pid) == 3)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(BackgroundProcess.zombieStatus(pid) == nil, "reaped: no longer a zombie")
    }

    @Test func aKillingSignalIsReadAsItsNumber() throws {
        let pid = try spawnUnreaped("kill -9 $$")
        #expect(statusOnceDead(pid) == SIGKILL)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
    }

    @Test func aLiveProcessIsNoZombie() throws {
        let pid = try spawnUnreaped("sleep 5")
        #expect(BackgroundProcess.zombieStatus(pid) == nil)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
    }
}
