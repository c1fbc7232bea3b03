import SignalingProtocol

/// Codes the client library raises itself; they never travel on the wire.
extension SignalingError.Code {
    /// The TCP or TLS connection could not be opened.
    public static let connectionFailed = Self(rawValue: "connection-failed")
    /// A request was made while there is no connection (e.g. during a reconnect).
    public static let notConnected = Self(rawValue: "not-connected")
    /// The connection closed while the request waited for its reply.
    public static let disconnected = Self(rawValue: "disconnected")
    /// The reply did not arrive within the configured timeout.
    public static let timedOut = Self(rawValue: "timed-out")
    /// The client was closed.
    public static let closed = Self(rawValue: "closed")
    /// The server sent something this client cannot make sense of.
    public static let protocolViolation = Self(rawValue: "protocol-violation")
}
