/// One link-value of a Link header (RFC 8288 §3): the target and its parameters in order, names
/// lowercased, values unquoted (nil for a parameter given without "=").
struct LinkValue: Equatable {
    var target: String
    var parameters: [(name: String, value: String?)]

    /// §3: a parameter given twice counts by its first occurrence ("rel" MUST be ignored after it).
    func first(_ name: String) -> (name: String, value: String?)? {
        parameters.first { $0.name == name }
    }

    static func == (lhs: LinkValue, rhs: LinkValue) -> Bool {
        lhs.target == rhs.target && lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
    }
}

/// A link-value that does not follow RFC 8288's syntax; the target when it was read.
struct LinkSyntaxError: Error, Equatable {
    var target: String?
    var reason: String
}

/// RFC 8288 §3 `Link = #link-value`, with
/// `link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )` and
/// `link-param = token BWS [ "=" BWS ( token / quoted-string ) ]` (RFC 9110 §5.6 for `#`, token,
/// quoted-string). A malformed link-value is reported and the parser goes on at the next comma
/// outside quotes and angle brackets, so one bad entry never hides the others.
struct LinkHeaderParser {
    private let bytes: [UInt8]
    private var index = 0
    private let maximumLinkValueBytes: Int

    private init(_ fieldValue: String, maximumLinkValueBytes: Int) {
        self.bytes = Array(fieldValue.utf8)
        self.maximumLinkValueBytes = maximumLinkValueBytes
    }

    /// Every link-value in one field value, in order, each parsed or with the reason it is not.
    static func parse(_ fieldValue: String, maximumLinkValueBytes: Int) -> [Result<LinkValue, LinkSyntaxError>] {
        var parser = LinkHeaderParser(fieldValue, maximumLinkValueBytes: maximumLinkValueBytes)
        var results: [Result<LinkValue, LinkSyntaxError>] = []
        while true {
            // RFC 9110 §5.6.1: empty list elements are allowed and ignored.
            parser.skip { $0 == UInt8(ascii: ",") || $0.isWhitespace }
            guard parser.index < parser.bytes.count else { return results }
            let start = parser.index
            var result = Result { () throws(LinkSyntaxError) in try parser.linkValue() }
            if case .failure = result {
                parser.skipToNextLinkValue()
            }
            if parser.index - start > maximumLinkValueBytes {
                let target = try? result.get().target
                result = .failure(LinkSyntaxError(target: target, reason: "longer than \(maximumLinkValueBytes) bytes"))
            }
            results.append(result)
        }
    }

    private mutating func linkValue() throws(LinkSyntaxError) -> LinkValue {
        guard peek == UInt8(ascii: "<") else {
            throw LinkSyntaxError(target: nil, reason: "no '<' at the start of the link")
        }
        index += 1
        let start = index
        while let byte = peek, byte != UInt8(ascii: ">") {
            guard (0x21...0x7E).contains(byte), byte != UInt8(ascii: "<") else {
                throw LinkSyntaxError(target: nil, reason: "a space or invalid character inside '<...>'")
            }
            index += 1
        }
        guard peek == UInt8(ascii: ">") else {
            throw LinkSyntaxError(target: nil, reason: "no '>' after the target")
        }
        var link = LinkValue(target: String(decoding: bytes[start..<index], as: UTF8.self), parameters: [])
        index += 1
        do throws(LinkSyntaxError) {
            while true {
                skip { $0.isWhitespace }
                guard let byte = peek, byte != UInt8(ascii: ",") else { return link }
                guard byte == UInt8(ascii: ";") else {
                    throw LinkSyntaxError(
                        target: nil,
                        reason: "'\(Printable.text([byte], limit: 1))' where ';' or ',' belongs"
                    )
                }
                index += 1
                skip { $0.isWhitespace }
                if let next = peek, next == UInt8(ascii: ";") || next == UInt8(ascii: ",") { continue }
                if peek == nil { return link }
                link.parameters.append(try parameter())
            }
        } catch {
            throw LinkSyntaxError(target: link.target, reason: error.reason)
        }
    }

    private mutating func parameter() throws(LinkSyntaxError) -> (name: String, value: String?) {
        let name = String(decoding: token(), as: UTF8.self).lowercased()
        guard !name.isEmpty else {
            throw LinkSyntaxError(target: nil, reason: "a parameter without a name")
        }
        skip { $0.isWhitespace }
        guard peek == UInt8(ascii: "=") else { return (name, nil) }
        index += 1
        skip { $0.isWhitespace }
        let value: [UInt8]
        if peek == UInt8(ascii: "\"") {
            value = try quotedString(of: name)
        } else {
            value = Array(token())
            guard !value.isEmpty else {
                throw LinkSyntaxError(target: nil, reason: "parameter '\(name)' has no value after '='")
            }
        }
        guard let text = String(validating: value, as: UTF8.self) else {
            throw LinkSyntaxError(target: nil, reason: "parameter '\(name)' is not UTF-8")
        }
        return (name, text)
    }

    /// RFC 9110 §5.6.4: `DQUOTE *( qdtext / quoted-pair ) DQUOTE`, a backslash escaping the next byte.
    /// A control character is reported once the closing quote is found, so parsing resumes after it.
    private mutating func quotedString(of name: String) throws(LinkSyntaxError) -> [UInt8] {
        index += 1
        var value: [UInt8] = []
        var valid = true
        while var byte = peek {
            index += 1
            if byte == UInt8(ascii: "\"") {
                guard valid else {
                    throw LinkSyntaxError(target: nil, reason: "parameter '\(name)' has a control character")
                }
                return value
            }
            if byte == UInt8(ascii: "\\") {
                guard let escaped = peek else { break }
                byte = escaped
                index += 1
                valid = valid && (byte.isQuotedText || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\"))
            } else {
                valid = valid && byte.isQuotedText
            }
            value.append(byte)
        }
        throw LinkSyntaxError(target: nil, reason: "parameter '\(name)' has no closing '\"'")
    }

    private mutating func token() -> ArraySlice<UInt8> {
        let start = index
        skip { $0.isTokenCharacter }
        return bytes[start..<index]
    }

    /// After an error: on to the next comma that is not inside a quoted string or `<...>`.
    private mutating func skipToNextLinkValue() {
        while let byte = peek, byte != UInt8(ascii: ",") {
            index += 1
            let closing: UInt8? =
                switch byte {
                case UInt8(ascii: "\""): UInt8(ascii: "\"")
                case UInt8(ascii: "<"): UInt8(ascii: ">")
                default: nil
                }
            guard let closing else { continue }
            while let inner = peek, inner != closing {
                index += inner == UInt8(ascii: "\\") && closing == UInt8(ascii: "\"") ? 2 : 1
            }
            index = min(index + 1, bytes.count)
        }
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skip(while matches: (UInt8) -> Bool) {
        while let byte = peek, matches(byte) {
            index += 1
        }
    }
}

extension UInt8 {
    /// OWS and BWS: space and horizontal tab.
    fileprivate var isWhitespace: Bool { self == 0x20 || self == 0x09 }

    /// RFC 9110 §5.6.2 tchar.
    fileprivate var isTokenCharacter: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(self)
        }
    }

    /// qdtext and the bytes a quoted-pair may escape: HTAB, SP, VCHAR except `"` and `\`, obs-text.
    fileprivate var isQuotedText: Bool {
        self == 0x09 || self == 0x20 || self == 0x21 || (0x23...0x5B).contains(self) || (0x5D...0x7E).contains(self)
            || self >= 0x80
    }
}
