import NIOCore
import NIOPosix
import NIOSSL
import WHIP

/// Offers, answers and servers the client tests share.
enum Fixture {
    static let token = "tok-123.abc_DEF~+/=="
    static let offer =
        "v=0\r\no=- 5228595038118931041 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
        + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sendonly\r\na=rtpmap:96 H264/90000\r\n"
    static let answer =
        "v=0\r\no=- 1657793490019 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\na=ice-lite\r\n"
        + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=recvonly\r\na=rtpmap:96 H264/90000\r\n"

    /// A 201 with an SDP answer and a Location.
    static func created(_ location: String, _ extra: [(String, String)] = []) -> ScriptedReply {
        .respond(201, [("Content-Type", "application/sdp"), ("Location", location)] + extra, body: answer)
    }

    static func redirect(_ status: Int, to location: String) -> ScriptedReply {
        .respond(status, [("Location", location)])
    }

    static func configuration(token: String? = Fixture.token) -> WHIPClient.Configuration {
        WHIPClient.Configuration(token: token)
    }

    /// A session on `server` whose resource is `path`, as a 201 would have given it.
    static func session(on server: ScriptedHTTPServer, _ path: String, etag: String? = nil) throws -> WHIPSession {
        WHIPSession(resource: try server.url(path), endpoint: try server.url("/whip"), answer: answer, etag: etag)
    }
}

/// Runs `body` with a fresh server on 127.0.0.1 (https with `tls`), stopping it afterwards.
func withServer(tls: NIOSSLContext? = nil, _ body: (ScriptedHTTPServer) async throws -> Void) async throws {
    let server = try await ScriptedHTTPServer.start(tls: tls)
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// A loopback port nothing listens on: bound on 127.0.0.1, then closed.
func closedPort() async throws -> Int {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0)
        .get()
    let port = channel.localAddress?.port ?? 0
    try await channel.close()
    return port
}

/// The error a throwing call threw, as a `WHIPError` (nil when it returned).
func whipError<T>(_ body: () async throws(WHIPError) -> T) async -> WHIPError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
