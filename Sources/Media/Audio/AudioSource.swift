/// The two audio inputs of a screen share, as ReplayKit delivers them: what the shared app
/// plays, and the presenter's microphone. Each arrives at its own rate, channel count and
/// chunk size; `AudioMixer` turns them into one stream.
public enum AudioSource: Int, Sendable, CaseIterable, CustomStringConvertible {
    case app
    case mic

    public var description: String {
        switch self {
        case .app: "app"
        case .mic: "mic"
        }
    }
}
