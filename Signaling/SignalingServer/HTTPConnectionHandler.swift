import Logging
import NIOCore
import NIOHTTP1
import SignalingAuth
import SignalingProtocol
import ViewerPage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Serves the HTTP/1.1 requests of one connection (keep-alive, pipelined in order by NIO):
///
/// | request | answer |
/// |---|---|
/// | `GET /rooms/ROOM` | the viewer page |
/// | `GET /viewer.js` | its script |
/// | `GET /clock` | `{"monotonicMs": …}`: CLOCK_MONOTONIC, the publisher's capture clock (glass-to-glass) |
/// | `POST /rooms/ROOM/whep/PUBLISHER` | WHEP: `201`, `Location`, the answer (``WHEPSessions``) |
/// | `DELETE /rooms/ROOM/whep/PUBLISHER/sessions/ID` | ends that WHEP session |
/// | `GET /metrics` | Prometheus text (``ServerMetrics``) |
/// | `GET /healthz` | `ok` |
/// | `OPTIONS …` | CORS preflight |
///
/// `GET /ws` with `Upgrade: websocket` never gets here (the upgrader takes it); without the
/// header it gets `426`. Limits: header bytes (NIO's decoder), body bytes (`413` from
/// `Content-Length` or as soon as the chunks pass it, unread), the time one request may take to
/// arrive (`408`, ``HTTPRequestDeadline``), the same message rate as the line protocol (`429`),
/// the idle timeout between requests (the connection closes), WHEP sessions per client address.
struct HTTPConnectionHandler: Sendable {
    let registry: RoomRegistry
    let whep: WHEPSessions
    let metrics: ServerMetrics
    let configuration: SignalingServerConfiguration
    let logger: Logger

