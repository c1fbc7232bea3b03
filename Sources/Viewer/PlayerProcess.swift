#if canImport(Glibc)
    import Glibc
#endif

/// A player started on the SDP file, with a clean signal state.
///
/// Why not Foundation's `Process`: on Linux, libdispatch's signal sources (how SIGINT reaches
/// our own shutdown) work by *blocking* those signals in every thread, and a blocked mask is
/// inherited across fork and exec. A player started with `Process` was deaf to SIGINT and kept
/// running after we stopped. `posix_spawn` with an empty mask and default dispositions gives it
/// what a shell would.
final class PlayerProcess {
    let pid: pid_t
    let command: String
    private var exited = false

    /// Runs `command` through `/bin/sh -c "exec …"` (so the shell becomes the player).
    init(command: String) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = ["/bin/sh", "-c", "exec \(command)"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, "/bin/sh", nil, &attributes, &argv, environ)
        guard status == 0 else {
            throw SubscribeSession.UsageError(
                description: "cannot start the player: \(String(cString: strerror(status)))"
            )
        }
        pid = child
        self.command = command
    }

    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// SIGINT (a player's "stop and finish writing"), then SIGKILL if it has not ended in 5 s.
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGINT)
        for _ in 0..<250 {
            if !isRunning { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
    }
}
