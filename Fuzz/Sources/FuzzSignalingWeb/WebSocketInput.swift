import NIOCore
import NIOEmbedded
import NIOWebSocket
import SignalingProtocol
@_spi(Fuzzing) import SignalingServer

/// A WebSocket connection after the upgrade, in the pipeline the server has then (behind a
/// ``Socket``, which stands for TCP): the lingering close handler, NIO's frame encoder, decoder
/// (`maxFrameSize` the message limit) and protocol error handler, then `WebSocketLineAdapter`.
/// Options (the first byte's upper six bits): bits 0-1 pick the message limit
/// (`SignalingProtocol.maxLineBytes` as the server has it, or 8, 125, 1000 to reach the adapter's
/// own size checks with inputs of a few KiB). Then records, each a byte `h` and what follows it:
/// `h < 0x80`, the next `h` bytes arrive from the client in one read (0x7F: all the rest);
/// `h == 0x80`, the connection handler ends the connection (the lingering close's start event,
/// as after `goodbye`); otherwise a line from the room of `h & 0x7F` bytes (0x7F: all the rest)
/// is written.
///
/// Checked, against a model of Docs/web.md and RFC 6455 fed with the frames NIO's decoder gave
/// the adapter and the decoder's errors, in order: every message passed on is one the model
/// delivers (so at most the limit, reassembled from its fragments); the bytes written decode as
/// whole, unmasked server frames with RSV clear and minimal lengths: the model's pongs (the
/// ping's payload), text frames (each line without its `\n`) and at most one close frame, the
/// last thing written, with the model's code (1002 for an unmasked frame, a stray continuation or
/// an unknown opcode, 1003 for binary, 1009 over the limit, the peer's echoed, 1000 at the end;
/// NIO's 1002 and 1009 for a malformed frame), a payload of 2...125 bytes and a UTF-8 reason; a
/// line written after the close fails.
enum WebSocketInput {
    static let limits = [SignalingProtocol.maxLineBytes, 8, 125, 1000]

    static func run(_ bytes: [UInt8], options: UInt8) {
        let limit = limits[Int(options & 3)]
        let channel = EmbeddedChannel()
        let log = EventLog()
        do {
            try channel.pipeline.syncOperations.addHandler(Socket())
            try WebInputFuzzing.addLingeringCloseHandler(to: channel)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(WebSocketFrameEncoder())
            try pipeline.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: limit)))
            try pipeline.addHandler(WebSocketProtocolErrorHandler())
            try pipeline.addHandler(FrameRecorder(log: log))
            try WebInputFuzzing.addWebSocketLineAdapter(to: channel, maxMessageBytes: limit)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.9", port: 9)).wait()
        } catch {
            fatalError("cannot set up the WebSocket pipeline: \(error)")
        }
        defer { closeAndTearDown(channel) }

        var wire: [UInt8] = []
        var delivered: [[UInt8]] = []
        var rest = bytes[...]
        while let h = rest.popFirst() {
            let count = h & 0x7F == 0x7F ? rest.count : min(Int(h & 0x7F), rest.count)
            let payload = Array(rest.prefix(count))
            rest = rest.dropFirst(count)
            if h < 0x80 {
                // After a close the server discards what the client still sends (lingering close).
                if channel.isActive { _ = try? channel.writeInbound(ByteBuffer(bytes: payload)) }
            } else if h == 0x80 {
                log.events.append(.end)
                WebInputFuzzing.startLingeringClose(of: channel)
            } else {
                let written = Box<Result<Void, any Error>?>(nil)
                channel.writeAndFlush(ByteBuffer(bytes: payload)).whenComplete { written.value = $0 }
                channel.embeddedEventLoop.run()
                guard let result = written.value else { fatalError("a line write never completed") }
                log.events.append(.line(payload, written: (try? result.get()) != nil))
            }
            channel.embeddedEventLoop.run()
            drain(channel, wire: &wire, delivered: &delivered)
        }

        var model = Model(limit: limit)
        for event in log.events { model.apply(event) }
        for message in delivered where message.count > limit {
            fatalError("a \(message.count)-byte message passed on; the limit is \(limit)")
        }
        guard delivered == model.delivered else {
            fatalError(
                "messages passed on: \(delivered.map(\.count)) bytes, the model's: \(model.delivered.map(\.count))"
            )
        }
        let frames = ServerFrame.parseAll(wire)
        guard frames == model.frames else {
            fatalError("frames written: \(frames), the model's: \(model.frames); events \(log.events)")
        }
        for (index, frame) in frames.enumerated() {
            if case .close(let code, let reason) = frame {
                guard index == frames.count - 1 else {
                    fatalError("\(frames.count - 1 - index) frames after the close")
                }
                guard reason.count <= 123, isUTF8(reason) else {
                    fatalError("close reason \(reason) is too long or not UTF-8")
                }
                guard KnownFindings.closeFrameUnchecked || sendable(code) else {
                    fatalError("close code \(code) is not one an endpoint may send")
                }
            }
        }
    }

    private static func drain(_ channel: EmbeddedChannel, wire: inout [UInt8], delivered: inout [[UInt8]]) {
        do {
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { wire += buffer.readableBytesView }
            while let message = try channel.readInbound(as: ByteBuffer.self) {
                delivered.append(Array(message.readableBytesView))
            }
        } catch {
            fatalError("the pipeline wrote or passed on something unexpected: \(error)")
        }
    }

    /// RFC 6455 §7.4.1 and IANA's registry: the codes a close frame may carry.
    static func sendable(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
}

