extension AudioChunk {
    /// Re-checks what the initialiser checked. `AudioChunk`'s fields are mutable, so a chunk
    /// that reaches a consumer may have been changed since it was made; the audio consumers
    /// call this before dividing by its rate or channel count.
    public func validate() throws(MediaError) {
        guard Self.sampleRateRange.contains(sampleRate) else {
            throw MediaError(.invalidAudio, "sample rate \(sampleRate) Hz is outside \(Self.sampleRateRange)")
        }
        guard Self.channelRange.contains(channels) else {
            throw MediaError(.invalidAudio, "channel count \(channels) is outside \(Self.channelRange)")
        }
        guard samples.count % channels == 0 else {
            throw MediaError(
                .invalidAudio,
                "\(samples.count) samples is not a whole number of \(channels)-channel frames"
            )
        }
    }
}
