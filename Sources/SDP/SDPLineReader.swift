/// One `<type>=<value>` line of a description.
struct SDPLine {
    /// 1-based, for error messages.
    let number: Int
    /// The type letter, `a` to `z`.
    let type: Character
    let value: Substring
}

/// Splits raw input into typed lines, enforcing the size limits before anything is allocated.
///
/// RFC 8866 §5 ends lines with CRLF but asks parsers to accept a bare LF too; both are accepted.
/// Empty lines at the very end are ignored; anywhere else they are an error.
enum SDPLineReader {
    static func lines(of bytes: [UInt8], limits: SDPParser.Limits) throws -> [SDPLine] {
        try checkLimits(bytes, limits)
        var lines: [SDPLine] = []
        var number = 0
        var start = 0
        var pendingEmptyLine: Int?
        while start < bytes.count {
            number += 1
            let newline = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            var end = newline
            if end > start && bytes[end - 1] == 0x0D { end -= 1 }
            let content = bytes[start..<end]
            start = newline + 1
            if content.isEmpty {
                pendingEmptyLine = pendingEmptyLine ?? number
                continue
            }
            if let empty = pendingEmptyLine {
                throw SDPError.at(empty, .malformedLine, "empty line inside the description")
            }
            lines.append(try line(number: number, content))
        }
        return lines
    }

    /// Total size, line count and line length, in one pass over the bytes.
    private static func checkLimits(_ bytes: [UInt8], _ limits: SDPParser.Limits) throws {
        guard bytes.count <= limits.maximumBytes else {
            throw SDPError(
                code: .tooLarge,
                message: "description of \(bytes.count) bytes exceeds the limit of \(limits.maximumBytes)"
            )
        }
        var lineCount = 0
        var lineStart = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
            if index == bytes.count && index == lineStart { break }
            lineCount += 1
            guard lineCount <= limits.maximumLines else {
                throw SDPError(
                    code: .tooManyLines,
                    message: "description has more than \(limits.maximumLines) lines"
                )
            }
            var length = index - lineStart
            if length > 0 && bytes[index - 1] == 0x0D { length -= 1 }
            guard length <= limits.maximumLineLength else {
                throw SDPError.at(
                    lineCount,
                    .lineTooLong,
                    "line is longer than \(limits.maximumLineLength) characters"
                )
            }
            lineStart = index + 1
        }
    }

    private static func line(number: Int, _ content: ArraySlice<UInt8>) throws -> SDPLine {
        if content.contains(0x0D) {
            throw SDPError.at(number, .invalidCharacters, "carriage return inside the line")
        }
        if content.contains(0) {
            throw SDPError.at(number, .invalidCharacters, "NUL character inside the line")
        }
        guard let text = String(validating: content, as: UTF8.self) else {
            throw SDPError.at(number, .invalidCharacters, "line is not valid UTF-8")
        }
        guard let letter = content.first, (0x61...0x7A).contains(letter),
            content.dropFirst().first == UInt8(ascii: "=")
        else {
            throw SDPError.at(number, .malformedLine, "expected '<letter>=' at the start of \(quoted(text))")
        }
        return SDPLine(
            number: number,
            type: Character(Unicode.Scalar(letter)),
            value: Substring(text.unicodeScalars.dropFirst(2))
        )
    }
}
