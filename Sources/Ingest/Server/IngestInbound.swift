/// What a connection's read side hands the session: a message, the reason input was refused, or
/// a signal from the host's side of the connection (a deadline, a request to end).
///
/// Everything a session reacts to arrives through this one ordered stream, so a session is a
/// single loop with no shared state of its own.
enum IngestInbound: Sendable {
    /// A valid message, its size on the wire, and its arrival on the monotonic clock (ns).
    case message(IngestMessage, wireLength: Int, arrival: UInt64)
    /// The input broke the protocol; nothing more is read from this connection.
    case protocolError(IngestError)
    /// The peer closed the connection partway through a message.
    case closedMidMessage(String)
    /// No hello arrived within the server's hello timeout.
    case helloDeadline
    /// The host wants this session to end (``IngestServer/endSession(reason:message:)`` or shutdown).
    case hostEnd(IngestEndReason, String)
}
