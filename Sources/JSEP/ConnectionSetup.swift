/// RFC 4145 §4 `a=setup`, as RFC 8842 uses it for DTLS: which side opens the DTLS handshake.
/// `active` is the DTLS client (it sends the ClientHello), `passive` the server.
///
/// Browsers offer `actpass` (able to take either role) and the answerer picks `active` or
/// `passive`; see `WebRTCAnswer.Configuration.setup` for the role we pick. RFC 8842 (updating
/// RFC 5763, which required actpass) also lets an offer say `active` or `passive`; the answer
/// then takes the complement.
public enum ConnectionSetup: String, Sendable, Hashable, CaseIterable {
    case active
    case passive
    case actpass
    /// "Do not connect yet": no DTLS session, so nothing to send media on.
    case holdconn

    /// The role that complements the offerer's (RFC 4145 §4, RFC 8842 §5.3): an `active`
    /// offerer needs a `passive` answerer and the other way round; nil for actpass (we choose)
    /// and holdconn (no role works).
    var complement: ConnectionSetup? {
        switch self {
        case .active: .passive
        case .passive: .active
        case .actpass, .holdconn: nil
        }
    }
}
