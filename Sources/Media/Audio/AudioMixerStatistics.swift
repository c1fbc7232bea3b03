extension AudioMixer {
    /// What happened to one source. Frame counts are 48 kHz stereo frames after resampling.
    public struct SourceStatistics: Sendable, Equatable {
        public var chunksIn = 0
        public var framesIn = 0
        /// Frames that arrived stamped before the mixer's output position (a stalled source's
        /// backlog, or the overlap of a timestamp that jumped back) and were not played.
        public var framesDroppedLate = 0
        /// Oldest frames dropped because the source's FIFO was full.
        public var framesDroppedOverflow = 0
        /// Frames of silence put into a gap between one chunk's timestamp and the next.
        public var silenceFramesInserted = 0
        /// Output frames this source, once heard from, could not fill completely.
        public var underruns = 0
        /// Times the mixer stopped waiting for this source after the jitter allowance.
        public var stalls = 0
        /// Chunks whose timestamp disagreed with the sample count by more than the tolerance.
        public var timestampResyncs = 0
        /// Times the source's sample rate or channel count changed (a new resampler).
        public var formatChanges = 0

        public var framesDropped: Int { framesDroppedLate + framesDroppedOverflow }

        public init() {}
    }

    public struct Statistics: Sendable, Equatable {
        public var framesOut = 0
        /// Times every source had stopped and the output timeline jumped to where audio resumed.
        public var timelineJumps = 0
        /// Output samples the soft limiter shaped (the sum went above −1 dBFS).
        public var limitedSamples = 0
        public var app = SourceStatistics()
        public var mic = SourceStatistics()

        public init() {}

        public subscript(source: AudioSource) -> SourceStatistics {
            get {
                switch source {
                case .app: app
                case .mic: mic
                }
            }
            set {
                switch source {
                case .app: app = newValue
                case .mic: mic = newValue
                }
            }
        }
    }
}
