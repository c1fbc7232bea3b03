/// A token bucket per connection: `burst` messages at once, then `perSecond` steadily.
///
/// A bucket rather than a fixed window, so a client that pings and publishes in bursts is never
/// punished while a flood is cut off within `burst` messages.
struct MessageRateLimiter {
    let burst: Double
    let perSecond: Double
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant

    init(burst: Int, perSecond: Double, now: ContinuousClock.Instant) {
        self.burst = Double(max(1, burst))
        self.perSecond = max(0, perSecond)
        self.tokens = self.burst
        self.refilledAt = now
    }

    /// Takes one token if there is one.
    mutating func allow(at now: ContinuousClock.Instant) -> Bool {
        let elapsed = now - refilledAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * perSecond)
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
