import ArgumentParser
import Publisher

/// The type of one option's value (a size, an address, a port range, a mode) as rtc-publish
/// reads it from the command line.
public protocol ArgumentValue: Sendable {
    /// Parses the text given after the option. The error says what is wrong with the text and
    /// leaves the option's name out: `Parsed.value(_:)` puts it in front.
    static func parse(_ text: String) throws(InvalidValue) -> Self
}

/// Why a text is not a value of its type, in words that follow the option's name
/// (`'0x0' is not WIDTHxHEIGHT with positive numbers`).
public struct InvalidValue: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// An option's value, parsed into its type when ArgumentParser reads it, or why it is not one.
///
/// An `ExpressibleByArgument` type can only fail, not say why, and ArgumentParser reports a
/// failure in its own words, with its usage text and exit status 64. rtc-publish's contract for
/// a bad argument is one line that names the problem and exit status 2 (`PublishError.Code.usage`),
/// with messages users and tests rely on. So the outcome of the parse is kept here, and
/// `value(_:)` throws it as that line when the validation reads the option: in the order the
/// checks have always run, so that of two mistakes the same one is reported as before.
public struct Parsed<Value: ArgumentValue>: ExpressibleByArgument, ExpressibleByStringLiteral, Sendable {
    /// The text as given, which the help shows as the default.
    public let text: String
    private let outcome: Result<Value, InvalidValue>

    public init(argument: String) {
        text = argument
        outcome = Result { () throws(InvalidValue) -> Value in try Value.parse(argument) }
    }

    /// A default, written as it would be given.
    public init(stringLiteral text: String) { self.init(argument: text) }

    public var defaultValueDescription: String { text }

    /// The value, or the usage error `<option> <reason>` for a text that is not one.
    public func value(_ option: String) throws(PublishError) -> Value {
        switch outcome {
        case .success(let value): return value
        case .failure(let invalid): throw PublishError(.usage, "\(option) \(invalid.reason)")
        }
    }
}
