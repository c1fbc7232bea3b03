import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// NIO's errors as `WHIPError`s: one line naming what failed and where.
extension HTTPTransport {
    /// A connection that could not be opened.
    static func whipError(_ error: any Error, connectingTo url: WHIPURL, within timeout: Duration) -> WHIPError {
        if let error = error as? WHIPError {
            return error
        }
        if case ChannelError.connectTimeout = error {
            return WHIPError(.timeout, "cannot connect to \(url.authority) within \(seconds(timeout))")
        }
        if let error = error as? NIOConnectionError {
            if let failure = error.connectionErrors.first {
                return WHIPError(.connection, "cannot connect to \(url.authority): \(reason(failure.error))")
            }
            return WHIPError(.connection, "cannot connect to \(url.authority): the host name does not resolve")
        }
        if isTLS(error) {
            return WHIPError(.tls, "cannot set up TLS to \(url.authority): \(error)")
        }
        return WHIPError(.connection, "cannot connect to \(url.authority): \(reason(error))")
    }

    /// A request that could not be written.
    static func whipError(_ error: any Error, sending summary: String) -> WHIPError {
        if let error = error as? WHIPError {
            return error
        }
        if isTLS(error) {
            return WHIPError(.tls, "TLS failed for \(summary): \(error)")
        }
        return WHIPError(.connection, "cannot send \(summary): \(reason(error))")
    }

    /// A response that could not be read.
    static func whipError(_ error: any Error, receiving summary: String) -> WHIPError {
        switch error {
        case let error as WHIPError:
            return error
        case let error as ReadBudget.Exceeded:
            return WHIPError(.responseTooLarge, "the response to \(summary) is over \(error.limit) bytes")
        case HTTPParserError.headerOverflow:
            return WHIPError(.responseTooLarge, "the response to \(summary) has headers over the size limit")
        case HTTPParserError.invalidEOFState:
            return WHIPError(.connection, "the connection closed before the response to \(summary) was complete")
        case let error as HTTPParserError:
            return WHIPError(.malformedResponse, "the response to \(summary) is not valid HTTP/1.1 (\(error))")
        case _ where isTLS(error):
            return WHIPError(.tls, "TLS failed for \(summary): \(error)")
        default:
            return WHIPError(.connection, "\(summary) failed: \(reason(error))")
        }
    }

    static func isTLS(_ error: any Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError
    }

    /// A socket error as a short phrase ("connection refused"), anything else as NIO describes it.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        switch error.errnoCode {
        case ECONNREFUSED: return "connection refused"
        case ECONNRESET: return "connection reset"
        case ETIMEDOUT: return "timed out"
        case ENETUNREACH: return "network unreachable"
        case EHOSTUNREACH: return "host unreachable"
        case EPIPE: return "connection closed by the server"
        default: return String(cString: strerror(error.errnoCode))
        }
    }
}
