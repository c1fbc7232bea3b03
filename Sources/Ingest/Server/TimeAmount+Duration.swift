import NIOCore

extension TimeAmount {
    /// A Swift `Duration` as NIO's nanosecond `TimeAmount`.
    init(_ duration: Duration) {
        let parts = duration.components
        self = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }
}
