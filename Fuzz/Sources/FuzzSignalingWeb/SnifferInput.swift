import NIOCore
import NIOEmbedded
@_spi(Fuzzing) import SignalingServer

/// The first bytes of a connection, which `ProtocolSniffer` reads to tell HTTP from JSON lines.
/// Options (the first input byte's upper six bits): bit 0, the pipeline builder throws; bit 1,
/// the peer half-closes after its bytes (else it stays silent until the idle timeout); bits 2-5,
/// the bytes arrive in reads of 1...16 bytes.
///
/// Checked: `decide` is deterministic; on every prefix it says `.http` exactly when the bytes
/// start with a method token and a space (Docs/web.md's list, restated here), nil exactly while
/// they are a proper prefix of one (so after at most 8 bytes), and a decided prefix stays decided
/// the same way as bytes are added. The sniffer in a pipeline builds the pipeline once, for the
/// decision the bytes read so far give, when they give one; then passes on every byte, in order,
/// or, if building threw, closes the connection and passes on none; its result fails. Undecided
/// at the end: a half-close fails the result with `eof` and closes; silence until the idle timeout
/// builds a line pipeline and raises the idle timeout error.
enum SnifferInput {
    typealias Decision = WebInputFuzzing.Decision

    static let methods = ["GET", "HEAD", "POST", "DELETE", "OPTIONS", "PATCH", "PUT"].map { Array(($0 + " ").utf8) }
    static let idleTimeout = TimeAmount.seconds(30)

    struct BuildRefused: Error {}

    /// Docs/web.md's rule.
    static func expected(_ bytes: ArraySlice<UInt8>) -> Decision? {
        if methods.contains(where: { bytes.starts(with: $0) }) { return .http }
        if methods.contains(where: { $0.count > bytes.count && $0.starts(with: bytes) }) { return nil }
        return .lines
    }

    static func run(_ bytes: [UInt8], options: UInt8) {
        checkDecide(bytes)
        checkHandler(
            bytes,
            buildThrows: options & 1 != 0,
            halfClose: options & 2 != 0,
            readSize: 1 + Int(options >> 2 & 15)
        )
    }

    private static func checkDecide(_ bytes: [UInt8]) {
        var previous: Decision?
        // `decide` reads at most 8 bytes: the prefixes up to 24 and the whole input suffice.
        for end in Array(0...min(bytes.count, 24)) + [bytes.count] {
            let prefix = bytes[..<end]
            let decision = WebInputFuzzing.decide(prefix)
            guard decision == WebInputFuzzing.decide(prefix) else { fatalError("decide is not deterministic") }
            guard decision == expected(prefix) else {
                let wanted = String(describing: expected(prefix))
                fatalError("decide(\(Array(prefix.prefix(16)))) = \(String(describing: decision)), not \(wanted)")
            }
            if let previous, decision != previous {
                fatalError("a prefix decided \(previous), a longer one \(String(describing: decision))")
            }
            guard decision != nil || end < 8 else { fatalError("\(end) bytes left undecided") }
            previous = decision
        }
    }

    private static func checkHandler(_ bytes: [UInt8], buildThrows: Bool, halfClose: Bool, readSize: Int) {
        let channel = EmbeddedChannel()
        let state = State()
        do {
            let result = try WebInputFuzzing.addProtocolSniffer(to: channel, timeout: idleTimeout) { decision in
                state.built.append(decision)
                if buildThrows { throw BuildRefused() }
            }
            result.whenComplete { state.result = $0 }
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.9", port: 9)).wait()
        } catch {
            fatalError("cannot set up the sniffer: \(error)")
        }
        defer { closeAndTearDown(channel) }

        var sent: [UInt8] = []
        var passedOn: [UInt8] = []
        var start = 0
        while start < bytes.count, channel.isActive {
            let read = bytes[start..<min(start + readSize, bytes.count)]
            start += read.count
            do {
                try channel.writeInbound(ByteBuffer(bytes: read))
            } catch {
                fatalError("a read raised \(error)")
            }
            sent += read
            passedOn += drainInbound(channel)
            let decision = expected(sent[...])
            guard state.built == (decision.map { [$0] } ?? []) else {
                let wanted = String(describing: decision)
                fatalError("after \(sent.count) bytes the sniffer built \(state.built), the bytes say \(wanted)")
            }
        }

        if let decision = state.built.first {
            checkDecided(channel, state, decision: decision, buildThrows: buildThrows)
            let expectedBytes = buildThrows ? [] : sent
            guard passedOn == expectedBytes else {
                fatalError("the sniffer passed on \(passedOn.count) bytes of \(sent.count), or changed them")
            }
            return
        }
        guard passedOn.isEmpty, state.result == nil else { fatalError("an undecided sniffer passed bytes on or ended") }
        if halfClose {
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            channel.embeddedEventLoop.run()
            guard case .failure(let error as ChannelError) = state.result, error == .eof, !channel.isActive else {
                fatalError("a half-close before the sniffer decided gave \(String(describing: state.result))")
            }
            guard state.built.isEmpty else { fatalError("a half-close built a pipeline") }
            return
        }
        channel.embeddedEventLoop.advanceTime(by: idleTimeout)
        guard state.built == [.lines] else { fatalError("silence built \(state.built), not a line pipeline") }
        guard case .failure(let error) = state.result else {
            fatalError("silence left the result \(String(describing: state.result))")
        }
        if buildThrows {
            guard error is BuildRefused, !channel.isActive else {
                fatalError("a refused build after silence: \(error)")
            }
        } else {
            guard error is WebInputFuzzing.NotConfigured else { fatalError("silence failed the result with \(error)") }
            do {
                try channel.throwIfErrorCaught()
                fatalError("silence raised no error")
            } catch {
                guard WebInputFuzzing.isIdleTimeout(error) else { fatalError("silence raised \(error)") }
            }
        }
    }

    private static func checkDecided(_ channel: EmbeddedChannel, _ state: State, decision: Decision, buildThrows: Bool)
    {
        guard case .failure(let error) = state.result else {
            fatalError("the result of a sniffer that decided \(decision) is \(String(describing: state.result))")
        }
        if buildThrows {
            guard error is BuildRefused, !channel.isActive else {
                fatalError("a build that threw left the connection open, or the result \(error)")
            }
        } else {
            guard error is WebInputFuzzing.NotConfigured else { fatalError("the result failed with \(error)") }
        }
    }

    private static func drainInbound(_ channel: EmbeddedChannel) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            while let buffer = try channel.readInbound(as: ByteBuffer.self) {
                bytes += buffer.readableBytesView
            }
        } catch {
            fatalError("the sniffer passed on something that is not bytes: \(error)")
        }
        return bytes
    }

    /// Touched only on this thread, the embedded event loop's.
    private final class State: @unchecked Sendable {
        var built: [Decision] = []
        var result: Result<Void, any Error>?
    }
}
