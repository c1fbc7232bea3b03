/// Runs `operation` as a task and blocks the calling thread until it finishes, returning what it
/// returned or throwing what it threw.
///
/// For a synchronous `main`. An `async` main ends in `dispatch_main()`, which retires the main
/// thread with `pthread_exit`: a forced unwind of its stack that reads the binary's unwind
/// tables (about 0.5 MB of resident memory, for nothing). A main thread that waits here instead
/// stays parked until the work is done. Call it from a thread of your own, never from one of the
/// cooperative pool's: the task needs that pool to run.
public func runBlocking<Value: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Value
) throws -> Value {
    let outcome = BlockingOutcome<Value>()
    Task {
        let result: Result<Value, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        outcome.finish(result)
    }
    return try outcome.wait().get()
}

/// The result of the task `runBlocking` waits for, handed over under a lock.
private final class BlockingOutcome<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    /// Written once, under `lock`.
    private var result: Result<Value, any Error>?

    func finish(_ value: Result<Value, any Error>) {
        lock.withLock { result = value }
        lock.broadcast()
    }

    func wait() -> Result<Value, any Error> {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let result { return result }
            lock.wait()
        }
    }
}
