/// Parsers for the feedback-related attributes: `a=rtcp-fb` and `a=ssrc-group`.
extension SDPAttributeParser {
    /// RFC 4585 §4.2 `a=rtcp-fb:<payload type or *> <type> [<parameters>]`.
    static func rtcpFeedback(_ value: String, line: SDPLine) throws -> SDPRTCPFeedback {
        guard let (typeText, rest) = SDPSyntax.splitOnce(Substring(value), on: " ") else {
            throw SDPError.at(line.number, .malformedLine, "a=rtcp-fb needs '<payload type or *> <feedback type>'")
        }
        let payloadType: UInt8? = typeText == "*" ? nil : try MediaBuilder.payloadType(typeText, line: line)
        let (kind, parameter) = SDPSyntax.splitOnce(rest, on: " ").map { ($0.0, Optional($0.1)) } ?? (rest, nil)
        guard SDPSyntax.isToken(kind) else {
            throw SDPError.at(line.number, .malformedLine, "a=rtcp-fb type \(quoted(kind)) is not a token")
        }
        if let parameter, !isFeedbackParameter(parameter) {
            throw SDPError.at(
                line.number,
                .malformedLine,
                "a=rtcp-fb parameter \(quoted(parameter)) is not visible words separated by single spaces"
            )
        }
        return SDPRTCPFeedback(payloadType: payloadType, type: String(kind), parameter: parameter.map(String.init))
    }

    /// RFC 5576 §4.2 `a=ssrc-group:<semantics> <ssrc-id> *(SP <ssrc-id>)`.
    static func ssrcGroup(_ value: String, line: SDPLine) throws -> SDPSSRCGroup {
        let fields = SDPSyntax.split(Substring(value), on: " ")
        guard fields.count >= 2, SDPSyntax.isToken(fields[0]) else {
            throw SDPError.at(line.number, .malformedLine, "a=ssrc-group needs '<semantics> <ssrc> ...'")
        }
        var ssrcs: [UInt32] = []
        for field in fields.dropFirst() {
            guard let ssrc = SDPSyntax.decimal(field, as: UInt32.self) else {
                throw SDPError.at(
                    line.number,
                    .malformedLine,
                    "a=ssrc-group SSRC \(quoted(field)) is not a 32-bit number"
                )
            }
            ssrcs.append(ssrc)
        }
        return SDPSSRCGroup(semantics: String(fields[0]), ssrcs: ssrcs)
    }

    /// One or more runs of visible characters joined by single spaces (RFC 4585 §4.2's
    /// `rtcp-fb-param` list), so what is written reads back unchanged.
    static func isFeedbackParameter(_ text: Substring) -> Bool {
        SDPSyntax.split(text, on: " ").allSatisfy { SDPSyntax.isVisible($0) }
    }
}
