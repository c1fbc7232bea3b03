/// Helpers that make error messages name what and where without echoing unbounded input.

/// The longest stretch of a client's value quoted back in an error message.
let maxQuotedCharacters = 40

/// `value` in double quotes, control characters escaped, cut to ``maxQuotedCharacters``.
func quoted(_ value: String) -> String {
    var result = "\""
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
    return result + "\""
}

/// A coding path as a dotted field name with array indices: `stream.codecs[2]`.
func fieldPath(_ path: [any CodingKey]) -> String {
    var result = ""
    for key in path {
        if let index = key.intValue {
            result += "[\(index)]"
        } else {
            result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return "\"\(result.isEmpty ? "(message)" : result)\""
}
