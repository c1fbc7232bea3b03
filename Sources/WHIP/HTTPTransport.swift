import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Sends one HTTP/1.1 request on a connection of its own (`Connection: close`) and reads its
/// response: TCP, TLS for https, NIO's HTTP/1.1 codec, limits and deadlines.
///
/// A connection per request keeps the client stateless: WHIP makes three or four requests in a
/// session's life, minutes apart, often to different hosts (RFC 9725 §4.5).
struct HTTPTransport: Sendable {
    var group: any EventLoopGroup
    var trustedCertificatesPEMPath: String?
    var connectTimeout: Duration
    var responseTimeout: Duration
    var maximumHeaderBytes: Int
    var maximumBodyBytes: Int

    /// The response, whatever its status; every failure is a `WHIPError` naming the request.
    func send(_ request: HTTPRequest) async throws(WHIPError) -> HTTPResponse {
        let tlsContext = request.url.scheme == .https ? try makeTLSContext() : nil
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: HTTPResponse.self)
        let url = request.url
        let responseTimeout = self.responseTimeout
        let maximumBodyBytes = self.maximumBodyBytes
        let limits = Self.decoderLimits(headerBytes: maximumHeaderBytes)
        // Room for the status line, chunk framing and informational responses.
        let readBudget = 4 * (maximumHeaderBytes + maximumBodyBytes)
        let handshakeFailure = NIOLoopBoundBox.makeEmptyBox(valueType: (any Error).self, eventLoop: eventLoop)

        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(Self.nanoseconds(connectTimeout)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsContext {
                        // NIOSSL verifies the chain and the name, or the IP address for a literal (no SNI).
                        let name = url.hostIsIPLiteral ? nil : url.host
                        try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: name))
                    }
                    try pipeline.addHandler(ReadBudget(limit: readBudget))
                    try pipeline.addHTTPClientHandlers(decoderLimitConfiguration: limits)
                    try pipeline.addHandler(
                        HTTPExchangeHandler(
                            request: request,
                            promise: promise,
                            maximumBodyBytes: maximumBodyBytes,
                            handshakeFailure: handshakeFailure
                        )
                    )
                }
            }
        let connectTimeout = self.connectTimeout
        bootstrap.connect(host: url.host, port: url.port).whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(Self.whipError(error, connectingTo: url, within: connectTimeout))
            case .success(let channel):
                // The deadline runs from the connection's opening, and is what ends every exchange.
                let timeout = WHIPError(
                    .timeout,
                    "no complete response to \(request.summary) within \(Self.seconds(responseTimeout))"
                )
                let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(responseTimeout))) {
                    promise.fail(timeout)
                }
                promise.futureResult.whenComplete { _ in deadline.cancel() }
                channel.pipeline.fireUserInboundEventTriggered(HTTPExchangeHandler.Start())
                if let error = handshakeFailure.value {
                    promise.fail(Self.whipError(error, sending: request.summary))
                } else if !channel.isActive {
                    promise.fail(
                        WHIPError(
                            .connection,
                            "the connection to \(url.authority) closed before \(request.summary) was sent"
                        )
                    )
                }
            }
        }

        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(WHIPError(.cancelled, "\(request.summary) was cancelled"))
            }
        } catch let error as WHIPError {
            throw error
        } catch {
            throw Self.whipError(error, receiving: request.summary)
        }
    }

    /// TLS 1.2 or later with full verification, against the system roots or only the given PEM
    /// certificates (as `SignalingClient.Configuration.useTLS(trusting:)` does).
    func makeTLSContext() throws(WHIPError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .fullVerification
        if let path = trustedCertificatesPEMPath {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw WHIPError(.tls, "cannot read PEM certificates from \(path): \(error)")
            }
            guard !certificates.isEmpty else {
                throw WHIPError(.tls, "no certificate in \(path)")
            }
            tls.trustRoots = .certificates(certificates)
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw WHIPError(.tls, "cannot set up TLS: \(error)")
        }
    }

    static func decoderLimits(headerBytes: Int) -> NIOHTTPDecoderLimitConfiguration {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = headerBytes
        limits.maxHeaderListSize = headerBytes
        return limits
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : product + attoseconds / 1_000_000_000
    }

    /// "0.3 s", "10 s": a duration as a message shows it.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = nanoseconds(duration) / 1_000_000
        let whole = milliseconds / 1000
        var fraction = String(milliseconds % 1000)
        guard fraction != "0" else { return "\(whole) s" }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") {
            fraction.removeLast()
        }
        return "\(whole).\(fraction) s"
    }
}
