import NIOHTTP1

/// Requests out and responses read: headers, the token, and every check on what the server said.
extension WHIPClient {
    /// Host (RFC 9110 §7.2: the port only when not the default), User-Agent, Connection: close
    /// (RFC 9112 §9.6: one request per connection), and Authorization when there is a token.
    func baseHeaders(for url: WHIPURL) throws(WHIPError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.authority)
        headers.add(name: "User-Agent", value: configuration.userAgent)
        headers.add(name: "Connection", value: "close")
        // RFC 9725 §4.7.1: the bearer token with every request, and no Authorization without one.
        if let token = configuration.token, !token.isEmpty {
            // RFC 6750 §2.1 b64token; a line break in it would otherwise split the header.
            guard Self.isBearerToken(token) else {
                throw WHIPError(
                    .invalidConfiguration,
                    "the bearer token has characters RFC 6750 does not allow (letters, digits, -._~+/ and trailing =)"
                )
            }
            headers.add(name: "Authorization", value: "Bearer \(token)")
        }
        return headers
    }

    /// One request with this client's trust, limits and timeouts (or `timeout` for both).
    func send(_ request: HTTPRequest, timeout: Duration? = nil) async throws(WHIPError) -> HTTPResponse {
        let transport = HTTPTransport(
            group: eventLoopGroup,
            trustedCertificatesPEMPath: configuration.trustedCertificatesPEMPath,
            connectTimeout: timeout.map { min($0, configuration.connectTimeout) } ?? configuration.connectTimeout,
            responseTimeout: timeout ?? configuration.responseTimeout,
            maximumHeaderBytes: configuration.maximumHeaderBytes,
            maximumBodyBytes: configuration.maximumBodyBytes
        )
        return try await transport.send(request)
    }

    /// RFC 9725 §4.2: a 201 with a Location, an application/sdp body, and what the headers offer.
    func session(from response: HTTPResponse, to request: HTTPRequest) throws(WHIPError) -> WHIPSession {
        let resource = try location(in: response, to: request, resolvedAgainst: request.url)
        guard response.mediaType == "application/sdp" else {
            throw WHIPError(
                .unsupportedContentType,
                "\(request.summary) answered \(response.statusText) with Content-Type "
                    + "\(response.contentTypeForMessage), not application/sdp",
                status: response.status
            )
        }
        guard !response.body.isEmpty, let answer = String(validating: response.body, as: UTF8.self) else {
            let what = response.body.isEmpty ? "an empty body" : "a body that is not UTF-8"
            throw WHIPError(
                .malformedResponse,
                "\(request.summary) answered \(response.statusText) with \(what), not an SDP answer",
                status: response.status
            )
        }
        let links = WHIPLinkHeader.iceServers(response.headers["link"])
        return WHIPSession(
            resource: resource,
            endpoint: request.url,
            answer: answer,
            etag: Self.etag(in: response),
            // RFC 9725 §4.3.1 and RFC 8840 §6: PATCH with trickle-ice-sdpfrag is offered by Accept-Patch.
            acceptsTrickle: response.listValues("accept-patch").contains { value in
                let type = value.split(separator: ";", maxSplits: 1).first ?? ""
                return type.trimmingSpaces.lowercased() == "application/trickle-ice-sdpfrag"
            },
            iceServers: links.servers,
            ignoredLinks: links.ignored
        )
    }

    /// The Location of a 201 or a redirect (RFC 9110 §10.2.2), resolved against the URL that
    /// answered; never from https down to http, which would send the token in the clear.
    func location(
        in response: HTTPResponse,
        to request: HTTPRequest,
        resolvedAgainst base: WHIPURL
    ) throws(WHIPError) -> WHIPURL {
        let values = response.headers["location"]
        guard let value = values.first else {
            throw WHIPError(
                .malformedResponse,
                "\(request.summary) answered \(response.statusText) without a Location header",
                status: response.status
            )
        }
        guard values.allSatisfy({ $0 == value }) else {
            throw WHIPError(
                .malformedResponse,
                "\(request.summary) answered \(response.statusText) with \(values.count) different Location headers",
                status: response.status
            )
        }
        let target: WHIPURL
        do throws(WHIPError) {
            target = try base.resolving(reference: value)
        } catch {
            throw WHIPError(
                .malformedResponse,
                "\(request.summary) answered \(response.statusText) with an unusable Location: \(error.message)",
                status: response.status
            )
        }
        guard base.scheme == .http || target.scheme == .https else {
            throw WHIPError(
                .insecureRedirect,
                "\(request.summary) answered \(response.statusText) with Location \(target): "
                    + "refusing to go from https to http",
                status: response.status
            )
        }
        return target
    }

    /// A final answer the request did not want: its status, Retry-After, and the start of a text body.
    func statusError(_ response: HTTPResponse, to request: HTTPRequest) -> WHIPError {
        var message = "\(request.summary) answered \(response.statusText)"
        if let retry = response.headers.first(name: "retry-after") {
            message += " (Retry-After: \(Printable.text(retry, limit: 32)))"
        }
        if let body = response.bodyForMessage(redacting: configuration.token) {
            message += ": \(body)"
        }
        return WHIPError(.status, message, status: response.status)
    }

    /// A PATCH answer's body as text (an sdpfrag, or nothing).
    func text(_ response: HTTPResponse, to request: HTTPRequest) throws(WHIPError) -> String {
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw WHIPError(
                .malformedResponse,
                "\(request.summary) answered \(response.statusText) with a body that is not UTF-8",
                status: response.status
            )
        }
        return text
    }

    /// RFC 9110 §8.8.3: the entity-tag as sent (`"xyzzy"` or `W/"xyzzy"`), for If-Match; one that
    /// is not visible ASCII or over 256 bytes is dropped rather than sent back.
    static func etag(in response: HTTPResponse) -> String? {
        guard let value = response.headers.first(name: "etag")?.trimmingSpaces, !value.isEmpty,
            value.utf8.count <= 256, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            return nil
        }
        return String(value)
    }

    static func isBearerToken(_ token: String) -> Bool {
        let body = token.utf8.reversed().drop { $0 == UInt8(ascii: "=") }
        return !body.isEmpty
            && body.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || Array("-._~+/".utf8).contains(byte)
            }
    }

    /// Runs a request with the token cut out of any error, should a server have echoed it back
    /// (in a Location, say).
    func redactingToken<T>(_ body: () async throws(WHIPError) -> T) async throws(WHIPError) -> T {
        do {
            return try await body()
        } catch {
            guard let token = configuration.token, !token.isEmpty else { throw error }
            var redacted = error
            redacted.message = error.message.replacing(token, with: "[redacted]")
            throw redacted
        }
    }
}
