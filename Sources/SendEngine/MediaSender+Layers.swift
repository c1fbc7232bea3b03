/// Simulcast layers per destination (Docs/simulcast.md): which layer each viewer of our room
/// watches, which layers an SFU still gets, and which layers are watched at all.
extension MediaSender {
    func updateWatchedLayers() {
        var mask: UInt32 = 0
        if layerViewers.count != layers.count { layerViewers = [Int](repeating: 0, count: layers.count) }
        for index in layerViewers.indices { layerViewers[index] = 0 }
        for destination in destinations {
            mask |= destination.watchedMask
            if let layer = destination.watchedLayer { layerViewers[layer] += 1 }
        }
        watchedLayers = mask
    }

    /// Follows each destination's estimate at `now`: a viewer of one layer moves to the layer
    /// it carries (`LayerSelection`), an SFU's highest layers are dropped while its estimate
    /// cannot carry them and taken back when it can (`LayerPolicy`); a layer moved to gets a
    /// key frame, through its limiter.
    func selectLayers(now: UInt64, actions: inout FeedbackActions) {
        guard layers.count > 1 else { return }
        let needs = configuration.simulcast?.needs ?? []
        if layerTargets.count != layers.count { layerTargets = [Int](repeating: 0, count: layers.count) }
        for index in layerTargets.indices { layerTargets[index] = index < needs.count ? needs[index] : 0 }
        for destination in destinations {
            if destination.selection != nil {
                selectLayer(of: destination, now: now)
            } else if destination.dropPolicy != nil {
                keepLayers(of: destination, now: now)
            }
        }
        actions.keyFrameLayers |= grantedKeyFrameLayers
        grantedKeyFrameLayers = 0
        updateWatchedLayers()
    }

    private func selectLayer(of destination: Destination, now: UInt64) {
        // A probe that found room showed the path carries its rate, as a layer probe does for a
        // receiver without transport feedback: a move up the estimate allows need not wait out
        // the hold (a viewer that starts on the lowest layer at an unknown path's start, D33,
        // moves up within a second of its probes instead of three).
        if destination.congestion.probeFoundRoom(within: Self.probeEvidenceWindow, at: now) {
            destination.selection?.probePassed(at: now)
        }
        guard let budget = destination.layerBudget(at: now),
            let layer = destination.selection?.choose(budget: budget.allowed, probed: budget.probed, at: now)
        else { return }
        // A lower layer's rate follows the least its viewers allow: the lowest layer is all a
        // viewer under its need can get, and at its full rate it would keep that path lossy.
        if layer > 0, layer < layerTargets.count, layerTargets[layer] > 0 {
            layerTargets[layer] = min(layerTargets[layer], max(Self.minimumLayerBitrate, budget.allowed))
        }
        guard destination.selection?.request(layer, at: now) == true else { return }
        requestKeyFrame(layer: layer, at: now)
    }

    /// The rate to probe `destination`'s path at now before it moves up a layer
    /// (`LayerProbe`), or nil: it watches a lower layer and waits for no move, its estimate
    /// would allow the next layer up (its need with `LayerPolicy.upMargin`) but its path has
    /// not shown it, and its probe may begin.
    func layerProbeRate(of destination: Destination, at now: UInt64) -> Int? {
        guard let probe = destination.layerProbe, probe.mayBegin(at: now),
            let selection = destination.selection, selection.pending == nil,
            let current = selection.current, current > 0, current < selection.policy.needs.count,
            let allowed = destination.allowedBitrate, let shown = destination.shownRate
        else { return nil }
        let rate = Int(Double(selection.policy.needs[current - 1]) * LayerPolicy.upMargin)
        let video = destination.congestion.encoderVote(allowed: allowed)
        guard video >= rate, max(shown, probe.provenRate(at: now)) < rate else { return nil }
        return rate
    }

    /// A probe's outcome: a passed one counts as the time a move up waits (`LayerPolicy.upHold`).
    func apply(_ outcome: LayerProbe.Outcome?, to destination: Destination, at now: UInt64) {
        guard case .passed = outcome else { return }
        destination.selection?.probePassed(at: now)
    }

    /// The least a lower layer's encoder is asked to make.
    public static let minimumLayerBitrate = 100_000

    private func keepLayers(of destination: Destination, now: UInt64) {
        guard let allowed = destination.allowedBitrate, var policy = destination.dropPolicy else { return }
        let video = destination.congestion.encoderVote(allowed: allowed)
        let from = policy.choose(current: destination.keptFrom, budget: video, probed: video, at: now)
        destination.dropPolicy = policy
        guard from != destination.keptFrom else { return }
        // Layers taken back start at a key frame for the SFU.
        for layer in from..<max(from, destination.keptFrom) { requestKeyFrame(layer: layer, at: now) }
        destination.keptFrom = from
        destination.layerMask = (1 << UInt32(layers.count)) - (1 << UInt32(from))
    }

    /// The first layer a new viewer of one layer waits for: the highest the start rate carries,
    /// or the lowest for one whose moves up wait for a probe (`LayerProbe`): its reports tell
    /// too late that a path cannot carry the start rate, after seconds of flooding it.
    func startSelection(of destination: Destination, now: UInt64) {
        guard let policy = destination.selection?.policy else { return }
        let layer =
            destination.layerProbe == nil
            ? policy.fitting(configuration.feedback.bitrate.start) : max(policy.needs.count - 1, 0)
        if destination.selection?.request(layer, at: now) == true { requestKeyFrame(layer: layer, at: now) }
    }

    /// A key frame of `layer` through its limiter; one granted now goes to the encoder with the
    /// next `pollFeedback`, one held back when the limiter allows.
    func requestKeyFrame(layer: Int, at now: UInt64) {
        if layers[layer].keyFrames.signaledRequest(at: now) { grantedKeyFrameLayers |= 1 << UInt32(layer) }
    }

    /// What `destination` lets layer 0's encoder make when it allows `allowed` on the wire: an
    /// SFU that also gets lower layers leaves them their rates (layer 0 keeps at least
    /// `minimumTopLayerBitrate`). Nil when it does not get layer 0 now.
    func layerZeroVote(of destination: Destination, allowed: Int) -> Int? {
        guard destination.forwards(0) else { return nil }
        let vote = vote(of: destination, allowed: allowed)
        guard destination.dropPolicy != nil, let needs = configuration.simulcast?.needs, needs.count > 1 else {
            return vote
        }
        return max(Self.minimumTopLayerBitrate, vote - needs.dropFirst().reduce(0, +))
    }

    /// How recent a probe that found room must be to count for a move up, ns.
    static let probeEvidenceWindow: UInt64 = 1_000_000_000

    /// The least layer 0 is given when the lower layers take most of an SFU's estimate.
    public static let minimumTopLayerBitrate = 150_000
}
