#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Parsers for the values of the typed media attributes.
enum SDPAttributeParser {
    /// RFC 8866 §6.6 `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`.
    static func rtpmap(_ value: String, line: SDPLine) throws -> (UInt8, SDPRTPMap) {
        guard let (typeText, mapping) = SDPSyntax.splitOnce(Substring(value), on: " ") else {
            throw SDPError.at(line.number, .malformedLine, "a=rtpmap needs '<payload type> <encoding>/<clock rate>'")
        }
        let payloadType = try MediaBuilder.payloadType(typeText, line: line)
        let parts = SDPSyntax.split(mapping, on: "/")
        guard parts.count == 2 || parts.count == 3, SDPSyntax.isToken(parts[0]) else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=rtpmap encoding \(quoted(mapping)) is not '<name>/<clock rate>[/<channels>]'"
            )
        }
        guard let clockRate = SDPSyntax.decimal(parts[1], as: UInt32.self), clockRate > 0 else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=rtpmap clock rate \(quoted(parts[1])) is not a positive number"
            )
        }
        var channels: UInt8?
        if parts.count == 3 {
            guard let count = SDPSyntax.decimal(parts[2], as: UInt8.self), count > 0 else {
                throw SDPError.at(
                    line.number,
                    .malformedLine,
                    "a=rtpmap channel count \(quoted(parts[2])) is not 1-255"
                )
            }
            channels = count
        }
        return (payloadType, SDPRTPMap(encodingName: String(parts[0]), clockRate: clockRate, channels: channels))
    }

    /// RFC 8866 §6.15 `a=fmtp:<payload type> <parameters>`, parameters as `;`-separated
    /// `name=value` items (RFC 6184 §8.1, RFC 7587 §7). Spaces around items, names and values are
    /// dropped; empty items (a trailing `;`) are skipped.
    static func fmtp(_ value: String, line: SDPLine) throws -> (UInt8, [SDPFormatParameter]) {
        guard let (typeText, list) = SDPSyntax.splitOnce(Substring(value), on: " ") else {
            throw SDPError.at(line.number, .malformedLine, "a=fmtp needs '<payload type> <parameters>'")
        }
        let payloadType = try MediaBuilder.payloadType(typeText, line: line)
        var parameters: [SDPFormatParameter] = []
        for item in SDPSyntax.split(list, on: ";") {
            let trimmed = SDPSyntax.trimmingSpaces(item)
            if trimmed.isEmpty { continue }
            let (name, itemValue) =
                SDPSyntax.splitOnce(trimmed, on: "=").map {
                    (SDPSyntax.trimmingSpaces($0.0), Optional(SDPSyntax.trimmingSpaces($0.1)))
                } ?? (trimmed, nil)
            guard SDPSyntax.isFormatParameterName(name) else {
                throw SDPError.at(
                    line.number,
                    .malformedLine,
                    "a=fmtp parameter name \(quoted(name)) is empty or has spaces"
                )
            }
            parameters.append(SDPFormatParameter(name: String(name), value: itemValue.map(String.init)))
        }
        guard !parameters.isEmpty else {
            throw SDPError.at(line.number, .malformedLine, "a=fmtp for payload type \(payloadType) has no parameters")
        }
        return (payloadType, parameters)
    }

    /// RFC 3605 §2.1 `a=rtcp:<port> [IN <addrtype> <address>]`.
    static func rtcp(_ value: String, line: SDPLine) throws -> SDPRTCPAttribute {
        let fields = SDPSyntax.split(Substring(value), on: " ")
        guard fields.count == 1 || fields.count == 4 else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=rtcp needs a port, optionally followed by 'IN IP4 <address>'"
            )
        }
        guard let port = SDPSyntax.decimal(fields[0], as: UInt16.self) else {
            throw SDPError.at(line.number, .malformedLine, "a=rtcp has an invalid port \(quoted(fields[0]))")
        }
        guard fields.count == 4 else { return SDPRTCPAttribute(port: port) }
        let family = try SDPFieldParser.addressFamily(
            network: fields[1],
            type: fields[2],
            line: line,
            context: "a=rtcp"
        )
        let address = try SDPFieldParser.address(fields[3], family: family, line: line, context: "a=rtcp")
        return SDPRTCPAttribute(port: port, address: address)
    }

    /// RFC 5576 §4.1 `a=ssrc:<ssrc-id> <attribute>[:<value>]`.
    static func ssrc(_ value: String, line: SDPLine) throws -> SDPSSRCAttribute {
        guard let (idText, rest) = SDPSyntax.splitOnce(Substring(value), on: " ") else {
            throw SDPError.at(line.number, .malformedLine, "a=ssrc needs '<ssrc> <attribute>[:<value>]'")
        }
        guard let ssrc = SDPSyntax.decimal(idText, as: UInt32.self) else {
            throw SDPError.at(line.number, .malformedLine, "a=ssrc id \(quoted(idText)) is not a 32-bit number")
        }
        let (name, attributeValue) = SDPSyntax.splitOnce(rest, on: ":").map { ($0.0, Optional($0.1)) } ?? (rest, nil)
        guard SDPSyntax.isToken(name) else {
            throw SDPError.at(line.number, .malformedLine, "a=ssrc attribute name \(quoted(name)) is not a token")
        }
        return SDPSSRCAttribute(ssrc: ssrc, name: String(name), value: attributeValue.map(String.init))
    }

    /// RFC 4568 §9.1 `a=crypto:<tag> 1*WSP <crypto-suite> 1*WSP <key-params> *(1*WSP <session-param>)`.
    static func crypto(_ value: String, line: SDPLine) throws -> SDPCrypto {
        let fields = SDPSyntax.split(Substring(value), on: " ", omittingEmpty: true)
        guard fields.count >= 3 else {
            throw SDPError.at(line.number, .malformedLine, "a=crypto needs '<tag> <suite> inline:<key>'")
        }
        guard fields[0].utf8.count <= 9, let tag = SDPSyntax.decimal(fields[0], as: UInt32.self) else {
            throw SDPError.at(line.number, .malformedLine, "a=crypto tag \(quoted(fields[0])) is not 1-9 digits")
        }
        guard SDPSyntax.isCryptoSuite(fields[1]) else {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=crypto suite \(quoted(fields[1])) is not letters, digits and '_'"
            )
        }
        let keys = try SDPSyntax.split(fields[2], on: ";").map { try key($0, line: line) }
        for parameter in fields[3...] where !SDPSyntax.isVisible(parameter) {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=crypto session parameter \(quoted(parameter)) is not visible text"
            )
        }
        return SDPCrypto(
            tag: tag,
            suite: String(fields[1]),
            keys: keys,
            sessionParameters: fields[3...].map(String.init)
        )
    }

    /// RFC 4568 §6.1 `inline:<key||salt>[|<lifetime>][|<MKI>:<length>]`.
    private static func key(_ text: Substring, line: SDPLine) throws -> SDPCryptoKey {
        guard text.utf8.starts(with: "inline:".utf8) else {
            let method = SDPSyntax.splitOnce(text, on: ":")?.0 ?? text
            throw SDPError.at(
                line.number,
                .unsupported,
                "a=crypto key method \(quoted(method)) is not supported (only inline:)"
            )
        }
        let parts = SDPSyntax.split(Substring(text.utf8.dropFirst("inline:".utf8.count)), on: "|")
        guard parts.count <= 3, let keySalt = [UInt8](canonicalBase64: parts[0]), !keySalt.isEmpty else {
            throw SDPError.at(line.number, .malformedLine, "a=crypto inline key is not valid base64")
        }
        var key = SDPCryptoKey(keySalt: keySalt)
        for part in parts.dropFirst() {
            if part.utf8.contains(UInt8(ascii: ":")) {
                guard key.mki == nil, SDPSyntax.isMKI(part) else {
                    throw SDPError.at(
                        line.number,
                        .malformedLine,
                        "a=crypto MKI \(quoted(part)) is not '<value>:<length>'"
                    )
                }
                key.mki = String(part)
            } else {
                guard key.lifetime == nil, key.mki == nil, SDPSyntax.isKeyLifetime(part) else {
                    throw SDPError.at(
                        line.number,
                        .malformedLine,
                        "a=crypto key lifetime \(quoted(part)) is not '[2^]<digits>' before the MKI"
                    )
                }
                key.lifetime = String(part)
            }
        }
        return key
    }
}
