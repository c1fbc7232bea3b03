import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import SignalingProtocol
@_spi(Fuzzing) import SignalingServer
import Synchronization

/// HTTP/1.1 requests on one connection, as bytes: NIO's request decoder (with the server's header
/// limits), pipelining handler and response header validator turn them into request parts for
/// the server's `HTTPConnectionHandler`, whose responses come back as parts. Only bytes the
/// sniffer takes for HTTP are used. Options (the first byte's upper six bits): bit 0, the
/// server has a join secret; bit 1, its body limit is 100 bytes instead of 64 KiB (to reach
/// `413`). A server per option pair lives across inputs; rate limits are off.
///
/// Checked for every request the handler was given (until NIO's first parse error), in order:
/// one response each, up to and including the first that closes the connection (a request that
/// is not keep-alive, or a body over the limit); a request cut off by the end of the input gets
/// one only when its body is refused (see below); the version of the request; `Content-Length`
/// the body's length (no body for `HEAD`); the headers every response carries (CORS, no-store,
/// nosniff, no-referrer, `Connection` as the request asked); the status Docs/web.md's table gives
/// the method and path (a WHEP offer: its refusals, never `201`, as no publisher exists here),
/// `Allow` on `405`, `WWW-Authenticate` on `401`, the preflight's headers on `204`. A body over
/// the limit gets `413` with `Connection: close` and nothing after it: at the head when its
/// `Content-Length` says so (`the body (N bytes) is longer than L bytes`), else as soon as the
/// chunks read pass it (`the body (longer) …`), whether the request is complete or not. A WHEP
/// offer's body is checked before the room is asked: not UTF-8, or not an SDP by the rule
/// restated in ``SDPShape`` (which `SignalingProtocol.validateSDP` must agree with), is `400` with
/// the check's text; `429` only once the connection's earlier offers reached the per-address
/// limit. A WHEP session a `POST` started must leave its room within 10 s of its refusal, and be
/// forgotten right after. The connection is closed at the end. `query(of:)` keeps its shape.
enum HTTPInput {
    static let loop = NIOAsyncTestingEventLoop()
    static let bodyLimits = [SignalingServerConfiguration().maxHTTPBodyBytes, 100]
    static let servings = (0..<4).map { index in
        var configuration = SignalingServerConfiguration()
        configuration.messageBurst = 1 << 30
        configuration.messagesPerSecond = 1e9
        configuration.secret = index & 1 != 0 ? "fuzz-secret" : nil
        configuration.maxHTTPBodyBytes = bodyLimits[index >> 1]
        configuration.whepAnswerTimeout = .seconds(5)
        return WebInputFuzzing.HTTPServing(configuration: configuration)
    }

    struct Request {
        var head: HTTPRequestHead
        var body: [UInt8] = []
        /// Whether its `.end` came; the input may end (or NIO fail) in the middle of a body.
        var complete = false
    }

    struct Response {
        var head: HTTPResponseHead
        var body: [UInt8] = []
    }

