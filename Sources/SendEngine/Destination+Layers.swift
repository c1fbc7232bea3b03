import RTP

extension Destination {
    /// Whether packets of video layer `layer` go to it now.
    func forwards(_ layer: Int) -> Bool { layerMask & (1 << UInt32(layer)) != 0 }

    /// A picture of `layer` starting at sequence number `first` is being cut: a viewer of one
    /// layer takes it or not, and moves at the key frame it waits for (`LayerSelection.admit`).
    /// True when it moved to another layer.
    func admit(layer: Int, isKeyFrame: Bool, first: UInt16) -> Bool {
        // A move drops the old layer's pictures still in the pacer: they would only hold the
        // new layer's key frame back on a path too slow for the old layer.
        let rewinding = congestion.isPaced && selection?.moves(layer: layer, isKeyFrame: isKeyFrame) == true
        if rewinding { _ = congestion.dropQueuedVideo() }
        guard selection?.admit(layer: layer, isKeyFrame: isKeyFrame, first: first, rewinding: rewinding) == true,
            let current = selection?.current, layerMask != 1 << UInt32(current)
        else { return false }
        layerMask = 1 << UInt32(current)
        return true
    }

    /// The layers it gets or waits for, bit i for layer i.
    var watchedMask: UInt32 { selection?.watchedMask ?? layerMask }

    /// The layer it watches now (a viewer of one layer), else nil.
    public var watchedLayer: Int? { selection?.current }

    /// The viewer's switches between layers so far.
    public var layerSwitches: Int { selection?.switches ?? 0 }

    /// How long the highest rate a loss-only receiver was sent counts as shown.
    static let probedWindow: UInt64 = 10_000_000_000

    /// For a receiver that reports only loss, 1.5 times the most video it was sent within
    /// `probedWindow` (as of the last `layerBudget`); nil for one that measures the path.
    var shownRate: Int? {
        guard !congestion.hasTransportFeedback, feedback.statistics.receiverEstimatedMaximumBitrate == nil else {
            return nil
        }
        return probed.bitsPerSecond * 3 / 2
    }

    /// The video rate it allows for the choice of layers at `now`, and the part of that its
    /// path has shown it carries (moves up follow that part). A receiver that measures the path
    /// (transport-wide feedback, which our probes raise, or its own REMB) has shown all of it;
    /// one that reports only loss has shown its `shownRate` or what a `LayerProbe` passed at, since
    /// a loss-based estimate grows whether or not the path could carry more. Nil until it reported.
    func layerBudget(at now: UInt64) -> (allowed: Int, probed: Int)? {
        guard let allowed = allowedBitrate else { return nil }
        // Layers are compared by their video rates: the video share of the wire rate.
        let video = congestion.encoderVote(allowed: allowed)
        let rate = videoSent.bitsPerSecond(at: now)
        if rate >= probed.bitsPerSecond || now &- probed.at > Self.probedWindow { probed = (rate, now) }
        return (video, shownRate.map { max($0, layerProbe?.provenRate(at: now) ?? 0) } ?? video)
    }
}