/// What a TCP socket does and an `EmbeddedChannel` does not: after its output is closed (half
/// or whole) nothing more is written, and a write fails. A half-close leaves the channel active,
/// its input still read, as the server's lingering close wants.
final class Socket: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var outputClosed = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !outputClosed else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        context.write(data, promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        outputClosed = true
        guard mode == .output else { return context.close(mode: mode, promise: promise) }
        promise?.succeed()
    }
}

/// What happened on the connection, in order: frames the adapter was given, the decoder's errors
/// (both seen by ``FrameRecorder``), lines the room wrote and the end of the connection.
final class EventLog {
    enum Event: CustomStringConvertible {
        case frame(ClientFrame)
        case decoderError(NIOWebSocketError)
        case line([UInt8], written: Bool)
        case end

        var description: String {
            switch self {
            case .frame(let frame): "\(frame)"
            case .decoderError(let error): "error \(error)"
            case .line(let bytes, let written): "line \(bytes.count) \(written ? "written" : "refused")"
            case .end: "end"
            }
        }
    }

    var events: [Event] = []
}

/// A frame as NIO's decoder gave it to the adapter.
struct ClientFrame: CustomStringConvertible {
    var fin: Bool
    var reservedBits: UInt8
    var opcode: UInt8
    var masked: Bool
    var payload: [UInt8]

    var description: String {
        "frame(op \(opcode)\(fin ? " fin" : "")\(masked ? "" : " unmasked") rsv \(reservedBits) \(payload.count) B)"
    }
}

/// Sits before the adapter and writes down what reaches it.
final class FrameRecorder: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    let log: EventLog

    init(log: EventLog) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        log.events.append(
            .frame(
                ClientFrame(
                    fin: frame.fin,
                    reservedBits: (frame.rsv1 ? 4 : 0) | (frame.rsv2 ? 2 : 0) | (frame.rsv3 ? 1 : 0),
                    opcode: UInt8(webSocketOpcode: frame.opcode),
                    masked: frame.maskKey != nil,
                    payload: Array(frame.unmaskedData.readableBytesView)
                )
            )
        )
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError { log.events.append(.decoderError(error)) }
        context.fireErrorCaught(error)
    }
}

/// A server frame as the harness reads it back from the bytes written.
enum ServerFrame: Equatable, CustomStringConvertible {
    case text([UInt8])
    case pong([UInt8])
    case close(code: UInt16, reason: [UInt8])

