#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Starts a detached POSIX thread that runs one closure: the media and sender threads. Media work
/// blocks for milliseconds at a time (encoding, pacing sleeps, a full send queue), so it runs on
/// threads of its own and never on Swift's cooperative pool. Foundation's `Thread` would do the
/// same, at the price of linking all of Foundation.
public enum MediaThreadRunner {
    /// What the new thread owns: the closure and its name.
    private final class Job {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Runs `body` on a new thread named `name` (what `top -H` and `perf` show). Returns an error text if the thread could not be created.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> String? {
        let job = Unmanaged.passRetained(Job(name: name, body: body))
        var thread = pthread_t()
        let status = pthread_create(
            &thread,
            nil,
            { argument in
                guard let argument else { return nil }
                let job = Unmanaged<Job>.fromOpaque(argument).takeRetainedValue()
                nameThisThread(job.name)
                job.body()
                return nil
            },
            job.toOpaque()
        )
        guard status == 0 else {
            job.release()
            return "could not start thread \"\(name)\": \(String(cString: strerror(status)))"
        }
        pthread_detach(thread)
        return nil
    }
}

/// Names the calling thread through `/proc/thread-self/comm`, which is what
/// `pthread_setname_np` does on Linux (Glibc's Swift module does not export that GNU
/// extension). The kernel keeps 15 bytes; a failure only loses the name.
private func nameThisThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}
