import Media

/// What `rtc-capture-sim` does; times are seconds from the start of the run.
public struct CaptureSimulatorOptions: Sendable {
    public var address: IngestAddress
    public var duration: Double
    public var width = 886
    public var height = 1920
    public var frameRate = 30
    public var audioSources: [AudioSource] = [.app, .mic]
    /// Stamp frames like seed 001's host did: `CMTimeMake(frameTime += 1000, 1000)`, one second
    /// per frame. Audio keeps its real timestamps.
    public var bogusTimestamps = false
    public var pauseAt: Double?
    public var resumeAt: Double?
    /// Drop the connection (no end message) at this time, reconnect after `reconnectDelay`.
    public var disconnectAt: Double?
    public var reconnectDelay = 0.3
    /// Send one malformed message after the first frame and report the host's answer.
    public var garbage: GarbageKind?
    /// The rotation each frame carries, as a device held sideways reports it: the buffer holds
    /// the upright picture turned the other way (886x1920 upright at 90 travels as 1920x886),
    /// and the host must turn it back.
    public var rotation: Rotation = .none
    /// Send video as fast as the connection takes it, stamped as if at `frameRate`: a capture
    /// side that floods the host (tests that the host drops rather than queues).
    public var flood = false
    public var name = "rtc-capture-sim"

    public init(address: IngestAddress, duration: Double) {
        self.address = address
        self.duration = duration
    }

    public func validate() throws(IngestError) {
        func require(_ condition: Bool, _ message: String) throws(IngestError) {
            guard condition else { throw IngestError(.invalidOption, message) }
        }
        try address.requireLoopback(unless: false)
        try require(duration > 0 && duration <= 86_400, "duration \(duration) s is outside 0–86400")
        try require(
            width >= 160 && height >= 96 && width <= 4096 && height <= 4096 && width % 2 == 0 && height % 2 == 0,
            "size \(width)x\(height) must be even and within 160x96…4096x4096"
        )
        try require((1...120).contains(frameRate), "frame rate \(frameRate) is outside 1–120")
        try require(Set(audioSources).count == audioSources.count, "an audio source is named twice")
        try require(resumeAt == nil || pauseAt != nil, "--resume-at needs --pause-at")
        if let pauseAt {
            try require(pauseAt > 0 && pauseAt < duration, "--pause-at \(pauseAt) must be inside the duration")
            if let resumeAt {
                try require(
                    resumeAt > pauseAt && resumeAt < duration,
                    "--resume-at must be after --pause-at and inside the duration"
                )
            }
        }
        if let disconnectAt {
            try require(
                disconnectAt > 0 && disconnectAt < duration,
                "--disconnect-at \(disconnectAt) must be inside the duration"
            )
        }
        try require((0...10).contains(reconnectDelay), "reconnect delay \(reconnectDelay) s is outside 0–10")
        try require(!name.isEmpty && name.utf8.count <= IngestHello.maxNameBytes, "name must be 1–64 bytes")
    }

    /// The capabilities the hello announces.
    var capabilities: IngestCapabilities {
        var capabilities: IngestCapabilities = [.video, .pauseResume]
        if audioSources.contains(.app) { capabilities.insert(.appAudio) }
        if audioSources.contains(.mic) { capabilities.insert(.micAudio) }
        return capabilities
    }
}
