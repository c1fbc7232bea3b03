/// The over-use detector's verdict on the path (draft-ietf-rmcat-gcc-02 §5.4): the signal the
/// rate controller acts on.
enum BandwidthUsage: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Queues neither build nor drain beyond the adaptive threshold.
    case normal
    /// The delay trend stayed above the threshold long enough: a queue is building, we send more
    /// than the path carries.
    case overusing
    /// The delay trend is below minus the threshold: a queue is draining.
    case underusing

    var description: String { rawValue }
}
