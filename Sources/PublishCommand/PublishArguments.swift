import ArgumentParser

/// Everything rtc-publish can be told, in groups as `--help` shows them. Parsing only reads
/// the values (each option's type parses its own, `Parsed`); `publishOptions(files:)` checks
/// them together and makes the session's `PublishOptions`.
public struct PublishArguments: ParsableArguments {
    @OptionGroup(title: "Signaling") public var signaling: SignalingArguments
    @OptionGroup(title: "Input") public var input: InputArguments
    @OptionGroup(title: "Encoder") public var encoder: EncoderArguments
    @OptionGroup(title: "Feedback and congestion control") public var feedback: FeedbackArguments
    @OptionGroup(title: "Output") public var output: OutputArguments
    @OptionGroup(title: "WebRTC") public var webRTC: WebRTCArguments
    @OptionGroup(title: "WHIP") public var whip: WHIPArguments

    public init() {}
}
