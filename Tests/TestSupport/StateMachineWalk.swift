/// A state machine (a value whose steps return what they did) walked one step at a time, with
/// the steps that brought it where it is. The WHIP session's, the WebRTC viewer's and DTLS's
/// state-machine suites each replayed paths of steps from a fresh machine and walked seeded
/// random sequences with a copy of the same loops; this is those loops once, and it keeps the
/// history so that a failed check can name it (`"\(walk)"`: "start → answer → transportLost").
public struct StateMachineWalk<Machine, Step, Output>: CustomStringConvertible {
    /// The machine after `steps`.
    public private(set) var machine: Machine
    /// The steps taken so far, first to last.
    public private(set) var steps: [Step] = []
    private let apply: (inout Machine, Step) -> Output

    /// `machine` walked through `path`; `apply` takes one step.
    public init(_ machine: Machine, through path: [Step] = [], _ apply: @escaping (inout Machine, Step) -> Output) {
        self.machine = machine
        self.apply = apply
        for step in path { take(step) }
    }

    /// Takes `step`: what the machine did.
    @discardableResult
    public mutating func take(_ step: Step) -> Output {
        steps.append(step)
        return apply(&machine, step)
    }

    /// The steps, "start → answer → transportLost"; "no step" for a fresh machine.
    public var description: String {
        steps.isEmpty ? "no step" : steps.map { "\($0)" }.joined(separator: " → ")
    }

    /// `count` sequences of `length` steps drawn from `choices` by a 64-bit LCG (Knuth's MMIX
    /// constants) from `seed`: the same sequences on every run, so a failure repeats.
    public static func randomSequences(of choices: [Step], count: Int, length: Int, seed: UInt64) -> [[Step]] {
        var state = seed
        return (0..<count).map { _ in
            (0..<length).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return choices[Int((state >> 33) % UInt64(choices.count))]
            }
        }
    }
}
