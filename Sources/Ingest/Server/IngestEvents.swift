/// The server's events as an `AsyncSequence`, for one consumer (see ``IngestServer/events``).
public struct IngestEvents: AsyncSequence, Sendable {
    public typealias Element = IngestEvent
    let queue: IngestEventQueue

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: IngestEventQueue

        public mutating func next() async -> IngestEvent? {
            await queue.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue)
    }
}
