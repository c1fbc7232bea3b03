import CoreMetrics
import Prometheus
import SignalingProtocol
import Synchronization

/// What `GET /metrics` shows, in the Prometheus text format: swift-metrics counters and gauges
/// on a swift-prometheus registry of this server's own (so several servers in one process, as in
/// the tests, never share numbers).
///
/// Label values are bounded: transports and routes are fixed lists, message types and error
/// codes come from the protocol's own lists (an unknown `type` counts as `invalid`).
final class ServerMetrics: Sendable {
    enum Transport: String, CaseIterable, Sendable {
        case tcp
        case webSocket = "websocket"
        case whep
        case http
    }

    /// The room census, read from the registry at each scrape.
    struct Census: Sendable {
        var rooms = 0
        var members = 0
        var streams = 0
        var subscriptions = 0
    }

    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let open = Mutex<[Transport: Int]>([:])

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        // Every series exists from the start, so a scrape before any traffic shows zeros.
        for transport in Transport.allCases {
            counter("rtc_signal_connections_total", ("transport", transport.rawValue)).increment(by: 0)
            gauge("rtc_signal_connections", ("transport", transport.rawValue)).record(0)
        }
        counter("rtc_signal_rejected_connections_total", ("reason", "too-many-connections")).increment(by: 0)
    }

    func opened(_ transport: Transport) {
        counter("rtc_signal_connections_total", ("transport", transport.rawValue)).increment()
        let now = open.withLock { open -> Int in
            open[transport, default: 0] += 1
            return open[transport, default: 0]
        }
        gauge("rtc_signal_connections", ("transport", transport.rawValue)).record(now)
    }

    func closed(_ transport: Transport) {
        let now = open.withLock { open -> Int in
            open[transport, default: 0] = max(0, open[transport, default: 0] - 1)
            return open[transport, default: 0]
        }
        gauge("rtc_signal_connections", ("transport", transport.rawValue)).record(now)
    }

    func rejected(_ reason: GoodbyeReason) {
        counter("rtc_signal_rejected_connections_total", ("reason", reason.rawValue)).increment()
    }

    /// A request decoded (its type) or refused (`invalid`).
    func received(_ type: String) {
        counter("rtc_signal_messages_in_total", ("type", type)).increment()
    }

    func sent(_ message: ServerMessage) {
        counter("rtc_signal_messages_out_total", ("type", message.type)).increment()
        if case .error(let error) = message {
            counter("rtc_signal_errors_total", ("code", error.code.rawValue)).increment()
        }
    }

    func request(route: String, status: UInt) {
        counter("rtc_signal_http_requests_total", ("route", route), ("status", String(status))).increment()
    }

    /// The exposition: the census as gauges, then everything.
    func exposition(_ census: Census) -> [UInt8] {
        gauge("rtc_signal_rooms").record(census.rooms)
        gauge("rtc_signal_members").record(census.members)
        gauge("rtc_signal_streams").record(census.streams)
        gauge("rtc_signal_subscriptions").record(census.subscriptions)
        return registry.emitToBuffer()
    }

    private func counter(_ label: String, _ dimensions: (String, String)...) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory)
    }

    private func gauge(_ label: String, _ dimensions: (String, String)...) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: label, dimensions: dimensions, factory: factory)
    }
}
