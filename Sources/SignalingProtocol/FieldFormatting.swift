/// Helpers that make error messages name what and where without echoing unbounded input.

/// The longest stretch of a client's value quoted back in an error message.
let maxQuotedCharacters = 40

/// `value` in double quotes, control characters escaped, cut to ``maxQuotedCharacters``.
func quoted(_ value: String) -> String {
    "\"" + escaped(value) + "\""
}

/// `value` with `"`, `\` and control characters (C0 and DEL, as `\u{..}`) escaped, cut to
/// ``maxQuotedCharacters`` characters with an ellipsis.
private func escaped(_ value: String) -> String {
    var result = ""
    var count = 0
    for scalar in value.unicodeScalars {
        if count == maxQuotedCharacters {
            result += "…"
            break
        }
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            result += "\\u{\(String(scalar.value, radix: 16))}"
        default: result.unicodeScalars.append(scalar)
        }
        count += 1
    }
    return result
}

/// The most components of a coding path an error message names: the first and the last ones,
/// an ellipsis between (a client's nesting is bounded only by the line).
let maxPathComponents = 8

/// A coding path as a dotted field name with array indices: `stream.codecs[2]`. Keys are the
/// client's: control characters escaped, each cut to ``maxQuotedCharacters``, and a deep path
/// cut to its first 2 and last 5 components.
func fieldPath(_ path: [any CodingKey]) -> String {
    var result = ""
    func append(_ key: any CodingKey) {
        if let index = key.intValue {
            result += "[\(index)]"
        } else {
            let name = escaped(key.stringValue)
            result += result.isEmpty ? name : ".\(name)"
        }
    }
    if path.count > maxPathComponents {
        path.prefix(2).forEach(append)
        result += ".…"
        path.suffix(5).forEach(append)
    } else {
        path.forEach(append)
    }
    return "\"\(result.isEmpty ? "(message)" : result)\""
}
