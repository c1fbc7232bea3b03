import NIOCore
import NIOHTTP1
import NIOPosix

/// A WHIP client (RFC 9725): publishes an SDP offer to an endpoint, then PATCHes and DELETEs the
/// session it made. HTTP/1.1 bytes only; the offer, answer and ICE are the caller's.
///
/// Every request goes on a new connection, carries the bearer token when there is one, and fails
/// with a `WHIPError` whose message never contains the token.
public final class WHIPClient: Sendable, CustomStringConvertible {
    public let endpoint: WHIPURL
    public let configuration: Configuration
    let eventLoopGroup: any EventLoopGroup

    public init(
        endpoint: WHIPURL,
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    public var description: String { "WHIPClient(\(endpoint))" }

    /// POSTs the offer and returns the session the endpoint created (RFC 9725 §4.2).
    ///
    /// 307 and 308 are followed by POSTing the same offer to the new target (§4.5): a target seen
    /// twice is `.redirectLoop`, more than `maximumRedirects` `.tooManyRedirects`, and a redirect
    /// from https to http `.insecureRedirect`. 301, 302 and 303 are not followed (§4.5 forbids
    /// them, since clients turn them into GETs): `.status`. The answer must be a 201 with a
    /// Location, Content-Type application/sdp (parameters allowed) and a non-empty UTF-8 body.
    /// The token goes to every target: redirects are how WHIP load-balances onto media servers.
    public func publish(offer: String) async throws(WHIPError) -> WHIPSession {
        try await redactingToken { () async throws(WHIPError) in try await post(offer: offer) }
    }

    private func post(offer: String) async throws(WHIPError) -> WHIPSession {
        var target = endpoint
        var chain = [endpoint]
        while true {
            var headers = try baseHeaders(for: target)
            headers.add(name: "Content-Type", value: "application/sdp")
            headers.add(name: "Accept", value: "application/sdp")
            let request = HTTPRequest(method: .POST, url: target, headers: headers, body: Array(offer.utf8))
            let response = try await send(request)
            switch response.status {
            case 201:
                return try session(from: response, to: request)
            case 307, 308:
                let next = try location(in: response, to: request, resolvedAgainst: target)
                chain.append(next)
                guard !chain.dropLast().contains(next) else {
                    throw WHIPError(
                        .redirectLoop,
                        "redirect loop: \(chain.map(\.description).joined(separator: " -> "))",
                        status: response.status
                    )
                }
                guard chain.count - 1 <= configuration.maximumRedirects else {
                    throw WHIPError(
                        .tooManyRedirects,
                        "more than \(configuration.maximumRedirects) redirects from \(endpoint) (the last to \(next))",
                        status: response.status
                    )
                }
                target = next
            case 301, 302, 303:
                let to = response.headers.first(name: "location").map { " to \(Printable.text($0, limit: 200))" } ?? ""
                throw WHIPError(
                    .status,
                    "\(request.summary) answered \(response.statusText)\(to): not followed, "
                        + "WHIP endpoints redirect with 307 or 308 (RFC 9725 §4.5)",
                    status: response.status
                )
            case 200..<300:
                throw WHIPError(
                    .malformedResponse,
                    "\(request.summary) answered \(response.statusText), not 201 Created",
                    status: response.status
                )
            default:
                throw statusError(response, to: request)
            }
        }
    }

    /// PATCHes the session with an application/trickle-ice-sdpfrag body (RFC 9725 §4.3.1, RFC 8840):
    /// trickled candidates (204 No Content) or an ICE restart (200 OK with the session's new ICE
    /// credentials and candidates as an sdpfrag, and a new ETag).
    ///
    /// If-Match carries the session's ETag when it has one, or "*" for an ICE restart
    /// (`iceRestart`, §4.3.3). A non-2xx answer is `.status` (redirects are not followed for
    /// PATCH, §4.5).
    public func patch(
        _ session: WHIPSession,
        fragment: String,
        iceRestart: Bool = false
    ) async throws(WHIPError) -> (status: Int, body: String, etag: String?) {
        try await redactingToken { () async throws(WHIPError) in
            try await patchRequest(session, fragment: fragment, iceRestart: iceRestart)
        }
    }

    private func patchRequest(
        _ session: WHIPSession,
        fragment: String,
        iceRestart: Bool
    ) async throws(WHIPError) -> (status: Int, body: String, etag: String?) {
        var headers = try baseHeaders(for: session.resource)
        headers.add(name: "Content-Type", value: "application/trickle-ice-sdpfrag")
        if iceRestart {
            headers.add(name: "If-Match", value: "*")
        } else if let etag = session.etag {
            headers.add(name: "If-Match", value: etag)
        }
        let request = HTTPRequest(method: .PATCH, url: session.resource, headers: headers, body: Array(fragment.utf8))
        let response = try await send(request)
        guard (200..<300).contains(response.status) else {
            throw statusError(response, to: request)
        }
        if !response.body.isEmpty && response.mediaType != "application/trickle-ice-sdpfrag" {
            throw WHIPError(
                .unsupportedContentType,
                "\(request.summary) answered \(response.statusText) with Content-Type "
                    + "\(response.contentTypeForMessage), not application/trickle-ice-sdpfrag",
                status: response.status
            )
        }
        let body = try text(response, to: request)
        return (response.status, body, Self.etag(in: response))
    }

    /// DELETEs the session (RFC 9725 §4.2): returns the status, 200 or 204 normally, 404 when the
    /// session is already gone. Anything else is `.status`. `timeout` bounds the connection and
    /// the response alike, so a dead server cannot hold up a shutdown.
    public func delete(_ session: WHIPSession, timeout: Duration = .seconds(2)) async throws(WHIPError) -> Int {
        try await redactingToken { () async throws(WHIPError) in try await deleteRequest(session, timeout: timeout) }
    }

    private func deleteRequest(_ session: WHIPSession, timeout: Duration) async throws(WHIPError) -> Int {
        let request = HTTPRequest(
            method: .DELETE,
            url: session.resource,
            headers: try baseHeaders(for: session.resource),
            body: []
        )
        let response = try await send(request, timeout: timeout)
        guard (200..<300).contains(response.status) || response.status == 404 else {
            throw statusError(response, to: request)
        }
        return response.status
    }
}
