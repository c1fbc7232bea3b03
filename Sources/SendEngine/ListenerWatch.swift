/// Whether a receiver that cannot ask for key frames (the preview, `--to`, a room subscriber
/// with an SDP file: ffplay sends no RTCP at all) listens where its packets go, told by the
/// ICMP port unreachable its host answers while nobody does (`UDPSocket.reportUnreachable`).
/// Only a receiver on this machine is watched: loopback answers every datagram, while a remote
/// host or a firewall may answer none.
///
/// A receiver that starts listening after its packets were refused has missed the key frame:
/// it gets an intra-refresh wave at once (Docs/cadence.md), instead of waiting for the next
/// periodic one; while every such receiver is watched, a still screen needs no periodic wave.
/// Times are monotonic nanoseconds.
struct ListenerWatch {
    enum State: Equatable {
        /// Nothing refused yet: listening since the first packet, as far as anyone can tell.
        case unknown
        /// The last refusal came at `last`.
        case refused(last: UInt64)
        case listening
    }

    /// How long without a refusal, after refusals, counts as listening: the idle repeat of a
    /// still screen goes once a second, so a port still closed is refused within that.
    static let quiet: UInt64 = 1_500_000_000

    private(set) var state = State.unknown
    /// Receivers that started listening after refusals.
    private(set) var starts = 0

    /// `refusals` came back by `now`; true when a receiver just started listening.
    mutating func update(refusals: Int, at now: UInt64) -> Bool {
        if refusals > 0 {
            state = .refused(last: now)
            return false
        }
        guard case .refused(let last) = state, now &- last >= Self.quiet else { return false }
        state = .listening
        starts += 1
        return true
    }
}
