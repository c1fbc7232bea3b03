/// How an ``IngestServer`` listens and how much it holds.
public struct IngestServerConfiguration: Sendable {
    /// What a capture client may send.
    public var limits: IngestLimits
    /// The name the host gives in its hello.
    public var hostName: String
    /// What the host accepts, announced in its hello.
    public var capabilities: IngestCapabilities
    /// A connection that has not said hello by then is ended with `timeout`; it holds the one
    /// capture slot until then.
    public var helloTimeout: Duration
    /// A message begun must be complete within this long, or the session is ended with
    /// `timeout`: a client stalled mid-message would otherwise hold the capture slot. Silence
    /// between messages is allowed (a paused broadcast sends nothing).
    public var messageTimeout: Duration
    /// After sending an end message the host half-closes and waits this long for the client to
    /// close, so the end message is read rather than lost to a reset.
    public var lingerTimeout: Duration
    /// Video frames queued for a slow consumer before the oldest is dropped.
    public var videoQueueLimit: Int
    /// Audio chunks queued for a slow consumer before the oldest is dropped (about 1.5 s of
    /// ReplayKit's two sources at the default).
    public var audioQueueLimit: Int
    /// Other events queued before the session producing them waits.
    public var otherQueueLimit: Int
    /// TCP addresses other than loopback are refused unless this is set: the socket is neither
    /// encrypted nor authenticated.
    public var allowNonLoopbackTCP: Bool

    public init(
        limits: IngestLimits = IngestLimits(),
        hostName: String = "rtc-publish",
        capabilities: IngestCapabilities = .all,
        helloTimeout: Duration = .seconds(5),
        messageTimeout: Duration = .seconds(5),
        lingerTimeout: Duration = .seconds(1),
        videoQueueLimit: Int = 2,
        audioQueueLimit: Int = 64,
        otherQueueLimit: Int = 32,
        allowNonLoopbackTCP: Bool = false
    ) {
        self.limits = limits
        self.hostName = hostName
        self.capabilities = capabilities
        self.helloTimeout = helloTimeout
        self.messageTimeout = messageTimeout
        self.lingerTimeout = lingerTimeout
        self.videoQueueLimit = videoQueueLimit
        self.audioQueueLimit = audioQueueLimit
        self.otherQueueLimit = otherQueueLimit
        self.allowNonLoopbackTCP = allowNonLoopbackTCP
    }

    func validate() throws(IngestError) {
        try limits.validate()
        guard helloTimeout > .zero, messageTimeout > .zero, lingerTimeout >= .zero else {
            throw IngestError(
                .invalidOption,
                "the hello and message timeouts must be positive and the linger time not negative"
            )
        }
        guard videoQueueLimit >= 1, audioQueueLimit >= 1, otherQueueLimit >= 4 else {
            throw IngestError(
                .invalidOption,
                "queue limits must be at least 1 video frame, 1 audio chunk and 4 other events"
            )
        }
    }
}
