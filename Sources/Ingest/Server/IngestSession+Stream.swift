import Logging
import NIOCore

extension IngestSession {
    /// How a session's stream of messages stopped.
    enum Ending {
        /// The capture sent an end message.
        case endedByCapture(IngestSessionEnd)
        /// The host ends it and must tell the client why.
        case endedByHost(IngestSessionEnd)
        /// The connection closed or failed.
        case lost(IngestSessionEnd)
    }

    /// Passes media and control on until the session ends; returns how it ended.
    func stream(_ inbound: inout Inbound, _ log: Logger) async -> Ending {
        var paused = false
        while true {
            switch await next(&inbound) {
            case .message(.video(let video), let length, let arrival):
                state.count { stats in
                    stats.videoFramesIn += 1
                    stats.bytesIn += length
                    if paused { stats.videoFramesDroppedWhilePaused += 1 }
                }
                guard !paused else { continue }
                var frame = video.frame
                frame.captureTime = arrival
                queue.pushVideo(
                    IngestVideoEvent(
                        frame: frame,
                        timestamp: video.timestamp,
                        arrival: arrival,
                        discontinuity: video.flags.contains(.discontinuity)
                    )
                )
            case .message(.audio(let audio), let length, let arrival):
                state.count { stats in
                    stats.audioChunksIn += 1
                    stats.bytesIn += length
                    if paused { stats.audioChunksDroppedWhilePaused += 1 }
                }
                guard !paused else { continue }
                do {
                    let chunk = try audio.chunk(captureTime: arrival)
                    queue.pushAudio(
                        IngestAudioEvent(
                            chunk: chunk,
                            source: audio.source,
                            sampleFormat: audio.samples.format,
                            timestamp: audio.timestamp,
                            arrival: arrival,
                            discontinuity: audio.flags.contains(.discontinuity)
                        )
                    )
                } catch {
                    state.count { $0.protocolErrors += 1 }
                    return .endedByHost(IngestSessionEnd(reason: .malformedMessage, message: error.message))
                }
            case .message(.control(let control), let length, _):
                state.count { $0.bytesIn += length }
                switch control {
                case .pause:
                    if !paused { await queue.push(.paused) }
                    paused = true
                case .resume:
                    if paused { await queue.push(.resumed) }
                    paused = false
                case .end(let reason, let message):
                    return .endedByCapture(IngestSessionEnd(reason: reason, message: message))
                }
            case .message(.hello, _, _):
                state.count { $0.protocolErrors += 1 }
                return .endedByHost(
                    IngestSessionEnd(reason: .unexpectedMessage, message: "a second hello in one session")
                )
            case .protocolError(let error):
                state.count { $0.protocolErrors += 1 }
                return .endedByHost(IngestSessionEnd(reason: error.reasonForPeer, message: error.message))
            case .hostEnd(let reason, let message):
                return .endedByHost(IngestSessionEnd(reason: reason, message: message))
            case .helloDeadline:
                continue
            case .closedMidMessage(let detail):
                return .lost(IngestSessionEnd(reason: .disconnected, message: detail))
            case nil:
                return .lost(
                    IngestSessionEnd(
                        reason: .disconnected,
                        message: "the capture client closed the connection without an end message"
                    )
                )
            }
        }
    }
}
