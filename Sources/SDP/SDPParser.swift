/// Reads RFC 8866 text into a `SessionDescription`.
///
/// Good enough for what a subscriber or a peer sends back: addresses, ports, payload formats,
/// crypto, RTCP port or mux, SSRCs, direction. Malformed input is rejected with an `SDPError`
/// naming the line. Limits are checked before any line is looked at.
public enum SDPParser {
    public struct Limits: Sendable, Equatable {
        /// Whole description, in bytes. Browser offers are a few KiB.
        public var maximumBytes: Int
        public var maximumLines: Int
        /// One line without its line end, in bytes.
        public var maximumLineLength: Int

        public init(maximumBytes: Int = 64 * 1024, maximumLines: Int = 1024, maximumLineLength: Int = 4096) {
            self.maximumBytes = maximumBytes
            self.maximumLines = maximumLines
            self.maximumLineLength = maximumLineLength
        }
    }

    public static func parse(_ text: String, limits: Limits = Limits()) throws -> SessionDescription {
        // utf8.count is O(1) for native strings: the size limit holds before the copy below.
        guard text.utf8.count <= limits.maximumBytes else {
            throw SDPError(
                code: .tooLarge,
                message: "description of \(text.utf8.count) bytes exceeds the limit of \(limits.maximumBytes)"
            )
        }
        return try parse(bytes: Array(text.utf8), limits: limits)
    }

    public static func parse(bytes: [UInt8], limits: Limits = Limits()) throws -> SessionDescription {
        let lines = try SDPLineReader.lines(of: bytes, limits: limits)
        guard !lines.isEmpty else {
            throw SDPError(code: .missingLine, message: "the description is empty")
        }
        var session = SessionBuilder()
        var media: [MediaBuilder] = []
        for (position, line) in lines.enumerated() {
            // An m= among the first three lines is reported by the session's v=/o=/s= order check.
            if line.type == "m" && position >= 3 {
                media.append(try MediaBuilder(line))
            } else if let current = media.indices.last {
                try media[current].add(line)
            } else {
                try session.add(line, position: position)
            }
        }
        return try session.build(media: media.map { try $0.build() })
    }
}

/// The session part: `v=`, `o=`, `s=` first, then `c=`, `t=` and attributes up to the first `m=`.
private struct SessionBuilder {
    var origin: SDPOrigin?
    var sessionName: String?
    var connection: SDPAddress?
    var timing: SDPTiming?
    var direction: SDPDirection?
    var attributes: [SDPAttribute] = []

    mutating func add(_ line: SDPLine, position: Int) throws {
        // RFC 8866 §5: v=, o= and s= open the description in this order.
        let expected: [Character] = ["v", "o", "s"]
        if position < expected.count, line.type != expected[position] {
            throw SDPError.at(line.number, .unexpectedLine, "expected \(expected[position])= here, found \(line.type)=")
        }
        if position >= expected.count, expected.contains(line.type) {
            throw SDPError.at(line.number, .unexpectedLine, "\(line.type)= may appear only once, at the start")
        }
        switch line.type {
        case "v":
            guard line.value == "0" else {
                throw SDPError.at(line.number, .unsupported, "SDP version \(quoted(line.value)) is not 0")
            }
        case "o":
            origin = try SDPFieldParser.origin(line)
        case "s":
            sessionName = String(line.value)
        case "c":
            guard connection == nil else {
                throw SDPError.at(line.number, .unexpectedLine, "second session-level c= line")
            }
            connection = try SDPFieldParser.connection(line)
        case "t":
            guard timing == nil else {
                throw SDPError.at(
                    line.number,
                    .unsupported,
                    "more than one t= line (repeated sessions) is not supported"
                )
            }
            timing = try SDPFieldParser.timing(line)
        case "a":
            let attribute = try SDPFieldParser.attribute(line)
            if let parsed = SDPDirection(rawValue: attribute.name) {
                guard attribute.value == nil else {
                    throw SDPError.at(line.number, .malformedLine, "a=\(attribute.name) takes no value")
                }
                guard direction == nil else {
                    throw SDPError.at(line.number, .unexpectedLine, "second session-level direction attribute")
                }
                direction = parsed
            } else {
                attributes.append(attribute)
            }
        case "i", "u", "e", "p", "b", "r", "z", "k":
            break  // Not modelled (RFC 8866 §5.4-5.12); skipped.
        default:
            throw SDPError.at(line.number, .unexpectedLine, "unknown line type '\(line.type)='")
        }
    }

    func build(media: [MediaDescription]) throws -> SessionDescription {
        guard let origin, let sessionName else {
            let missing = origin == nil ? "o=" : "s="
            throw SDPError(code: .missingLine, line: nil, message: "the description has no \(missing) line")
        }
        guard let timing else {
            throw SDPError(code: .missingLine, line: nil, message: "the description has no t= line")
        }
        return SessionDescription(
            origin: origin,
            sessionName: sessionName,
            connection: connection,
            timing: timing,
            direction: direction,
            attributes: attributes,
            media: media
        )
    }
}
