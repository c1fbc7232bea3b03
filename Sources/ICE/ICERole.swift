/// The agent's ICE role (RFC 8445 §6.1.1). A full agent that offers is controlling, one that
/// answers is controlled; libnice resolves a role conflict (both claim the same role) itself, with
/// the tie-breaker and 487 Role Conflict.
public enum ICERole: Hashable, Sendable, CustomStringConvertible {
    /// Offerer: nominates the pair media goes over.
    case controlling
    /// Answerer: takes the controlling agent's nomination.
    case controlled

    public var description: String {
        switch self {
        case .controlling: return "controlling"
        case .controlled: return "controlled"
        }
    }
}
