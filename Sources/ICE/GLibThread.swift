import CNice
import Dispatch

/// A GLib main context and loop, run by a thread this object owns. Every libnice call an
/// `ICEAgent` makes goes through `sync`, so libnice's signals, timers and receive callbacks all
/// run on this one thread.
///
/// libnice guards each agent with a mutex and may call its signal handlers inside the public
/// call that queued them, on the caller's thread (`agent_unlock_and_emit`). Marshalling every
/// call onto the loop thread is what makes "handlers run on the GLib thread" true.
final class GLibThread: @unchecked Sendable {
    /// `GMainContext *`, owned.
    let context: OpaquePointer
    /// `GMainLoop *`, owned.
    private let loop: OpaquePointer
    /// Joined (and with that released) by `stop()`.
    private var thread: UnsafeMutablePointer<GThread>?

    init(name: String) {
        context = rtc_g_main_context_new()()!
        loop = rtc_g_main_loop_new()(context, 0)!
        let started = DispatchSemaphore(value: 0)
        let box = Unmanaged.passRetained(StartBox(loop: loop, started: started)).toOpaque()
        thread = rtc_g_thread_new()(
            name,
            { raw in
                let box = Unmanaged<StartBox>.fromOpaque(raw!).takeRetainedValue()
                let context = rtc_g_main_loop_get_context()(box.loop)
                rtc_g_main_context_push_thread_default()(context)
                // Signal once the loop runs (and so owns the context), not before: a job posted
                // earlier would still wait for it, but this keeps `sync`'s owner check exact.
                let idle = rtc_g_idle_source_new()()
                rtc_g_source_set_callback()(
                    idle,
                    { raw in
                        Unmanaged<DispatchSemaphore>.fromOpaque(raw!).takeRetainedValue().signal()
                        return 0  // G_SOURCE_REMOVE
                    },
                    Unmanaged.passRetained(box.started).toOpaque(),
                    nil
                )
                rtc_g_source_attach()(idle, context)
                rtc_g_source_unref()(idle)
                rtc_g_main_loop_run()(box.loop)
                rtc_g_main_context_pop_thread_default()(context)
                return nil
            },
            box
        )
        started.wait()
    }

    private final class StartBox {
        let loop: OpaquePointer
        let started: DispatchSemaphore
        init(loop: OpaquePointer, started: DispatchSemaphore) {
            self.loop = loop
            self.started = started
        }
    }

    private final class Job {
        /// Dropped before `done` is signalled: `sync` checks that the closure did not escape.
        private var body: (() -> Void)?
        let done = DispatchSemaphore(value: 0)
        init(_ body: @escaping () -> Void) { self.body = body }

        func run() {
            body?()
            body = nil
            done.signal()
        }
    }

    /// Whether the caller is the loop thread (a handler calling back into the agent).
    var isCurrent: Bool { rtc_g_main_context_is_owner()(context) != 0 }

    /// Runs `body` on the loop thread and waits for it. Inline when already there.
    func sync<T>(_ body: () -> T) -> T {
        if isCurrent { return body() }
        return withoutActuallyEscaping(body) { body in
            var result: T?
            let job = Job { result = body() }
            let idle = rtc_g_idle_source_new()()
            rtc_g_source_set_priority()(idle, G_PRIORITY_DEFAULT)
            rtc_g_source_set_callback()(
                idle,
                { raw in
                    let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                    job.run()
                    return 0  // G_SOURCE_REMOVE
                },
                Unmanaged.passRetained(job).toOpaque(),
                nil
            )
            rtc_g_source_attach()(idle, context)
            rtc_g_source_unref()(idle)
            job.done.wait()
            return result!
        }
    }

    /// Quits the loop and joins the thread. Not from the loop thread itself.
    func stop() {
        precondition(!isCurrent, "GLibThread.stop() from its own thread would join itself")
        guard let thread else { return }
        sync { rtc_g_main_loop_quit()(loop) }
        rtc_g_thread_join()(thread)
        self.thread = nil
    }

    deinit {
        if thread != nil { stop() }
        rtc_g_main_loop_unref()(loop)
        rtc_g_main_context_unref()(context)
    }
}
