/// Where `rtc-publish`'s lines go. Progress (the status line, SDP files written, a viewer added
/// or connected) is what a user watches and what a script reads, and stays on stdout; a refusal
/// or an error (an offer refused, the signaling server unreachable, a capture picture refused, a
/// WHIP session that failed) goes to stderr. A pipe that reads stdout then never takes a problem
/// for progress, and `2>` collects every problem in one place, as for any Unix tool.
public struct PublishOutput: Sendable {
    /// Normal progress (stdout in rtc-publish).
    public var progress: @Sendable (String) -> Void
    /// A refusal or an error that does not end the session (stderr in rtc-publish).
    public var problem: @Sendable (String) -> Void

    public init(
        progress: @escaping @Sendable (String) -> Void,
        problem: @escaping @Sendable (String) -> Void
    ) {
        self.progress = progress
        self.problem = problem
    }
}