    typealias Inbound = NIOAsyncChannelInboundStream<HTTPServerRequestPart>
    typealias Outbound = NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    func handle(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        metrics.opened(.http)
        let client = channel.channel.remoteAddress?.ipAddress ?? "unknown"
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await serve(inbound, outbound, client: client)
                // The last answer said `Connection: close`. Closing at once would reset the
                // connection if the client is still sending (a refused body), and a reset can
                // lose that answer; linger instead (``LingeringCloseHandler``). A pipeline
                // without one refuses the event, and the connection closes at once.
                let lingering = channel.channel.eventLoop.makePromise(of: Void.self)
                channel.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: lingering)
                guard (try? await lingering.futureResult.get()) != nil else { return }
                try await channel.channel.closeFuture.get()
            }
        } catch {
            logger.debug("HTTP connection ended", metadata: ["error": "\(error)"])
        }
        metrics.closed(.http)
    }

    /// Serves requests until one that closes the connection; returns after writing its answer.
    private func serve(_ inbound: Inbound, _ outbound: Outbound, client: String) async throws {
        var limiter = MessageRateLimiter(
            burst: configuration.messageBurst,
            perSecond: configuration.messagesPerSecond,
            now: .now
        )
        var head: HTTPRequestHead?
        var body = ByteBuffer()
        for try await part in inbound {
            switch part {
            case .head(let requestHead):
                head = requestHead
                body.clear()
                // A body announced too long is refused before any of it is read.
                if let announced = requestHead.headers.first(name: "content-length").flatMap(Self.contentLength),
                    Self.exceeds(announced, configuration.maxHTTPBodyBytes)
                {
                    return try await refuseBody(of: requestHead, length: "\(announced) bytes", to: outbound)
                }
            case .body(var chunk):
                guard let request = head else { continue }
                guard body.readableBytes + chunk.readableBytes <= configuration.maxHTTPBodyBytes else {
                    return try await refuseBody(of: request, length: "longer", to: outbound)
                }
                body.writeBuffer(&chunk)
            case .end:
                guard let request = head else { continue }
                head = nil
                let response: HTTPReply
                if !limiter.allow(at: .now) {
                    response = .text(.tooManyRequests, "too many requests; slow down\n", route: "rate-limited")
                } else {
                    response = await route(request, body: body, client: client)
                }
                metrics.request(route: response.route, status: response.status.code)
                try await write(response, for: request, keepAlive: request.isKeepAlive, to: outbound)
                if !request.isKeepAlive { return }
            }
        }
    }

    /// `413` as soon as a body is known to be too long (from `Content-Length`, or once the
    /// chunks read pass the limit), and the connection closes: the rest is never read.
    private func refuseBody(of request: HTTPRequestHead, length: String, to outbound: Outbound) async throws {
        let response = HTTPReply.text(
            .payloadTooLarge,
            "the body (\(length)) is longer than \(configuration.maxHTTPBodyBytes) bytes\n",
            route: "too-large"
        )
        metrics.request(route: response.route, status: response.status.code)
        try await write(response, for: request, keepAlive: false, to: outbound)
    }

    // MARK: Routing

    private func route(_ request: HTTPRequestHead, body: ByteBuffer, client: String) async -> HTTPReply {
        let path = Self.originForm(request.uri).split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let query = Self.query(of: request.uri)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let method = request.method
        if method == .OPTIONS { return .preflight(whep: parts.count == 4 && parts[2] == "whep") }
        let readOnly = method == .GET || method == .HEAD
        if parts.count == 1, ["healthz", "metrics", "clock", "viewer.js", "ws"].contains(parts[0]), !readOnly {
            return .notAllowed("GET, HEAD, OPTIONS", route: parts[0])
        }
        if parts == ["healthz"], readOnly { return .text(.ok, "ok\n", route: "healthz") }
        if parts == ["metrics"], readOnly {
            let census = await registry.census()
            return HTTPReply(
                status: .ok,
                contentType: "text/plain; version=0.0.4; charset=utf-8",
                body: metrics.exposition(census),
                route: "metrics"
            )
        }
        if parts == ["clock"], readOnly { return Self.clock() }
        if parts == ["viewer.js"], readOnly {
            return HTTPReply(
                status: .ok,
                contentType: "text/javascript; charset=utf-8",
                body: Array(ViewerPage.script.utf8),
                route: "script"
            )
        }
        if parts == ["ws"], readOnly {
            if request.headers[HTTPUpgradeGate.refusedHeader].contains(where: { $0.lowercased().contains("websocket") })
            {
                return .text(
                    .badRequest,
                    "a WebSocket handshake needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n",
                    route: "ws"
                )
            }
            return .text(.upgradeRequired, "this is the WebSocket endpoint: ask with Upgrade: websocket\n", route: "ws")
        }
        guard parts.count >= 2, parts[0] == "rooms" else {
            return .text(.notFound, "nothing here: \(path.prefix(120))\n", route: "not-found")
        }
        if parts.count == 2 {
            guard readOnly else { return .notAllowed("GET, HEAD, OPTIONS", route: "page") }
            return Self.page(room: parts[1])
        }
        if parts.count == 4, parts[2] == "whep" {
            guard method == .POST else { return .notAllowed("POST, OPTIONS", route: "whep") }
            return await createWHEP(
                request,
                room: parts[1],
                publisher: parts[3],
                query: query,
                body: body,
                client: client
            )
        }
        if parts.count == 6, parts[2] == "whep", parts[4] == "sessions" {
            // PATCH (trickle, ICE restart) is not offered: the offer must be complete; 405 says so.
            guard method == .DELETE else { return .notAllowed("DELETE, OPTIONS", route: "whep-session") }
            return deleteWHEP(room: parts[1], publisher: parts[3], id: parts[5])
        }
        return .text(.notFound, "nothing here: \(path.prefix(120))\n", route: "not-found")
    }

    private static func page(room: String) -> HTTPReply {
        guard (try? RoomID(validating: room)) != nil else {
            return .text(.notFound, "no such room name: \(room.prefix(80))\n", route: "page")
        }
        var reply = HTTPReply(
            status: .ok,
            contentType: "text/html; charset=utf-8",
            body: Array(ViewerPage.html.utf8),
            route: "page"
        )
        reply.headers.add(
            name: "Content-Security-Policy",
            value: "default-src 'self'; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; "
                + "img-src 'self' data:; media-src 'self' blob:; frame-ancestors 'none'"
        )
        return reply
    }

    /// CLOCK_MONOTONIC in milliseconds: the clock the publisher stamps capture times with (the
    /// same machine's), so the page can turn a timecode into glass-to-glass delay.
    private static func clock() -> HTTPReply {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let milliseconds = Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
        return HTTPReply(
            status: .ok,
            contentType: "application/json",
            body: Array(#"{"monotonicMs":\#(milliseconds)}"#.utf8),
            route: "clock"
        )
    }

    private func createWHEP(
        _ request: HTTPRequestHead,
        room roomName: String,
        publisher publisherName: String,
        query: [String: String],
        body: ByteBuffer,
        client: String
    ) async -> HTTPReply {
        let contentType = request.headers.first(name: "content-type")?.lowercased() ?? ""
        guard contentType.split(separator: ";").first?.trimmingSpaces == "application/sdp" else {
            return .text(.unsupportedMediaType, "a WHEP offer is Content-Type: application/sdp\n", route: "whep")
        }
        let room: RoomID
        let publisher: MemberID
        let uid: MemberID?
        do throws(SignalingError) {
            room = try RoomID(validating: roomName)
            publisher = try MemberID(validating: publisherName)
            if let name = query["uid"] { uid = try MemberID(validating: name) } else { uid = nil }
        } catch {
            return .text(.badRequest, "\(error.message)\n", route: "whep")
        }
        guard body.readableBytes > 0 else { return .text(.badRequest, "the body has no SDP offer\n", route: "whep") }
        // The offer is checked as the line protocol checks a subscribe's, before anything is
        // relayed: garbage gets its 400 at once, not a 504 when the publisher cannot answer.
        guard let offer = String(validating: body.readableBytesView, as: UTF8.self) else {
            return .text(.badRequest, "the offer is not valid UTF-8\n", route: "whep")
        }
        do throws(SignalingError) {
            try SignalingProtocol.validateSDP(offer, field: "offer")
        } catch {
            return .text(.badRequest, "\(error.message)\n", route: "whep")
        }
        var token: String?
        if let authorization = request.headers.first(name: "authorization") {
            guard authorization.lowercased().hasPrefix("bearer ") else {
                var reply = HTTPReply.text(.unauthorized, "Authorization must be Bearer TOKEN\n", route: "whep")
                reply.headers.add(name: "WWW-Authenticate", value: "Bearer")
                return reply
            }
            token = String(authorization.dropFirst(7)).trimmingSpaces
        }
        do {
            let created = try await whep.create(
                room: room,
                publisher: publisher,
                uid: uid,
                token: token,
                offer: offer,
                client: client
            )
            var reply = HTTPReply(
                status: .created,
                contentType: "application/sdp",
                body: Array(created.answer.utf8),
                route: "whep"
            )
            reply.headers.add(name: "Location", value: "/rooms/\(room)/whep/\(publisher)/sessions/\(created.id)")
            reply.headers.add(name: "ETag", value: "\"\(created.id)\"")
            return reply
        } catch {
            var reply = HTTPReply.text(error.status, "\(error.message)\n", route: "whep")
            if error.status == .unauthorized { reply.headers.add(name: "WWW-Authenticate", value: "Bearer") }
            return reply
        }
    }

    private func deleteWHEP(room: String, publisher: String, id: String) -> HTTPReply {
        guard let room = try? RoomID(validating: room), let publisher = try? MemberID(validating: publisher),
            whep.delete(id: id, room: room, publisher: publisher)
        else {
            return .text(.notFound, "no such WHEP session\n", route: "whep-session")
        }
        return .text(.ok, "session ended\n", route: "whep-session")
    }

    // MARK: Writing

    private func write(
        _ reply: HTTPReply,
        for request: HTTPRequestHead,
        keepAlive: Bool,
        to outbound: Outbound
    ) async throws {
        var headers = reply.headers
        headers.add(name: "Content-Length", value: String(reply.body.count))
        if let contentType = reply.contentType { headers.add(name: "Content-Type", value: contentType) }
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        // CORS (a WHEP player on another origin): any origin; no cookies are ever used.
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        headers.add(name: "Access-Control-Expose-Headers", value: "Location, ETag, Link")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: request.version, status: reply.status, headers: headers)
        try await outbound.write(.head(head))
        if request.method != .HEAD, !reply.body.isEmpty {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: reply.body))))
        }
        try await outbound.write(.end(nil))
    }

    /// A request target in absolute form (`http://host/path`, RFC 9112 §3.2.2, which a server
    /// must accept) as origin form (`/path`); any other target as it is. The authority ends at
    /// the first `/`, `?` or `#` (RFC 3986 §3.2): `http://host?x/healthz` is `/?x/healthz`.
    static func originForm(_ uri: String) -> String {
        for scheme in ["http://", "https://"] where uri.lowercased().hasPrefix(scheme) {
            let rest = uri.dropFirst(scheme.count)
            guard let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return "/" }
            switch rest[end] {
            case "/": return String(rest[end...])
            case "?": return "/" + rest[end...]
            default: return "/"
            }
        }
        return uri
    }

    /// A `Content-Length` value as NIO's parser leaves it (white space around it kept; digits
    /// up to 2^64 − 1) as the decimal it is (RFC 9110 §8.6: `1*DIGIT`): no white space, no
    /// leading zeros; nil if it is no number. Read as text, so no value overflows.
    static func contentLength(_ value: String) -> String? {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let trimmed = value.drop(while: blank).reversed().drop(while: blank).reversed()
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let digits = String(trimmed.drop { $0 == "0" })
        return digits.isEmpty ? "0" : digits
    }

    /// Whether the decimal `digits` (``contentLength(_:)``) is more than `limit`.
    static func exceeds(_ digits: String, _ limit: Int) -> Bool {
        let bound = String(limit)
        return digits.count > bound.count || digits.count == bound.count && digits > bound
    }

    /// `?a=1&b=2` of a URI, percent-decoding left out: every value used is a room, uid or token,
    /// none of which contains `%`.
    static func query(of uri: String) -> [String: String] {
        guard let start = uri.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in uri[uri.index(after: start)...].split(separator: "&").prefix(16) {
            let fields = pair.split(separator: "=", maxSplits: 1)
            guard let key = fields.first else { continue }
            result[String(key)] = fields.count > 1 ? String(fields[1]) : ""
        }
        return result
    }
}

