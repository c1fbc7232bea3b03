/// What is wrong with an attribute value, without the line: the parser adds the line number, and
/// the writer's checks (`SDPDescriptionValidator`) run the same grammar on what they would write.
struct SDPGrammarProblem: Error {
    var text: String

    init(_ text: String) { self.text = text }
}

/// Parsers for RFC 8851 `a=rid` and RFC 8853 `a=simulcast`, the two attributes of rid-based
/// simulcast. Both are read from the network (a WHIP endpoint's answer, a viewer's offer), so
/// every count and length is bounded before anything is kept.
extension SDPAttributeParser {
    static func rid(_ value: String, line: SDPLine) throws -> SDPRID {
        do {
            return try rid(Substring(value))
        } catch {
            throw SDPError.at(line.number, .malformedLine, error.text)
        }
    }

    static func simulcast(_ value: String, line: SDPLine) throws -> SDPSimulcast {
        do {
            return try simulcast(Substring(value))
        } catch {
            throw SDPError.at(line.number, .malformedLine, error.text)
        }
    }

    // RFC 8851 §10:
    //   rid-syntax        = %s"a=rid:" rid-id SP rid-dir [ rid-pt-param-list / rid-param-list ]
    //   rid-id            = 1*(alpha-numeric / "-" / "_")
    //   rid-dir           = %s"send" / %s"recv"
    //   rid-pt-param-list = SP rid-fmt-list *(";" rid-param)
    //   rid-param-list    = SP rid-param *(";" rid-param)
    //   rid-fmt-list      = %s"pt=" fmt *( "," fmt )
    static func rid(_ value: Substring) throws(SDPGrammarProblem) -> SDPRID {
        guard let (idText, rest) = SDPSyntax.splitOnce(value, on: " ") else {
            throw SDPGrammarProblem("a=rid needs '<rid-id> <send|recv> [<restrictions>]'")
        }
        try checkRIDID(idText, what: "a=rid id")
        let (directionText, parameters) =
            SDPSyntax.splitOnce(rest, on: " ").map { ($0.0, Optional($0.1)) } ?? (rest, nil)
        guard let direction = SDPRIDDirection(rawValue: String(directionText)) else {
            throw SDPGrammarProblem(
                "a=rid direction \(quoted(directionText)) is not send or recv (RFC 8851 section 10)"
            )
        }
        var restrictions: [SDPRIDRestriction] = []
        if let parameters {
            let items = SDPSyntax.split(parameters, on: ";")
            guard items.count <= SDPRID.maximumRestrictions else {
                throw SDPGrammarProblem(
                    "a=rid \(quoted(idText)) has \(items.count) restrictions; at most \(SDPRID.maximumRestrictions) "
                        + "are read"
                )
            }
            for (index, item) in items.enumerated() {
                let restriction = try ridRestriction(item, isFirst: index == 0)
                guard !restrictions.contains(where: { $0.name == restriction.name }) else {
                    throw SDPGrammarProblem("a=rid \(quoted(idText)) restricts \(quoted(restriction.name)) twice")
                }
                restrictions.append(restriction)
            }
        }
        return SDPRID(id: String(idText), direction: direction, restrictions: restrictions)
    }

