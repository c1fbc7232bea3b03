/// Collects one media section: its `m=` line, then `c=` and the attributes up to the next `m=`.
struct MediaBuilder {
    private var media: MediaDescription
    private var rtpmaps: [UInt8: SDPRTPMap] = [:]
    private var fmtps: [UInt8: [SDPFormatParameter]] = [:]
    private var hasConnection = false
    /// `media.transport.carriesRTP`, computed once: it searches the protocol text, so asking it
    /// for every format and every attribute line would cost line count times protocol length.
    private let isRTP: Bool

    /// `m=<media> <port>[/<number of ports>] <proto> <fmt> ...` (RFC 8866 §5.14).
    init(_ line: SDPLine) throws {
        let fields = SDPSyntax.split(line.value, on: " ")
        guard fields.count >= 4 else {
            throw SDPError.at(line.number, .malformedLine, "m= line needs media, port, protocol and a format")
        }
        if fields.contains(where: \.isEmpty) {
            throw SDPError.at(line.number, .malformedLine, "m= line has an empty field (two spaces in a row?)")
        }
        guard SDPSyntax.isToken(fields[0]) else {
            throw SDPError.at(line.number, .malformedLine, "m= line has an invalid media type \(quoted(fields[0]))")
        }
        let portParts = SDPSyntax.split(fields[1], on: "/")
        let port = try Self.number(portParts[0], as: UInt16.self, what: "port", line: line)
        var portCount: UInt16?
        if portParts.count == 2 {
            portCount = try Self.number(portParts[1], as: UInt16.self, what: "port count", line: line)
        } else if portParts.count > 2 {
            throw SDPError.at(line.number, .malformedLine, "m= line has an invalid port \(quoted(fields[1]))")
        }
        guard SDPSyntax.isProtocol(fields[2]) else {
            throw SDPError.at(line.number, .malformedLine, "m= line has an invalid protocol \(quoted(fields[2]))")
        }
        let transport = SDPTransport(rawValue: String(fields[2]))
        isRTP = transport.carriesRTP
        var formats: [SDPRTPFormat] = []
        var otherFormats: [String] = []
        for field in fields[3...] {
            if isRTP {
                let payloadType = try Self.payloadType(field, line: line)
                guard !formats.contains(where: { $0.payloadType == payloadType }) else {
                    throw SDPError.at(line.number, .malformedLine, "m= line lists payload type \(payloadType) twice")
                }
                formats.append(SDPRTPFormat(payloadType: payloadType, rtpmap: nil))
            } else {
                guard SDPSyntax.isVisible(field) else {
                    throw SDPError.at(line.number, .malformedLine, "m= line has an invalid format \(quoted(field))")
                }
                otherFormats.append(String(field))
            }
        }
        media = MediaDescription(
            kind: SDPMediaKind(rawValue: String(fields[0])),
            port: port,
            portCount: portCount,
            transport: transport,
            formats: formats,
            otherFormats: otherFormats
        )
    }

    mutating func add(_ line: SDPLine) throws {
        switch line.type {
        case "c":
            guard !hasConnection else {
                throw SDPError.at(line.number, .unsupported, "more than one c= line in a media section")
            }
            hasConnection = true
            media.connection = try SDPFieldParser.connection(line)
        case "a":
            try add(attribute: SDPFieldParser.attribute(line), line: line)
        case "i", "b", "k":
            break  // Not modelled (RFC 8866 §5.4, §5.8, §5.12); skipped.
        default:
            throw SDPError.at(line.number, .unexpectedLine, "\(line.type)= is not allowed inside a media section")
        }
    }