/// One response: status, body and the headers particular to it.
struct HTTPReply: Sendable {
    var status: HTTPResponseStatus
    var contentType: String?
    var body: [UInt8]
    /// The `route` label of `rtc_signal_http_requests_total`.
    var route: String
    var headers = HTTPHeaders()

    init(status: HTTPResponseStatus, contentType: String?, body: [UInt8], route: String) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.route = route
    }

    static func text(_ status: HTTPResponseStatus, _ text: String, route: String) -> HTTPReply {
        HTTPReply(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8), route: route)
    }

    static func notAllowed(_ allow: String, route: String) -> HTTPReply {
        var reply = text(.methodNotAllowed, "method not allowed here; allowed: \(allow)\n", route: route)
        reply.headers.add(name: "Allow", value: allow)
        return reply
    }

    /// A CORS preflight: what a page on another origin may send.
    static func preflight(whep: Bool) -> HTTPReply {
        var reply = HTTPReply(status: .noContent, contentType: nil, body: [], route: "preflight")
        reply.headers.add(name: "Access-Control-Allow-Methods", value: "GET, HEAD, POST, DELETE, OPTIONS")
        reply.headers.add(name: "Access-Control-Allow-Headers", value: "Authorization, Content-Type")
        reply.headers.add(name: "Access-Control-Max-Age", value: "600")
        if whep { reply.headers.add(name: "Accept-Post", value: "application/sdp") }
        return reply
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
