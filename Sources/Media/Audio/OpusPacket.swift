/// One encoded Opus frame as the RTP payloader (RFC 7587) and the Ogg writer take it.
public struct OpusPacket: Sendable, Equatable {
    /// The Opus packet (RFC 6716 §3): TOC byte and frame data.
    public var data: [UInt8]
    /// Samples per channel at 48 kHz it decodes to (960 for 20 ms): the RTP timestamp step.
    public var sampleCount: Int
    /// Capture time of its first sample, in nanoseconds on the monotonic clock.
    public var captureTime: UInt64
    /// The first packet after one or more DTX packets: the payloader sets the RTP marker bit on
    /// it, as RFC 3551 §4.1 asks for the first packet of a talkspurt.
    public var isFirstAfterDTX: Bool

    public init(data: [UInt8] = [], sampleCount: Int = 0, captureTime: UInt64 = 0, isFirstAfterDTX: Bool = false) {
        self.data = data
        self.sampleCount = sampleCount
        self.captureTime = captureTime
        self.isFirstAfterDTX = isFirstAfterDTX
    }

    /// libopus returns packets of 2 bytes or less during DTX: they carry no audio and need not be
    /// sent (the receiver's concealment or comfort noise covers the gap).
    public var isDTX: Bool { data.count <= 2 }
}