    static func run(_ bytes: [UInt8], options: UInt8) async {
        guard WebInputFuzzing.decide(bytes) == .http else { return }
        let index = Int(options & 3)
        let serving = servings[index]
        let log = RequestLog()
        // Few hops to the loop's queue: each costs two thread switches, most of an input's time.
        let channel = NIOAsyncTestingChannel(loop: loop)
        let wrapped: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
        do {
            wrapped = try await loop.executeInContext {
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderListSize = SignalingServerConfiguration().maxHTTPHeaderBytes
                limits.maxHeaderFieldCount = 64
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(ResponseRecorder(log: log))
                try pipeline.addHandler(
                    ByteToMessageHandler(
                        HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: limits)
                    )
                )
                try pipeline.addHandler(HTTPServerPipelineHandler())
                try pipeline.addHandler(NIOHTTPResponseHeadersValidator())
                try pipeline.addHandler(RequestRecorder(log: log))
                channel.register(promise: nil)
                channel.connect(to: try SocketAddress(ipAddress: "127.0.0.9", port: 9), promise: nil)
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
            }
        } catch {
            fatalError("cannot set up the HTTP pipeline: \(error)")
        }

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await serving.handle(wrapped) }
            // The client sends everything, then half-closes.
            try? await loop.executeInContext {
                channel.pipeline.fireChannelRead(ByteBuffer(bytes: bytes))
                channel.pipeline.fireChannelReadComplete()
                channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            }
        }
        // The handler closed the channel (at once: no LingeringCloseHandler here); its pipeline
        // is torn down by a task on the loop.
        await loop.run()
        guard !channel.isActive else { fatalError("the connection is still open after its handler returned") }
        let requests = log.requests()
        if requests.contains(where: { $0.head.method == .POST }) {
            await waitForWHEPSessionsToEnd(serving)
        }
        check(
            requests: requests,
            responses: responses(log.responseParts()),
            bodyLimit: bodyLimits[index >> 1],
            secret: index & 1 != 0
        )
    }

    /// Every `POST` here is refused, and its session must then leave the room (its registry
    /// connection closes) and be forgotten (`whepSessions` back to 0) right after.
    private static func waitForWHEPSessionsToEnd(_ serving: WebInputFuzzing.HTTPServing) async {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while await serving.connections > 0 {
            guard clock.now < deadline else { fatalError("a WHEP session is still in its room 10 s after its refusal") }
            try? await Task.sleep(for: .microseconds(100))
        }
        // The session's task forgets it right after leaving the room. Allow it 100 ms; when the
        // finding is known, 2 ms (clearing a session that was about to go does no harm).
        let forgotten = clock.now + .milliseconds(KnownFindings.whepSessionEntryOutlivesItsTask ? 2 : 100)
        while serving.whepSessions > 0, clock.now < forgotten {
            try? await Task.sleep(for: .microseconds(100))
        }
        guard serving.whepSessions > 0 else { return }
        guard KnownFindings.whepSessionEntryOutlivesItsTask else {
            fatalError("\(serving.whepSessions) WHEP sessions are still listed 100 ms after they left their rooms")
        }
        serving.endAllWHEPSessions()
    }

    private static func responses(_ parts: [HTTPServerResponsePart]) -> [Response] {
        var responses: [Response] = []
        var current: Response?
        for part in parts {
            switch part {
            case .head(let head):
                guard current == nil else { fatalError("a response head inside a response") }
                current = Response(head: head)
            case .body(.byteBuffer(let buffer)):
                guard current != nil else { fatalError("a body part outside a response") }
                current?.body += buffer.readableBytesView
            case .body(.fileRegion):
                fatalError("a file region in a response")
            case .end(let trailers):
                guard let response = current, trailers == nil else {
                    fatalError("an end without a response, or trailers")
                }
                responses.append(response)
                current = nil
            }
        }
        guard current == nil else { fatalError("a response without its end") }
        return responses
    }

    private static func check(requests: [Request], responses: [Response], bodyLimit: Int, secret: Bool) {
        var answered: [Request] = []
        for request in requests {
            let refused = bodyRefusal(of: request, limit: bodyLimit) != nil
            // A request cut short is answered only if its body is refused before its end.
            guard request.complete || refused else { break }
            answered.append(request)
            checkQuery(request.head.uri)
            if !request.head.isKeepAlive || refused { break }
        }
        guard responses.count == answered.count else {
            fatalError(
                "\(responses.count) responses to \(answered.count) requests: "
                    + "\(answered.map { "\($0.head.method) \($0.head.uri.prefix(80))" })"
            )
        }
        var offers = WHEPOffers()
        for (request, response) in zip(answered, responses) {
            check(response, to: request, bodyLimit: bodyLimit, secret: secret, offers: &offers)
        }
    }

    /// Why a request's body is refused with `413`, if it is.
    enum BodyRefusal {
        /// `Content-Length` says more than the limit: refused at the head.
        case declared(String)
        /// The chunks read so far pass the limit.
        case chunks
    }

    static func bodyRefusal(of request: Request, limit: Int) -> BodyRefusal? {
        if let value = request.head.headers.first(name: "content-length"), let declared = decimal(value),
            declared.count > String(limit).count || declared.count == String(limit).count && declared > String(limit)
        {
            guard !KnownFindings.contentLengthNotReadByIntNotRefusedAtHead || Int(value) != nil else {
                return request.body.count > limit ? .chunks : nil
            }
            return .declared(declared)
        }
        return request.body.count > limit ? .chunks : nil
    }

    /// The value of a `Content-Length` as a decimal without leading zeros (RFC 9110 §8.6:
    /// `1*DIGIT`, around optional white space), or nil.
    static func decimal(_ value: String) -> String? {
        let trimmed = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
        guard !trimmed.isEmpty, trimmed.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let digits = String(decoding: trimmed.reversed().drop { $0 == 0x30 }, as: UTF8.self)
        return digits.isEmpty ? "0" : digits
    }

    /// The connection's WHEP offers so far that got as far as asking the room: each may still
    /// hold a session (and one of the client address's places) while it leaves.
    struct WHEPOffers {
        var askedRoom = 0
    }

    // MARK: What each response must be

    struct Expectation {
        var statuses: Set<UInt>
        var allow: String?
        var body: [UInt8]?
        var contentType: String?
        var whepPreflight = false
        /// A `401` may lack `WWW-Authenticate` (``KnownFindings/unauthorizedWithoutChallenge``).
        var challengeOptional = false

        init(_ statuses: Set<UInt>, allow: String? = nil, body: String? = nil, contentType: String? = nil) {
            self.statuses = statuses
            self.allow = allow
            self.body = body.map { Array($0.utf8) }
            self.contentType = contentType
        }
    }

    static let fixedRoutes: [String: Expectation] = [
        "healthz": Expectation([200], body: "ok\n", contentType: "text/plain; charset=utf-8"),
        "metrics": Expectation([200], contentType: "text/plain; version=0.0.4; charset=utf-8"),
        "clock": Expectation([200], contentType: "application/json"),
        "viewer.js": Expectation([200], contentType: "text/javascript; charset=utf-8"),
        "ws": Expectation([426], contentType: "text/plain; charset=utf-8"),
    ]

    static func expectation(
        for request: Request,
        bodyLimit: Int,
        secret: Bool,
        offers: inout WHEPOffers
    ) -> Expectation {
        let method = request.head.method
        switch bodyRefusal(of: request, limit: bodyLimit) {
        case .declared(let length):
            return Expectation(
                [413],
                body: "the body (\(length) bytes) is longer than \(bodyLimit) bytes\n",
                contentType: "text/plain; charset=utf-8"
            )
        case .chunks:
            return Expectation(
                [413],
                body: "the body (longer) is longer than \(bodyLimit) bytes\n",
                contentType: "text/plain; charset=utf-8"
            )
        case nil:
            break
        }
        let parts = segments(of: request.head.uri)
        if method == .OPTIONS {
            var preflight = Expectation([204])
            preflight.whepPreflight = parts.count == 4 && parts[2] == "whep"
            return preflight
        }
        let readOnly = method == .GET || method == .HEAD
        if parts.count == 1, let fixed = fixedRoutes[parts[0]] {
            if readOnly { return fixed }
            return KnownFindings.fixedRoutesRefuseMethodsWith404 ? Expectation([404]) : Expectation([405])
        }
        guard parts.count >= 2, parts[0] == "rooms" else { return Expectation([404]) }
        if parts.count == 2 {
            guard readOnly else { return Expectation([405], allow: "GET, HEAD, OPTIONS") }
            guard (try? RoomID(validating: parts[1])) != nil else { return Expectation([404]) }
            return Expectation([200], contentType: "text/html; charset=utf-8")
        }
        if parts.count == 4, parts[2] == "whep" {
            guard method == .POST else { return Expectation([405], allow: "POST, OPTIONS") }
            return whepOffer(request, room: parts[1], publisher: parts[3], secret: secret, offers: &offers)
        }
        if parts.count == 6, parts[2] == "whep", parts[4] == "sessions" {
            guard method == .DELETE else { return Expectation([405], allow: "DELETE, OPTIONS") }
            return Expectation([404])  // no session was ever created here
        }
        return Expectation([404])
    }

    /// The path's segments after its leading `/`: of an origin-form target the text before `?`;
    /// of an absolute-form one (RFC 9112 §3.2.2) with a scheme this server serves (`http`,
    /// `https`, in any case: RFC 3986 §3.1) the path after the authority. A target with another
    /// scheme names no resource here; it is taken as it is (so `404`).
    static func segments(of target: String) -> [String] {
        var path = Substring(target)
        let lowered = target.lowercased()
        if !KnownFindings.absoluteFormNotRouted, lowered.hasPrefix("http://") || lowered.hasPrefix("https://"),
            let scheme = path.firstRange(of: "://")
        {
            let authorityAndPath = path[scheme.upperBound...]
            let end =
                authorityAndPath.firstIndex {
                    $0 == "/" || $0 == "?" && !KnownFindings.absoluteFormAuthorityEndsOnlyAtSlash
                } ?? authorityAndPath.endIndex
            path = authorityAndPath[end...]
            if !path.hasPrefix("/") { path = "/" + path }
        }
        path = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
    }

    /// A WHEP offer in a room without publishers: every check before the room's refuses with its
    /// own status, in `createWHEP`'s order (media type `415`; names, empty body `400`; an offer
    /// that is not UTF-8 or not an SDP `400` with the check's text; not `Bearer` `401`); the room
    /// then says no such member (`404`), the uid is taken by a session still leaving (`409`),
    /// the uid is the publisher's (`400`) or, with a secret, the token is missing or wrong
    /// (`401`); the client address holds its most sessions (`429`) only after as many earlier
    /// offers on this connection asked the room. Never `413` (a relay too long for a line): no
    /// publisher, nothing is relayed.
    private static func whepOffer(
        _ request: Request,
        room: String,
        publisher: String,
        secret: Bool,
        offers: inout WHEPOffers
    ) -> Expectation {
        let headers = request.head.headers
        let contentType = headers.first(name: "content-type")?.lowercased() ?? ""
        guard contentType.split(separator: ";").first.map(trimmingSpaces) == "application/sdp" else {
            return Expectation([415])
        }
        let uid = WebInputFuzzing.query(of: request.head.uri)["uid"]
        guard (try? RoomID(validating: room)) != nil, (try? MemberID(validating: publisher)) != nil,
            uid.map({ (try? MemberID(validating: $0)) != nil }) ?? true
        else { return Expectation([400]) }
        guard !request.body.isEmpty else {
            return Expectation([400], body: "the body has no SDP offer\n", contentType: "text/plain; charset=utf-8")
        }
        guard let offer = String(validating: request.body, as: UTF8.self) else {
            return Expectation([400], body: "the offer is not valid UTF-8\n", contentType: "text/plain; charset=utf-8")
        }
        let problem = SDPShape.problem(offer)
        do throws(SignalingError) {
            try SignalingProtocol.validateSDP(offer, field: "offer")
            guard problem == nil else {
                fatalError("validateSDP took an offer that \(problem!): \(Array(offer.utf8.prefix(200)))")
            }
        } catch {
            guard problem != nil else {
                fatalError("validateSDP refused a good offer (\(error)): \(Array(offer.utf8.prefix(200)))")
            }
            guard error.code == .invalidField, error.message.hasPrefix("field \"offer\" ") else {
                fatalError("validateSDP refused with \(error)")
            }
            return Expectation([400], body: "\(error.message)\n", contentType: "text/plain; charset=utf-8")
        }
        if let authorization = headers.first(name: "authorization"), !authorization.lowercased().hasPrefix("bearer ") {
            var refused = Expectation([401])
            refused.challengeOptional = KnownFindings.unauthorizedWithoutChallenge
            return refused
        }
        var statuses: Set<UInt> = secret ? [400, 401, 404, 409] : [400, 404, 409]
        if offers.askedRoom >= SignalingServerConfiguration().maxWHEPSessionsPerAddress { statuses.insert(429) }
        offers.askedRoom += 1
        return Expectation(statuses)
    }

    private static func trimmingSpaces(_ text: Substring) -> Substring {
        let start = text.firstIndex { $0 != " " } ?? text.endIndex
        let end = text.lastIndex { $0 != " " }.map(text.index(after:)) ?? start
        return text[start..<max(start, end)]
    }

    private static func check(
        _ response: Response,
        to request: Request,
        bodyLimit: Int,
        secret: Bool,
        offers: inout WHEPOffers
    ) {
        let head = request.head
        let status = response.head.status.code
        let headers = response.head.headers
        func require(_ condition: Bool, _ what: @autoclosure () -> String) {
            guard condition else { fatalError("\(head.method) \(head.uri.prefix(200)) → \(status): \(what())") }
        }
        let keepAlive = head.isKeepAlive && bodyRefusal(of: request, limit: bodyLimit) == nil
        require(response.head.version == head.version, "the response is \(response.head.version)")
        let common = [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("Access-Control-Allow-Origin", "*"), ("Access-Control-Expose-Headers", "Location, ETag, Link"),
            ("Connection", keepAlive ? "keep-alive" : "close"),
        ]
        for (name, value) in common {
            require(headers[name] == [value], "\(name): \(headers[name]), expected \(value)")
        }
        let length = headers["Content-Length"]
        require(length.count == 1 && length.first.flatMap { Int($0) } != nil, "Content-Length \(length)")
        if head.method == .HEAD {
            require(response.body.isEmpty, "a \(response.body.count)-byte body for HEAD")
        } else {
            require(
                Int(length[0]) == response.body.count,
                "Content-Length \(length[0]) for \(response.body.count) bytes"
            )
        }

        let expected = expectation(for: request, bodyLimit: bodyLimit, secret: secret, offers: &offers)
        require(expected.statuses.contains(status), "expected \(expected.statuses.sorted())")
        if let contentType = expected.contentType {
            require(headers["Content-Type"] == [contentType], "Content-Type \(headers["Content-Type"])")
        }
        if let body = expected.body, head.method != .HEAD {
            require(response.body == body, "the body \(response.body.prefix(40))")
        }
        switch status {
        case 405:
            require(headers["Allow"].count == 1, "Allow \(headers["Allow"])")
            if let allow = expected.allow { require(headers["Allow"] == [allow], "Allow \(headers["Allow"])") }
        case 401:
            require(
                headers["WWW-Authenticate"] == ["Bearer"] || expected.challengeOptional,
                "WWW-Authenticate \(headers["WWW-Authenticate"])"
            )
        case 204:
            require(response.body.isEmpty, "a preflight with a body")
            require(
                headers["Access-Control-Allow-Methods"] == ["GET, HEAD, POST, DELETE, OPTIONS"]
                    && headers["Access-Control-Allow-Headers"] == ["Authorization, Content-Type"],
                "preflight headers \(headers)"
            )
            require(
                headers.contains(name: "Accept-Post") == expected.whepPreflight,
                "Accept-Post \(headers["Accept-Post"]) on a preflight for WHEP: \(expected.whepPreflight)"
            )
        default:
            break
        }
    }

    /// `query(of:)`: at most 16 pairs, from the text after the first `?`, keys without `=`,
    /// neither keys nor values with `&`.
    private static func checkQuery(_ uri: String) {
        let query = WebInputFuzzing.query(of: uri)
        guard let mark = uri.firstIndex(of: "?") else {
            guard query.isEmpty else { fatalError("a query from \(uri.prefix(100)), which has no ?") }
            return
        }
        let text = uri[uri.index(after: mark)...]
        guard query.count <= 16 else { fatalError("\(query.count) query pairs") }
        for (key, value) in query {
            guard !key.isEmpty, !key.contains("="), !key.contains("&"), !value.contains("&"),
                text.contains(key), value.isEmpty || text.contains(value)
            else { fatalError("query pair \(key)=\(value) from \(text.prefix(100))") }
        }
    }
}

