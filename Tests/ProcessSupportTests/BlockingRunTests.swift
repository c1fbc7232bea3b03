import Foundation
import Testing

@testable import ProcessSupport

/// rtc-publish's main thread waits in `runBlocking` for the whole session: it must hand back
/// what the task returned or threw, and wait for a task that suspends before it finishes.
@Suite("runBlocking")
struct BlockingRunTests {
    private struct Refused: Error, Equatable { var reason: String }

    /// Calls `runBlocking` on a thread of its own, as a synchronous main does (never on the
    /// test's cooperative pool, which the task itself needs).
    private static func onOwnThread<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error> {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: Result { try runBlocking(operation) })
            }.start()
        }
    }

    @Test func returnsWhatTheTaskReturnsAfterItSuspends() async throws {
        let result = await Self.onOwnThread { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(50))
            return 42
        }
        #expect(try result.get() == 42)
    }

    @Test func throwsWhatTheTaskThrows() async {
        let result = await Self.onOwnThread { () async throws -> Int in
            await Task.yield()
            throw Refused(reason: "no video input")
        }
        #expect(throws: Refused(reason: "no video input")) { try result.get() }
    }
}
