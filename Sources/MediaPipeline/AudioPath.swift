import Media

/// Audio's way on the media thread: app and microphone chunks into the mixer (stereo, 48 kHz,
/// limited sum), 20 ms frames into Opus, packets sent (`MediaControl.deliver`: here, or by the
/// sender thread in order with the video).
/// Owned by the media thread; the frame, packet and queue buffers are reused, so steady state
/// allocates nothing.
final class AudioPath {
    private let mixer: AudioMixer
    private let opus: OpusEncoder
    private let control: MediaControl
    private var mixed = MixedFrame()
    private var packet = OpusPacket()

    init(options: MediaOptions, control: MediaControl) throws {
        mixer = try AudioMixer()
        var configuration = OpusEncoder.Configuration()
        configuration.bitrate = options.audioBitrate
        configuration.complexity = options.audioComplexity
        opus = try OpusEncoder(configuration: configuration)
        self.control = control
    }

    /// The Opus encoder's settings, as the options asked for them.
    var opusConfiguration: OpusEncoder.Configuration { opus.configuration }

    /// Queues `chunk` (stamped with its capture time) and sends every 20 ms frame it completes.
    func push(_ chunk: AudioChunk, from source: AudioSource) throws {
        try mixer.push(chunk, from: source)
        defer {
            let dropped = (app: mixer.statistics.app.framesDropped, mic: mixer.statistics.mic.framesDropped)
            control.statistics.withLock {
                $0.appAudioFramesDropped = dropped.app
                $0.micAudioFramesDropped = dropped.mic
            }
        }
        while mixer.mixNext(into: &mixed) {
            try opus.encode(mixed, into: &packet)
            // After a gap the RTP timestamp restarts from the capture time (the gap shows as a
            // gap) and the marker opens the new talkspurt (RFC 3551 §4.1), as after DTX.
            if mixed.followsGap { packet.isFirstAfterDTX = true }
            try control.deliver(audio: packet)
            control.statistics.withLock {
                $0.audioPackets += 1
                $0.audioBytes += packet.data.count
            }
        }
    }

    /// Forgets a source's queue and filter state (its capture client went away).
    func remove(_ source: AudioSource) { mixer.remove(source) }
}
