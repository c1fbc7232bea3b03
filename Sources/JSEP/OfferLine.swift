/// One line of an offer the strict SDP parser has already accepted, seen again with its number.
///
/// `SDPParser` keeps no line numbers in its values, yet every error about a WebRTC attribute must
/// name its line. Once the strict parser has accepted the text, its line structure is known to
/// be sound (`<letter>=<value>`, CRLF or LF, empty lines only at the end), so walking it a second
/// time is a plain split and cannot disagree with the parser about which line is which.
struct OfferLine {
    /// 1-based, counted as `SDPParser` counts (every LF ends a line).
    let number: Int
    let type: Character
    let value: Substring

    /// The offer's lines; call only on text `SDPParser` accepted.
    static func lines(of bytes: [UInt8]) -> [OfferLine] {
        var lines: [OfferLine] = []
        var number = 0
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            var content = raw
            if content.last == 0x0D { content = content.dropLast() }
            guard content.count >= 2 else { continue }
            let text = String(decoding: content, as: UTF8.self)
            lines.append(
                OfferLine(
                    number: number,
                    type: Character(Unicode.Scalar(content[content.startIndex])),
                    value: Substring(text.unicodeScalars.dropFirst(2))
                )
            )
        }
        return lines
    }

    /// For `a=` lines: the attribute name and its value (nil when there is no `:`).
    var attribute: (name: Substring, value: Substring?) {
        let scalars = value.unicodeScalars
        guard let colon = scalars.firstIndex(of: ":") else { return (value, nil) }
        return (Substring(scalars[..<colon]), Substring(scalars[scalars.index(after: colon)...]))
    }

    /// The line as an error shows it: at most 60 printable characters, and never an ICE password.
    var excerpt: String {
        if type == "a", attribute.name == "ice-pwd" { return "a=ice-pwd:<redacted>" }
        return Excerpt.of("\(type)=\(value)", limit: 60)
    }

    /// A parse error at this line: `line N (<excerpt>): <problem>`.
    func error(_ problem: String, code: JSEPError.Code = .malformedOffer) -> JSEPError {
        JSEPError(code: code, line: number, reason: "line \(number) (\(excerpt)): \(problem)")
    }
}

/// Untrusted text shortened for a message: printable ASCII, anything else as `?`.
enum Excerpt {
    static func of(_ text: some StringProtocol, limit: Int = 40) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { return out + "..." }
            out.unicodeScalars.append((0x20..<0x7F).contains(scalar.value) ? scalar : "?")
            count += 1
        }
        return out
    }

    /// `'text'`, shortened.
    static func quoted(_ text: some StringProtocol, limit: Int = 40) -> String {
        "'" + of(text, limit: limit) + "'"
    }
}