    private mutating func add(attribute: SDPAttribute, line: SDPLine) throws {
        let name = attribute.name
        if let direction = SDPDirection(rawValue: name) {
            try Self.requireNoValue(attribute, line: line)
            try Self.requireFirst(media.direction == nil, "direction attribute", line: line)
            media.direction = direction
            return
        }
        switch name {
        case "rtpmap" where isRTP:
            let (payloadType, map) = try SDPAttributeParser.rtpmap(try Self.value(attribute, line: line), line: line)
            try requireListed(payloadType, attribute: name, line: line)
            try Self.requireFirst(rtpmaps[payloadType] == nil, "a=rtpmap for payload type \(payloadType)", line: line)
            rtpmaps[payloadType] = map
        case "fmtp" where isRTP:
            let (payloadType, parameters) = try SDPAttributeParser.fmtp(
                try Self.value(attribute, line: line),
                line: line
            )
            try requireListed(payloadType, attribute: name, line: line)
            try Self.requireFirst(fmtps[payloadType] == nil, "a=fmtp for payload type \(payloadType)", line: line)
            fmtps[payloadType] = parameters
        case "crypto":
            media.crypto.append(try SDPAttributeParser.crypto(try Self.value(attribute, line: line), line: line))
        case "rtcp":
            try Self.requireFirst(media.rtcp == nil, "a=rtcp", line: line)
            media.rtcp = try SDPAttributeParser.rtcp(try Self.value(attribute, line: line), line: line)
        case "rtcp-mux":
            try Self.requireNoValue(attribute, line: line)
            media.rtcpMux = true
        case "ssrc":
            media.ssrcAttributes.append(try SDPAttributeParser.ssrc(try Self.value(attribute, line: line), line: line))
        case "ssrc-group":
            media.ssrcGroups.append(
                try SDPAttributeParser.ssrcGroup(try Self.value(attribute, line: line), line: line)
            )
        case "rtcp-fb" where isRTP:
            let feedback = try SDPAttributeParser.rtcpFeedback(try Self.value(attribute, line: line), line: line)
            if let payloadType = feedback.payloadType {
                try requireListed(payloadType, attribute: name, line: line)
            }
            media.rtcpFeedback.append(feedback)
        case "rid" where isRTP:
            let rid = try SDPAttributeParser.rid(try Self.value(attribute, line: line), line: line)
            guard media.rids.count < SDPRID.maximumPerSection else {
                throw SDPError.at(
                    line.number,
                    .malformedLine,
                    "more than \(SDPRID.maximumPerSection) a=rid lines in this media section"
                )
            }
            guard !media.rids.contains(where: { $0.id == rid.id }) else {
                throw SDPError.at(
                    line.number,
                    .malformedLine,
                    "a=rid \(quoted(rid.id)) is already in this media section"
                )
            }
            if let payloadTypes = rid.payloadTypes {
                for payloadType in payloadTypes { try requireListed(payloadType, attribute: name, line: line) }
            }
            media.rids.append(rid)
        case "simulcast" where isRTP:
            try Self.requireFirst(media.simulcast == nil, "a=simulcast", line: line)
            media.simulcast = try SDPAttributeParser.simulcast(try Self.value(attribute, line: line), line: line)
        case "mid":
            try Self.requireFirst(media.mid == nil, "a=mid", line: line)
            let value = try Self.value(attribute, line: line)
            guard SDPSyntax.isToken(value) else {
                throw SDPError.at(line.number, .malformedLine, "a=mid value \(quoted(value)) is not a token")
            }
            media.mid = value
        default:
            media.attributes.append(attribute)
        }
    }

    func build() throws -> MediaDescription {
        var result = media
        for index in result.formats.indices {
            let payloadType = result.formats[index].payloadType
            result.formats[index].rtpmap = rtpmaps[payloadType]
            result.formats[index].parameters = fmtps[payloadType] ?? []
        }
        return result
    }

    // MARK: Helpers

    private func requireListed(_ payloadType: UInt8, attribute: String, line: SDPLine) throws {
        guard media.formats.contains(where: { $0.payloadType == payloadType }) else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=\(attribute) for payload type \(payloadType), which the m= line does not list"
            )
        }
    }

    private static func requireFirst(_ isFirst: Bool, _ what: String, line: SDPLine) throws {
        guard isFirst else { throw SDPError.at(line.number, .unexpectedLine, "second \(what) in this media section") }
    }

    private static func requireNoValue(_ attribute: SDPAttribute, line: SDPLine) throws {
        guard attribute.value == nil else {
            throw SDPError.at(line.number, .malformedLine, "a=\(attribute.name) takes no value")
        }
    }

    private static func value(_ attribute: SDPAttribute, line: SDPLine) throws -> String {
        guard let value = attribute.value, !value.isEmpty else {
            throw SDPError.at(line.number, .malformedLine, "a=\(attribute.name) needs a value")
        }
        return value
    }

    static func number<T: FixedWidthInteger & UnsignedInteger>(
        _ text: Substring,
        as type: T.Type,
        what: String,
        line: SDPLine
    ) throws -> T {
        if let value = SDPSyntax.decimal(text, as: T.self) { return value }
        let isDigits = !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
        let problem =
            isDigits ? "an out-of-range \(what) \(quoted(text)) (0-\(T.max))" : "a non-numeric \(what) \(quoted(text))"
        throw SDPError.at(line.number, .malformedLine, "m= line has \(problem)")
    }

    static func payloadType(_ text: Substring, line: SDPLine) throws -> UInt8 {
        guard let value = SDPSyntax.decimal(text, as: UInt8.self), value <= 127 else {
            throw SDPError.at(line.number, .malformedLine, "payload type \(quoted(text)) is not a number 0-127")
        }
        return value
    }
}
