/// Parsers for the values of single lines (`o=`, `c=`, `t=`, `a=`, `m=`) per the RFC 8866 §9 grammar.
/// Fields are separated by exactly one space, as the grammar says; a double space is an empty field.
enum SDPFieldParser {
    /// `o=<username> <sess-id> <sess-version> IN <addrtype> <unicast-address>` (§5.2).
    static func origin(_ line: SDPLine) throws -> SDPOrigin {
        let fields = SDPSyntax.split(line.value, on: " ")
        guard fields.count == 6 else {
            throw SDPError.at(line.number, .malformedLine, "o= line needs 6 fields, found \(fields.count)")
        }
        guard SDPSyntax.isVisible(fields[0]) else {
            throw SDPError.at(line.number, .malformedLine, "o= line has an empty username")
        }
        guard let id = SDPSyntax.decimal(fields[1], as: UInt64.self) else {
            throw SDPError.at(line.number, .malformedLine, "o= line has a non-numeric session id \(quoted(fields[1]))")
        }
        guard let version = SDPSyntax.decimal(fields[2], as: UInt64.self) else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "o= line has a non-numeric session version \(quoted(fields[2]))"
            )
        }
        let family = try addressFamily(network: fields[3], type: fields[4], line: line, context: "o=")
        guard SDPSyntax.isVisible(fields[5]) else {
            throw SDPError.at(line.number, .malformedLine, "o= line has an empty address")
        }
        return SDPOrigin(
            username: String(fields[0]),
            sessionID: id,
            sessionVersion: version,
            addressFamily: family,
            unicastAddress: String(fields[5])
        )
    }

    /// `c=IN <addrtype> <address>` (§5.7), unicast literals only.
    static func connection(_ line: SDPLine) throws -> SDPAddress {
        let fields = SDPSyntax.split(line.value, on: " ")
        guard fields.count == 3 else {
            throw SDPError.at(line.number, .malformedLine, "c= line needs 3 fields, found \(fields.count)")
        }
        let family = try addressFamily(network: fields[0], type: fields[1], line: line, context: "c=")
        return try address(fields[2], family: family, line: line, context: "c=")
    }

    /// An address literal of `family`; multicast `/ttl` suffixes are refused.
    static func address(
        _ text: Substring,
        family: SDPAddress.Family,
        line: SDPLine,
        context: String
    ) throws
        -> SDPAddress
    {
        if text.utf8.contains(UInt8(ascii: "/")) {
            throw SDPError.at(
                line.number,
                .unsupported,
                "\(context) multicast address \(quoted(text)) is not supported"
            )
        }
        guard let address = try? SDPAddress(family: family, address: String(text)) else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "\(context) address \(quoted(text)) is not an \(family.rawValue) address literal"
            )
        }
        return address
    }

    static func addressFamily(
        network: Substring,
        type: Substring,
        line: SDPLine,
        context: String
    ) throws
        -> SDPAddress.Family
    {
        guard network == "IN" else {
            throw SDPError.at(line.number, .unsupported, "\(context) network type \(quoted(network)) is not IN")
        }
        guard let family = SDPAddress.Family(rawValue: String(type)) else {
            throw SDPError.at(line.number, .unsupported, "\(context) address type \(quoted(type)) is not IP4 or IP6")
        }
        return family
    }

    /// `t=<start-time> <stop-time>` (§5.9).
    static func timing(_ line: SDPLine) throws -> SDPTiming {
        let fields = SDPSyntax.split(line.value, on: " ")
        guard fields.count == 2, let start = SDPSyntax.decimal(fields[0], as: UInt64.self),
            let stop = SDPSyntax.decimal(fields[1], as: UInt64.self)
        else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "t= line must be two decimal times, found \(quoted(line.value))"
            )
        }
        return SDPTiming(start: start, stop: stop)
    }

    /// `a=<name>` or `a=<name>:<value>` (§5.13).
    static func attribute(_ line: SDPLine) throws -> SDPAttribute {
        let (name, value) = SDPSyntax.splitOnce(line.value, on: ":").map { ($0.0, Optional($0.1)) } ?? (line.value, nil)
        guard SDPSyntax.isToken(name) else {
            throw SDPError.at(line.number, .malformedLine, "attribute name \(quoted(name)) is not a token")
        }
        return SDPAttribute(name: String(name), value: value.map(String.init))
    }
}
