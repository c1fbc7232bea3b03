/// One message of the ingest protocol, as the parser returns it and the serializer takes it.
public enum IngestMessage: Sendable {
    case hello(IngestHello)
    case video(IngestVideo)
    case audio(IngestAudio)
    case control(IngestControl)

    public var type: IngestMessageType {
        switch self {
        case .hello: .hello
        case .video: .video
        case .audio: .audio
        case .control: .control
        }
    }

    /// An end message.
    public static func end(_ reason: IngestEndReason, _ text: String) -> IngestMessage {
        .control(.end(reason, text))
    }
}