    /// Compares a close by its code only: the reason is free text.
    static func == (lhs: ServerFrame, rhs: ServerFrame) -> Bool {
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)), (.pong(let a), .pong(let b)): a == b
        case (.close(let a, _), .close(let b, _)): a == b
        default: false
        }
    }

    var description: String {
        switch self {
        case .text(let bytes): "text(\(bytes.count) B)"
        case .pong(let bytes): "pong(\(bytes.count) B)"
        case .close(let code, let reason): "close(\(code), \(reason.count) B)"
        }
    }

    /// Every frame in `bytes`, which must be whole frames a server may send (RFC 6455 §5.2):
    /// FIN set (the adapter never fragments), RSV clear, no mask, the shortest length encoding,
    /// text, pong or close (a code and at most 123 bytes of reason), control payloads ≤ 125.
    static func parseAll(_ bytes: [UInt8]) -> [ServerFrame] {
        var frames: [ServerFrame] = []
        var at = 0
        func need(_ count: Int) {
            guard bytes.count - at >= count else { fatalError("a frame is cut short at byte \(at) of \(bytes.count)") }
        }
        while at < bytes.count {
            need(2)
            let first = bytes[at]
            let second = bytes[at + 1]
            at += 2
            guard first & 0x80 != 0, first & 0x70 == 0 else {
                fatalError("frame byte 0 is \(first): not FIN, or RSV set")
            }
            guard second & 0x80 == 0 else { fatalError("a server frame is masked") }
            var length = Int(second & 0x7F)
            if length == 126 {
                need(2)
                length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
                at += 2
                guard length >= 126 else { fatalError("a 16-bit length of \(length)") }
            } else if length == 127 {
                need(8)
                var long: UInt64 = 0
                for byte in bytes[at..<at + 8] { long = long << 8 | UInt64(byte) }
                at += 8
                guard long > 0xFFFF, long < 1 << 62 else { fatalError("a 64-bit length of \(long)") }
                length = Int(long)
            }
            need(length)
            let payload = Array(bytes[at..<at + length])
            at += length
            switch first & 0x0F {
            case 0x1:
                frames.append(.text(payload))
            case 0xA:
                guard payload.count <= 125 else { fatalError("a \(payload.count)-byte pong") }
                frames.append(.pong(payload))
            case 0x8:
                guard (2...125).contains(payload.count) else { fatalError("a close frame of \(payload.count) bytes") }
                frames.append(.close(code: UInt16(payload[0]) << 8 | UInt16(payload[1]), reason: Array(payload[2...])))
            default:
                fatalError("a server frame with opcode \(first & 0x0F)")
            }
        }
        return frames
    }
}

/// What Docs/web.md (and RFC 6455, where `KnownFindings` says so) expect of the adapter.
struct Model {
    let limit: Int
    var closed = false
    var message: [UInt8]?
    var frames: [ServerFrame] = []
    var delivered: [[UInt8]] = []

    init(limit: Int) { self.limit = limit }

    mutating func apply(_ event: EventLog.Event) {
        switch event {
        case .frame(let frame): receive(frame)
        case .decoderError(let error): close(error == .invalidFrameLength ? 1009 : 1002)
        case .end: close(1000)
        case .line(let bytes, let written):
            guard written == !closed else {
                fatalError("a line was \(written ? "written" : "refused") \(closed ? "after" : "before") the close")
            }
            if !closed { frames.append(.text(bytes.last == UInt8(ascii: "\n") ? Array(bytes.dropLast()) : bytes)) }
        }
    }

    private mutating func close(_ code: UInt16) {
        guard !closed else { return }
        closed = true
        message = nil
        frames.append(.close(code: code, reason: []))
    }

    private mutating func receive(_ frame: ClientFrame) {
        guard !closed else { return }
        if frame.reservedBits != 0, !KnownFindings.reservedBitsIgnored { return close(1002) }
        guard frame.masked else { return close(1002) }
        switch frame.opcode {
        case 0x1:
            if message != nil {
                close(1002)
            } else if frame.fin {
                deliver(frame.payload)
            } else if frame.payload.count <= limit {
                message = frame.payload
            } else {
                close(1009)
            }
        case 0x0:
            guard let started = message else { return close(1002) }
            guard started.count + frame.payload.count <= limit else { return close(1009) }
            if frame.fin {
                message = nil
                deliver(started + frame.payload)
            } else {
                message = started + frame.payload
            }
        case 0x2:
            close(1003)
        case 0x9:
            frames.append(.pong(frame.payload))
        case 0xA:
            break
        case 0x8:
            closeReceived(frame.payload)
        default:
            close(1002)
        }
    }

    private mutating func deliver(_ message: [UInt8]) {
        guard message.count <= limit else { return close(1009) }
        guard KnownFindings.invalidUTF8Delivered || isUTF8(message) else { return close(1007) }
        delivered.append(message)
    }

    /// The peer's close, echoed (RFC 6455 §5.5.1): its code, or 1000 when it has none.
    private mutating func closeReceived(_ payload: [UInt8]) {
        guard payload.count >= 2 else {
            return close(payload.isEmpty || KnownFindings.closeFrameUnchecked ? 1000 : 1002)
        }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        if !KnownFindings.closeFrameUnchecked {
            guard WebSocketInput.sendable(code) else { return close(1002) }
            if KnownFindings.registeredCloseCodesRefused, (1012...1014).contains(code) { return close(1002) }
            guard isUTF8(payload[2...]) else { return close(1007) }
        }
        close(code)
    }
}
