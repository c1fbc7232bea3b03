/// Which side of the DTLS handshake this endpoint plays.
///
/// RFC 5763 §5: the offerer writes `a=setup:actpass`, the answerer picks `active` or `passive`
/// (and should pick `active`), and the `active` endpoint is the DTLS client: it sends the
/// ClientHello. So the answer's `a=setup` decides both roles.
public enum DTLSRole: Sendable, Hashable, CustomStringConvertible {
    /// `a=setup:active`: sends the ClientHello.
    case client
    /// `a=setup:passive`: waits for the ClientHello.
    case server

    /// Our role from the `a=setup` value in the answer. `weAnswered` says whose the answer is:
    /// ours (the value is our own setup) or the peer's (we offered actpass, so we take the other
    /// side). Throws for `actpass` or `holdconn` in an answer, which RFC 5763 §5 does not allow,
    /// and for anything else.
    public init(answerSetup value: some StringProtocol, weAnswered: Bool) throws {
        let answererIsClient: Bool
        switch value.lowercased() {
        case "active": answererIsClient = true
        case "passive": answererIsClient = false
        default:
            throw DTLSError(
                .invalidConfiguration,
                "an answer's a=setup must be active or passive (RFC 5763 §5), got '\(value.prefix(32))'"
            )
        }
        self = answererIsClient == weAnswered ? .client : .server
    }

    /// The `a=setup` value this role takes in an answer.
    public var answerSetup: String { self == .client ? "active" : "passive" }

    public var description: String { self == .client ? "client" : "server" }
}