/// What the HTTP handler was given, in order, until NIO's first error, and what it wrote.
final class RequestLog: Sendable {
    enum Entry: Sendable {
        case part(HTTPServerRequestPart)
        case error
    }

    private let entries = Mutex<[Entry]>([])
    private let written = Mutex<[HTTPServerResponsePart]>([])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    func append(_ part: HTTPServerResponsePart) { written.withLock { $0.append(part) } }

    /// What the handler wrote, in order.
    func responseParts() -> [HTTPServerResponsePart] { written.withLock { $0 } }

    /// The requests before the first error: the complete ones, then the one whose `.end` never
    /// came, if any (its `complete` false).
    func requests() -> [HTTPInput.Request] {
        var requests: [HTTPInput.Request] = []
        var current: HTTPInput.Request?
        for entry in entries.withLock({ $0 }) {
            switch entry {
            case .error:
                return requests + (current.map { [$0] } ?? [])
            case .part(.head(let head)):
                guard current == nil else { fatalError("a request head inside a request") }
                current = HTTPInput.Request(head: head)
            case .part(.body(let buffer)):
                guard current != nil else { fatalError("a body part outside a request") }
                current?.body += buffer.readableBytesView
            case .part(.end):
                guard var request = current else { fatalError("an end outside a request") }
                request.complete = true
                requests.append(request)
                current = nil
            }
        }
        return requests + (current.map { [$0] } ?? [])
    }
}

/// Sits right before the async channel and writes down what reaches it.
final class RequestRecorder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let log: RequestLog

    init(log: RequestLog) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        log.append(.part(unwrapInboundIn(data)))
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        log.append(.error)
        context.fireErrorCaught(error)
    }
}

/// First in the pipeline, where the socket would be: takes what the handler writes.
final class ResponseRecorder: ChannelOutboundHandler {
    typealias OutboundIn = HTTPServerResponsePart

    let log: RequestLog

    init(log: RequestLog) { self.log = log }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        log.append(unwrapOutboundIn(data))
        promise?.succeed()
    }
}
