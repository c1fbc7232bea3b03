/// Value rules for free-form string fields, applied while decoding so a bad value is reported
/// with its field path and never reaches the room logic.
enum FieldRules {
    /// A bounded string without control characters (names, codec labels, reasons).
    static func text(
        _ value: String,
        maxBytes: Int,
        allowEmpty: Bool = false,
        at path: [any CodingKey]
    ) throws -> String {
        if value.isEmpty && !allowEmpty {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) must not be empty")
        }
        guard value.utf8.count <= maxBytes else {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) is longer than \(maxBytes) bytes")
        }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) must not contain control characters")
        }
        return value
    }

    /// An SDP body: bounded, and starting with the `v=0` line RFC 8866 §5 puts first.
    static func sdp(_ value: String, at path: [any CodingKey]) throws -> String {
        guard value.utf8.count <= SignalingProtocol.maxSDPBytes else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(path)) is longer than \(SignalingProtocol.maxSDPBytes) bytes"
            )
        }
        guard value.hasPrefix("v=0") else {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) must be an SDP starting with \"v=0\"")
        }
        if let problem = sdpShapeProblem(value) {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) is not an SDP: \(problem)")
        }
        return value
    }

    /// RFC 8866 §5's shape, checked before a description is stored or relayed: lines of
    /// `<type>=<value>` with a lower-case letter as type, ended by CRLF (or LF alone), and no
    /// control character in a value but a tab. What it keeps out: bytes that JSON escapes
    /// six-fold (`\u0001`), which turned an 11 KB description into a room state no member could
    /// read. Returns what is wrong, with its line number, or nil.
    static func sdpShapeProblem(_ sdp: String) -> String? {
        var line = 1
        var atLineStart = true
        var column = 0
        var previous: UInt8 = 0
        for byte in sdp.utf8 {
            defer { previous = byte }
            if byte == UInt8(ascii: "\n") || atLineStart && byte == UInt8(ascii: "\r") {
                guard !atLineStart else { return "line \(line) is empty" }
                guard column >= 2 else { return "line \(line) has no \"=\" after its type" }
                line += 1
                atLineStart = true
                column = 0
                continue
            }
            if previous == UInt8(ascii: "\r") {
                return "line \(line) has a carriage return that does not end it"
            }
            column += 1
            if atLineStart {
                guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) else {
                    return "line \(line) does not start with a lower-case type letter"
                }
                atLineStart = false
            } else if column == 2 {
                guard byte == UInt8(ascii: "=") else { return "line \(line) has no \"=\" after its type" }
            } else if byte < 0x20 && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\r") || byte == 0x7F {
                return "line \(line) has a control character (0x\(String(byte, radix: 16)))"
            }
        }
        if previous == UInt8(ascii: "\r") { return "line \(line) has a carriage return that does not end it" }
        if !atLineStart && column < 2 { return "line \(line) has no \"=\" after its type" }
        return nil
    }

    /// A list with a bounded number of entries.
    static func list<T>(
        _ values: [T],
        maxCount: Int,
        allowEmpty: Bool,
        at path: [any CodingKey]
    ) throws -> [T] {
        if values.isEmpty && !allowEmpty {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) must not be empty")
        }
        guard values.count <= maxCount else {
            throw SignalingError(.invalidField, "field \(fieldPath(path)) has more than \(maxCount) entries")
        }
        return values
    }
}

extension KeyedDecodingContainer {
    /// An optional integer field. Foundation reports a number too large for `Int` (`1e308`) as
    /// invalid JSON at the top level, which would name the wrong problem; here it is the field's
    /// (`invalid-field`).
    func decodeIntegerIfPresent(forKey key: Key) throws -> Int? {
        do {
            return try decodeIfPresent(Int.self, forKey: key)
        } catch let error as DecodingError {
            throw error
        } catch {
            // Foundation's own "not representable" error, which its decoder would turn into a
            // top-level "not valid JSON".
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(codingPath + [key])) must be an integer in the signed 64-bit range"
            )
        }
    }

    /// A required integer field (see ``decodeIntegerIfPresent(forKey:)``).
    func decodeInteger(forKey key: Key) throws -> Int {
        guard let value = try decodeIntegerIfPresent(forKey: key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return value
    }
}

/// A coding key made at run time, to extend a coding path by one field name for error messages.
struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ name: String) {
        self.stringValue = name
        self.intValue = nil
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init?(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
