import Dispatch
import NIOEmbedded

/// libFuzzer entry for what a client can send rtc-signal's one port (Docs/web.md). The low two
/// bits of the first byte pick what the rest goes to, the other six are options for it:
///  - 0 or 3, ``SnifferInput``: the bytes that decide between HTTP and JSON lines;
///  - 1, ``WebSocketInput``: WebSocket frames after the upgrade, and lines from the room;
///  - 2, ``HTTPInput``: HTTP/1.1 requests, through NIO's parser, to our routes.
///
/// Each stops the fuzzer (`fatalError`) when an invariant breaks; AddressSanitizer and
/// LeakSanitizer catch memory errors and leaks. The server's types are internal: the harness
/// reaches them through `WebInputFuzzing` (Signaling/SignalingServer/WebInputFuzzing.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignalingWeb(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let options = control >> 2
    switch control & 3 {
    case 1: WebSocketInput.run(bytes, options: options)
    case 2: waitFor { await HTTPInput.run(bytes, options: options) }
    default: SnifferInput.run(bytes, options: options)
    }
    return 0
}

/// What the harness found and accepts, so that fuzzing goes on past it (Docs/fuzzing.md,
/// "FuzzSignalingWeb: rtc-signal's web port", Findings): a bug, deviations from the RFCs and one
/// from Docs/web.md. While one is `true`, the harness expects what the server does; set it to
/// `false` to expect what the RFC or the document says (and to find it again).
enum KnownFindings {
    /// A client's close frame is echoed with whatever it holds: a code no endpoint may send
    /// (below 1000, 1004-1006, 1015, 1016-2999, from 5000; RFC 6455 §7.4.1, §7.4.2), a payload
    /// of one byte (no room for a code: §5.5.1), or a reason that is not UTF-8 (§5.5.1) each
    /// get the echo (or 1000) instead of failing the connection (1002, 1007).
    static let closeFrameUnchecked = false
    /// Frames with RSV1-3 set are read as if they were clear; no extension was negotiated, so
    /// RFC 6455 §5.2 says to fail the connection.
    static let reservedBitsIgnored = false
    /// A text message that is not UTF-8 is passed to the line protocol (which answers that it is
    /// no JSON); RFC 6455 §8.1 says to fail the connection with 1007.
    static let invalidUTF8Delivered = false
    /// `401` for an `Authorization` that is not `Bearer …` has no `WWW-Authenticate`
    /// (RFC 9110 §11.6.1: a 401 MUST carry one).
    static let unauthorizedWithoutChallenge = false
    /// A request target in absolute form (`GET http://host/healthz`) is routed by its whole
    /// text, so every route answers `404`; RFC 9112 §3.2.2: a server MUST accept it.
    static let absoluteFormNotRouted = false
    /// `POST /healthz` (and the other fixed GET routes) answer `404`, not the `405` with `Allow`
    /// that Docs/web.md promises for a wrong method.
    static let fixedRoutesRefuseMethodsWith404 = false
    /// `WHEPSessions.create` starts the session's task before it lists the session; a task that
    /// is refused and ends first removes nothing, and the entry then stays for good, holding one
    /// of `maxWHEPSessions` (a bug, Signaling/SignalingServer/WHEPSessions.swift). The harness
    /// clears such entries (`endAll`) so that they do not add up across inputs.
    static let whepSessionEntryOutlivesItsTask = false
    /// A `Content-Length` above the body limit is refused with `413` at the head only when
    /// Swift's `Int` reads the header's raw value (Signaling/SignalingServer/
    /// HTTPConnectionHandler.swift, `serve`). NIO's parser (llhttp) also takes a value with
    /// trailing spaces (`200 `, kept in the value NIO reports) and values beyond `Int.max` (up to
    /// 2^64 - 1); such a request is not refused at the head: its body is read until it passes the
    /// limit (`413`, `the body (longer) …`), or, if it stops short, never answered. Found
    /// 2026-11-28 (seeds `http-413-content-length-trailing-space`,
    /// `http-413-content-length-beyond-int`); `true` until the server reads the value as RFC 9110
    /// §8.6 and §5.5 say (digits, white space around them not part of the value).
    static let contentLengthNotReadByIntNotRefusedAtHead = false
    /// In an absolute-form target the server takes the authority up to the first `/` only
    /// (`HTTPConnectionHandler.originForm`), so `GET http://host?x/healthz` is routed to
    /// `/healthz`; RFC 3986 §3.2 ends the authority at `/`, `?` or `#`, so its path is empty
    /// (`/`, `404`). Found 2026-11-28 after 39,420 runs (seed `http-absolute-form-query-slash`);
    /// `true` until the server ends the authority at `?` too.
    static let absoluteFormAuthorityEndsOnlyAtSlash = false
    /// A client's close frame with 1012, 1013 or 1014 (registered in IANA's WebSocket Close Code
    /// Number Registry: Service Restart, Try Again Later, Bad Gateway) fails the connection with
    /// 1002, as if the code were unassigned: `WebSocketLineAdapter.isSendableCloseCode` takes
    /// 1007...1011 only, though its comment excludes only 1004-1006 and 1015. Found 2026-11-29
    /// after 95,145 runs (seed `ws-close-1014-not-utf8-reason`); `true` until the server takes
    /// 1007...1014.
    static let registeredCloseCodesRefused = false
}

/// Runs `body` on the concurrency pool and blocks this (libFuzzer's) thread until it returns.
///
/// The dispatch queues under Swift concurrency and NIO's async testing loop keep some of what
/// they allocate in caches, so libFuzzer sees more allocations than frees after such an input and
/// runs LeakSanitizer; after 1000 of those it checks for leaks only at exit ("libFuzzer disabled
/// leak detection after every mutation").
func waitFor(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await body()
        done.signal()
    }
    done.wait()
}

/// Whether `bytes` are UTF-8 (RFC 3629: no surrogates, no overlong forms).
func isUTF8(_ bytes: some Collection<UInt8>) -> Bool {
    String(validating: bytes, as: UTF8.self) != nil
}

/// Closes `channel` if it is open and runs its loop, so the pipeline is torn down: a channel
/// closed from inside its pipeline (by the server's handlers) is only freed once its loop runs.
func closeAndTearDown(_ channel: EmbeddedChannel) {
    _ = try? channel.finish(acceptAlreadyClosed: true)
    channel.embeddedEventLoop.run()
}
