/// Where audio comes from, for tools and the publisher: the synthetic tone + beep, a WAV file, or
/// nothing.
public enum AudioInputKind: Sendable, Equatable {
    case synthetic
    case wav(path: String)
    case none

    /// Parses a command-line value: `test`, `none`, or a `.wav` path.
    public init(argument: String) throws(MediaError) {
        switch argument {
        case "test": self = .synthetic
        case "none": self = .none
        default:
            guard argument.hasSuffix(".wav") else {
                throw MediaError(.invalidSetting, "audio input '\(argument)' is not 'test', 'none' or a .wav file")
            }
            self = .wav(path: argument)
        }
    }
}
