/// RFC 8839 §5.1 `a=candidate`: one transport address the peer may be reached at.
///
/// ```
/// candidate-attribute = "candidate" ":" foundation SP component-id SP transport SP priority SP
///                       connection-address SP port SP "typ" SP cand-type
///                       [SP "raddr" SP connection-address] [SP "rport" SP port]
///                       *(SP extension-att-name SP extension-att-value)
/// ```
/// The address may be a host name: browsers hide local addresses behind mDNS names
/// (`<uuid>.local`, draft-ietf-mmusic-mdns-ice-candidates). Nothing here resolves names; such
/// candidates are kept apart (`WebRTCOffer.MediaSection.skippedCandidates`) and the peer is
/// still found, as a peer-reflexive candidate, when its checks arrive (RFC 8445 §7.3.1.3).
public struct ICECandidate: Sendable, Hashable, CustomStringConvertible {
    /// An IP literal or a host name.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        case ip(SDPAddress)
        case hostName(String)

        public var description: String {
            switch self {
            case .ip(let address): address.address
            case .hostName(let name): name
            }
        }
    }

    /// `UDP`, `TCP` (RFC 6544) or an extension token; kept upper-case (ABNF strings are
    /// case-insensitive: Chromium writes `udp`, Firefox `UDP`).
    public struct Transport: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
        public var description: String { rawValue }
        public static let udp = Transport(rawValue: "UDP")
        public static let tcp = Transport(rawValue: "TCP")
    }

    /// RFC 8839 `cand-type`: host, srflx, prflx, relay, or an extension token.
    public struct CandidateType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        public static let host = CandidateType(rawValue: "host")
        public static let serverReflexive = CandidateType(rawValue: "srflx")
        public static let peerReflexive = CandidateType(rawValue: "prflx")
        public static let relay = CandidateType(rawValue: "relay")
    }

    /// A trailing `name value` pair (Chromium's `generation 0`, RFC 6544's `tcptype passive`).
    public struct Extension: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `1*32ice-char`.
    public var foundation: String
    /// 1 for RTP; 2 for RTCP when it is not muxed (`1*3DIGIT`, 1–256).
    public var component: UInt16
    public var transport: Transport
    public var priority: UInt32
    public var address: Address
    public var port: UInt16
    public var type: CandidateType
    public var relatedAddress: Address?
    public var relatedPort: UInt16?
    public var extensions: [Extension]

    public init(
        foundation: String,
        component: UInt16 = 1,
        transport: Transport = .udp,
        priority: UInt32,
        address: Address,
        port: UInt16,
        type: CandidateType = .host,
        relatedAddress: Address? = nil,
        relatedPort: UInt16? = nil,
        extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.extensions = extensions
    }

    /// A host candidate on an IP literal, with the RFC 8445 §5.1.2.1 recommended priority for
    /// host candidates (type preference 126, local preference 65535).
    public static func host(
        _ address: SDPAddress,
        port: UInt16,
        foundation: String = "1",
        component: UInt16 = 1
    ) -> ICECandidate {
        let priority = (UInt32(126) << 24) | (UInt32(65535) << 8) | UInt32(256 - Int(component))
        return ICECandidate(
            foundation: foundation,
            component: component,
            priority: priority,
            address: .ip(address),
            port: port
        )
    }

    /// Whether the address is an mDNS name (`….local`, RFC 6762), which browsers use to hide
    /// local addresses.
    public var isMDNS: Bool {
        guard case .hostName(let name) = address else { return false }
        return name.lowercased().hasSuffix(".local")
    }

    /// The same candidate with `raddr`/`rport` as `0.0.0.0`/`::` and 0, as browsers write them
    /// under a relay-only policy: the related address (for a relayed candidate, the mapped
    /// address the TURN server saw) is diagnostic only (RFC 8445 §5.1.3) and would tell the peer
    /// the local address the policy hides. Host candidates, which have none, are unchanged.
    public var relatedAddressHidden: ICECandidate {
        guard case .ip(let related)? = relatedAddress else { return self }
        var hidden = self
        let unspecified = related.family == .ipv6 ? "::" : "0.0.0.0"
        hidden.relatedAddress = (try? SDPAddress(family: related.family, address: unspecified)).map { .ip($0) }
        hidden.relatedPort = 0
        return hidden
    }

    /// The value after `a=candidate:`.
    public var attributeValue: String {
        var fields = [
            foundation, String(component), transport.rawValue, String(priority), address.description, String(port),
            "typ", type.rawValue,
        ]
        if let relatedAddress { fields += ["raddr", relatedAddress.description] }
        if let relatedPort { fields += ["rport", String(relatedPort)] }
        for item in extensions { fields += [item.name, item.value] }
        return fields.joined(separator: " ")
    }

    /// The whole attribute, `candidate:<attributeValue>`: the SDP line without its `a=` and the
    /// form trickle carries. (libnice reads and writes it with the `a=`.)
    public var attribute: String { "candidate:" + attributeValue }

    public var description: String { attribute }

    /// Parses a whole attribute: `candidate:…` (trickle's form) or `a=candidate:…` (an SDP line,
    /// libnice's form), with or without the line end. The value is read as `init(attributeValue:)`
    /// reads it.
    public init(attribute text: some StringProtocol) throws(CandidateSyntaxError) {
        var line = Substring(text)
        while let last = line.last, last.isNewline { line = line.dropLast() }
        if line.hasPrefix("a=") { line = line.dropFirst(2) }
        guard line.hasPrefix("candidate:") else {
            throw CandidateSyntaxError("not a candidate attribute: \(quoted(line))")
        }
        try self.init(attributeValue: line.dropFirst("candidate:".count))
    }

    /// Parses the value after `a=candidate:`; the error text names what is wrong.
    public init(attributeValue value: some StringProtocol) throws(CandidateSyntaxError) {
        let fields = Substring(value).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 8 else {
            throw CandidateSyntaxError(
                "a=candidate needs foundation, component, transport, priority, address, port, 'typ' and a type"
            )
        }
        if fields.contains(where: \.isEmpty) {
            throw CandidateSyntaxError("a=candidate has an empty field (two spaces in a row?)")
        }
        guard fields[0].utf8.count <= 32, fields[0].utf8.allSatisfy(ICECredentials.isICEChar) else {
            throw CandidateSyntaxError("foundation \(quoted(fields[0])) is not 1 to 32 ice-chars")
        }
        guard let component = Self.decimal(fields[1], as: UInt16.self), fields[1].utf8.count <= 3,
            (1...256).contains(component)
        else {
            throw CandidateSyntaxError("component \(quoted(fields[1])) is not a number 1-256")
        }
        guard SDPSyntax.isToken(fields[2]) else {
            throw CandidateSyntaxError("transport \(quoted(fields[2])) is not a token")
        }
        guard fields[3].utf8.count <= 10, let priority = Self.decimal(fields[3], as: UInt32.self), priority > 0
        else {
            throw CandidateSyntaxError("priority \(quoted(fields[3])) is not a number 1-4294967295")
        }
        let address = try Self.address(fields[4], what: "address")
        let port = try Self.port(fields[5])
        guard fields[6] == "typ" else {
            throw CandidateSyntaxError("expected 'typ' after the port, found \(quoted(fields[6]))")
        }
        guard SDPSyntax.isToken(fields[7]) else {
            throw CandidateSyntaxError("candidate type \(quoted(fields[7])) is not a token")
        }
        var rest = fields[8...]
        var relatedAddress: Address?
        var relatedPort: UInt16?
        if rest.first == "raddr" {
            guard rest.count >= 2 else { throw CandidateSyntaxError("'raddr' without an address") }
            relatedAddress = try Self.address(rest[rest.startIndex + 1], what: "raddr")
            rest = rest.dropFirst(2)
        }
        if rest.first == "rport" {
            guard rest.count >= 2 else { throw CandidateSyntaxError("'rport' without a port") }
            relatedPort = try Self.port(rest[rest.startIndex + 1])
            rest = rest.dropFirst(2)
        }
        guard rest.count.isMultiple(of: 2) else {
            throw CandidateSyntaxError("extension \(quoted(rest.last ?? "")) has no value")
        }
        var extensions: [Extension] = []
        var index = rest.startIndex
        while index < rest.endIndex {
            let name = rest[index]
            let value = rest[index + 1]
            guard name.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
                value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                throw CandidateSyntaxError("extension \(quoted(name)) is not visible ASCII")
            }
            extensions.append(Extension(name: String(name), value: String(value)))
            index += 2
        }
        self.init(
            foundation: String(fields[0]),
            component: component,
            transport: Transport(rawValue: String(fields[2])),
            priority: priority,
            address: address,
            port: port,
            type: CandidateType(rawValue: String(fields[7])),
            relatedAddress: relatedAddress,
            relatedPort: relatedPort,
            extensions: extensions
        )
    }

    // MARK: Field grammar

    /// RFC 8839 `connection-address`: an IPv4 or IPv6 literal, or an FQDN
    /// (RFC 8866 `FQDN = 4*(alpha-numeric / "-" / ".")`).
    private static func address(_ text: Substring, what: String) throws(CandidateSyntaxError) -> Address {
        if text.utf8.contains(UInt8(ascii: ":")) {
            guard let literal = try? SDPAddress(family: .ipv6, address: String(text)) else {
                throw CandidateSyntaxError("\(what) \(quoted(text)) is not an IPv6 literal")
            }
            return .ip(literal)
        }
        let isDottedNumber = text.utf8.allSatisfy { (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }
        if isDottedNumber {
            guard let literal = try? SDPAddress(family: .ipv4, address: String(text)) else {
                throw CandidateSyntaxError("\(what) \(quoted(text)) is not an IPv4 literal")
            }
            return .ip(literal)
        }
        let isName = text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        guard isName, (4...253).contains(text.utf8.count) else {
            throw CandidateSyntaxError("\(what) \(quoted(text)) is neither an IP literal nor a host name")
        }
        return .hostName(String(text))
    }

    private static func port(_ text: Substring) throws(CandidateSyntaxError) -> UInt16 {
        guard let port = decimal(text, as: UInt16.self) else {
            throw CandidateSyntaxError("port \(quoted(text)) is not a number 0-65535")
        }
        return port
    }

    /// ASCII digits only (Swift's integer parser alone would take "+5").
    package static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: some StringProtocol, as: T.Type) -> T? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return T(text, radix: 10)
    }
}

/// What is wrong with an `a=candidate` value; the offer parser adds the line.
public struct CandidateSyntaxError: Error, Sendable, Equatable {
    public var problem: String

    package init(_ problem: String) { self.problem = problem }
}
