#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutex with a condition variable whose timed waits run on CLOCK_MONOTONIC, the clock every
/// deadline in the publisher is on (``MonotonicClock``).
///
/// Foundation's `NSCondition` would do, but it waits on wall-clock `Date`s and is the only reason
/// the publisher would link all of Foundation (ICU included): about 10 MB of resident memory in a
/// process whose budget is the seeds' 50 MB. The pthread objects live at fixed addresses (they
/// must never move), allocated once and freed in `deinit`.
public final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var mutexAttributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&mutexAttributes)
        pthread_mutexattr_settype(&mutexAttributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        let mutexStatus = pthread_mutex_init(mutex, &mutexAttributes)
        pthread_mutexattr_destroy(&mutexAttributes)
        var conditionAttributes = pthread_condattr_t()
        pthread_condattr_init(&conditionAttributes)
        pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC)
        let conditionStatus = pthread_cond_init(condition, &conditionAttributes)
        pthread_condattr_destroy(&conditionAttributes)
        // Initialising a mutex or condition with valid attributes cannot fail on Linux short of
        // memory exhaustion; there is no way to go on without them.
        precondition(mutexStatus == 0 && conditionStatus == 0, "pthread mutex/condition init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock: \(status)")
    }

    public func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock: \(status)")
    }

    /// Runs `body` with the lock held.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for a signal; the lock must be held. May return spuriously: callers loop on their
    /// condition.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Waits for a signal or until `deadline` (``MonotonicClock`` nanoseconds); the lock must be
    /// held. Returns false when the deadline passed. May return spuriously.
    @discardableResult
    public func wait(untilMonotonic deadline: UInt64) -> Bool {
        var time = timespec(
            tv_sec: Int(deadline / 1_000_000_000),
            tv_nsec: Int(deadline % 1_000_000_000)
        )
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    public func signal() { pthread_cond_signal(condition) }

    public func broadcast() { pthread_cond_broadcast(condition) }
}