    // RFC 8851 §10:
    //   rid-width-param   = %s"max-width" [ "=" int-param-val ]      (also max-height, max-fs,
    //                                                                  max-br, max-pps)
    //   rid-fps-param     = %s"max-fps" [ "=" decimal-param-val ]    (also max-bpp)
    //   rid-depend-param  = %s"depend=" rid-list
    //   rid-param-other   = 1*(alpha-numeric / "-") [ "=" param-val ]
    //   int-param-val     = 1*DIGIT
    //   decimal-param-val = 1*DIGIT [ "." 1*DIGIT ]
    //   param-val         = *( %x20-3A / %x3C-7E )
    private static func ridRestriction(_ item: Substring, isFirst: Bool) throws(SDPGrammarProblem) -> SDPRIDRestriction
    {
        let (name, value) = SDPSyntax.splitOnce(item, on: "=").map { ($0.0, Optional($0.1)) } ?? (item, nil)
        guard !name.isEmpty, name.utf8.allSatisfy({ isAlphaNumeric($0) || $0 == UInt8(ascii: "-") }) else {
            throw SDPGrammarProblem(
                "a=rid restriction \(quoted(item)) is not '<name>[=<value>]' with a name of letters, digits and '-'"
            )
        }
        let invalid = SDPGrammarProblem(
            "a=rid restriction \(quoted(item)) does not follow RFC 8851 section 10 for \(quoted(name))"
        )
        switch name {
        case "pt":
            guard isFirst else {
                throw SDPGrammarProblem("a=rid pt= must come before the other restrictions (RFC 8851 section 10)")
            }
            guard let value,
                SDPSyntax.split(value, on: ",").allSatisfy({
                    SDPSyntax.decimal($0, as: UInt8.self).map { $0 <= 127 } == true
                })
            else {
                throw SDPGrammarProblem(
                    "a=rid pt= list \(quoted(value ?? "")) is not payload types 0-127 separated by ','"
                )
            }
        case "max-width", "max-height", "max-fs", "max-br", "max-pps":
            guard value.map({ SDPSyntax.decimal($0, as: UInt64.self) != nil }) ?? true else { throw invalid }
        case "max-fps", "max-bpp":
            guard value.map(isDecimalParameter) ?? true else { throw invalid }
        case "depend":
            guard let value, SDPSyntax.split(value, on: ",").allSatisfy(isRIDID) else { throw invalid }
        default:
            guard value.map({ $0.utf8.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ";") } }) ?? true
            else {
                throw SDPGrammarProblem(
                    "a=rid restriction \(quoted(name)) has a value with a character outside %x20-7E"
                )
            }
        }
        return SDPRIDRestriction(name: String(name), value: value.map(String.init))
    }

    // RFC 8853 §5.1:
    //   sc-value     = ( sc-send [SP sc-recv] ) / ( sc-recv [SP sc-send] )
    //   sc-send      = %s"send" SP sc-str-list
    //   sc-recv      = %s"recv" SP sc-str-list
    //   sc-str-list  = sc-alt-list *( ";" sc-alt-list )
    //   sc-alt-list  = sc-id *( "," sc-id )
    //   sc-id-paused = "~"
    //   sc-id        = [sc-id-paused] rid-id
    static func simulcast(_ value: Substring) throws(SDPGrammarProblem) -> SDPSimulcast {
        let fields = SDPSyntax.split(value, on: " ")
        guard fields.count == 2 || fields.count == 4 else {
            throw SDPGrammarProblem(
                "a=simulcast needs '<send|recv> <streams>', once or once per direction (RFC 8853 section 5.1)"
            )
        }
        var result = SDPSimulcast()
        var seen: Set<Substring> = []
        for pair in stride(from: 0, to: fields.count, by: 2) {
            let streams = try simulcastStreams(fields[pair + 1], seen: &seen)
            switch fields[pair] {
            case "send" where result.send.isEmpty:
                result.send = streams
            case "recv" where result.receive.isEmpty:
                result.receive = streams
            case "send", "recv":
                throw SDPGrammarProblem("a=simulcast lists direction \(fields[pair]) twice")
            default:
                throw SDPGrammarProblem(
                    "a=simulcast direction \(quoted(fields[pair])) is not send or recv (RFC 8853 section 5.1)"
                )
            }
        }
        return result
    }

    /// One `sc-str-list`; `seen` collects the rids of the whole line, which may name each once.
    private static func simulcastStreams(
        _ list: Substring,
        seen: inout Set<Substring>
    ) throws(SDPGrammarProblem) -> [SDPSimulcast.Stream] {
        var streams: [SDPSimulcast.Stream] = []
        for alternatives in SDPSyntax.split(list, on: ";") {
            var stream = SDPSimulcast.Stream(alternatives: [])
            for item in SDPSyntax.split(alternatives, on: ",") {
                let isPaused = item.utf8.first == UInt8(ascii: "~")
                let rid = isPaused ? Substring(item.unicodeScalars.dropFirst()) : item
                try checkRIDID(rid, what: "a=simulcast rid")
                guard seen.count < SDPSimulcast.maximumIdentifiers else {
                    throw SDPGrammarProblem("a=simulcast names more than \(SDPSimulcast.maximumIdentifiers) rids")
                }
                guard seen.insert(rid).inserted else {
                    throw SDPGrammarProblem("a=simulcast names rid \(quoted(rid)) twice")
                }
                stream.alternatives.append(SDPSimulcast.Alternative(rid: String(rid), isPaused: isPaused))
            }
            streams.append(stream)
        }
        return streams
    }

    private static func checkRIDID(_ text: Substring, what: String) throws(SDPGrammarProblem) {
        guard isRIDID(text) else {
            throw SDPGrammarProblem(
                "\(what) \(quoted(text)) is not 1-\(SDPRID.maximumIDLength) letters, digits, '-' and '_' "
                    + "(RFC 8851 section 10)"
            )
        }
    }

    /// RFC 8851 §10 `rid-id = 1*(alpha-numeric / "-" / "_")`, at most `SDPRID.maximumIDLength`.
    static func isRIDID(_ text: Substring) -> Bool {
        (1...SDPRID.maximumIDLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { isAlphaNumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// RFC 8866 `alpha-numeric = ALPHA / DIGIT`.
    private static func isAlphaNumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// RFC 8851 §10 `decimal-param-val = 1*DIGIT [ "." 1*DIGIT ]`.
    private static func isDecimalParameter(_ text: Substring) -> Bool {
        let parts = SDPSyntax.split(text, on: ".")
        return parts.count <= 2 && parts.allSatisfy { SDPSyntax.decimal($0, as: UInt64.self) != nil }
    }
}
