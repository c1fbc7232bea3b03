import SignalingClient
import SignalingProtocol
import Testing

/// Reads a ``SignalingClient``'s events in the background so a test can wait for them with a
/// timeout, in order.
final class EventRecorder: Sendable {
    let mailbox = Mailbox<SignalingEvent>()
    private let pump: Task<Void, Never>

    init(_ client: SignalingClient) {
        let mailbox = self.mailbox
        pump = Task {
            for await event in client.events {
                mailbox.deliver(event)
            }
            mailbox.close()
        }
    }

    deinit {
        pump.cancel()
    }

    func next(timeout: Duration = .seconds(10)) async throws -> SignalingEvent {
        switch await mailbox.next(timeout: timeout) {
        case .line(let event): return event
        case .closed: throw TestFailure("event stream ended")
        case .timedOut: throw TestFailure("no event within \(timeout)")
        }
    }

    /// Skips events until one matches; returns the match and what was skipped.
    func waitFor<T>(
        timeout: Duration = .seconds(10),
        _ match: (SignalingEvent) -> T?
    ) async throws -> (match: T, skipped: [SignalingEvent]) {
        var skipped: [SignalingEvent] = []
        while true {
            let event: SignalingEvent
            do {
                event = try await next(timeout: timeout)
            } catch {
                throw TestFailure("\(error); skipped \(skipped)")
            }
            if let found = match(event) { return (found, skipped) }
            skipped.append(event)
        }
    }
}
