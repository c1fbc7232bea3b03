import NIOCore
import NIOWebSocket

/// Makes a WebSocket connection look like a line connection to ``ConnectionHandler``: each text
/// message in is one line (without `\n`), each line out one text message. So a browser and a
/// TCP client are the same members of the same rooms, held to the same limits.
///
/// RFC 6455: client frames must be masked (§5.1) and carry no reserved bits, since no extension
/// is negotiated (§5.2); a message may come in fragments (§5.4), reassembled here up to
/// `maxMessageBytes`, and must be UTF-8 (§8.1); pings are answered (§5.5.2); a close with a
/// valid code (§7.4) and a UTF-8 reason is echoed (§5.5.1). Binary messages are not part of the
/// protocol. Every violation ends the connection with a close frame whose code and reason say
/// why (§7.4.1).
final class WebSocketLineAdapter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    private let maxMessageBytes: Int
    /// A text message whose last fragment has not arrived yet.
    private var message: ByteBuffer?
    /// A close frame was sent: nothing else goes out.
    private var closeSent = false

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !closeSent else { return }
        guard frame.maskKey != nil else {
            return fail(context, .protocolError, "client frames must be masked (RFC 6455 §5.1)")
        }
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else {
            return fail(context, .protocolError, "reserved bits set, but no extension was negotiated (§5.2)")
        }
        switch frame.opcode {
        case .text:
            guard message == nil else {
                return fail(context, .protocolError, "a new message began before the last one ended")
            }
            let data = frame.unmaskedData
            if frame.fin {
                deliver(context, data)
            } else if data.readableBytes <= maxMessageBytes {
                message = data
            } else {
                tooLarge(context)
            }
        case .continuation:
            guard var assembled = message else {
                return fail(context, .protocolError, "a continuation frame without a message to continue")
            }
            var data = frame.unmaskedData
            guard assembled.readableBytes + data.readableBytes <= maxMessageBytes else { return tooLarge(context) }
            assembled.writeBuffer(&data)
            if frame.fin {
                message = nil
                deliver(context, assembled)
            } else {
                message = assembled
            }
        case .binary:
            fail(context, .unacceptableData, "binary messages are not part of the protocol; send JSON as text")
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            break
        case .connectionClose:
            // Echo the peer's code (§5.5.1), then close once it is out; a malformed close is a
            // protocol error of its own (§7.4.1: 1005 and 1006 never travel in a frame).
            var payload = frame.unmaskedData
            guard payload.readableBytes != 1 else {
                return fail(context, .protocolError, "a close payload of one byte (§5.5.1)")
            }
            let code = payload.readInteger(as: UInt16.self) ?? 1000
            guard Self.isSendableCloseCode(code) else {
                return fail(context, .protocolError, "close code \(code) may not be sent (§7.4)")
            }
            guard String(validating: payload.readableBytesView, as: UTF8.self) != nil else {
                return fail(context, .dataInconsistentWithMessage, "the close reason is not UTF-8 (§5.5.1)")
            }
            sendClose(context, WebSocketErrorCode(codeNumber: Int(code)), reason: "")
            context.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil)
        default:
            fail(context, .protocolError, "opcode \(frame.opcode) is not defined")
        }
    }

    /// A line from the room: one text message, its `\n` left off.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var line = unwrapOutboundIn(data)
        guard !closeSent else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        if line.readableBytesView.last == UInt8(ascii: "\n") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: line)), promise: promise)
    }

    /// The connection handler ends the connection (after `goodbye`, a refusal, shutdown): a
    /// normal close frame first, then the lingering close it asked for.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is LingeringCloseHandler.Start {
            sendClose(context, .normalClosure, reason: "")
        }
        context.triggerUserOutboundEvent(event, promise: promise)
    }

    private func deliver(_ context: ChannelHandlerContext, _ data: ByteBuffer) {
        guard data.readableBytes <= maxMessageBytes else { return tooLarge(context) }
        guard String(validating: data.readableBytesView, as: UTF8.self) != nil else {
            return fail(context, .dataInconsistentWithMessage, "a text message is not UTF-8 (§8.1)")
        }
        context.fireChannelRead(wrapInboundOut(data))
    }

    /// The codes a close frame may carry (§7.4.1, §7.4.2, and IANA's registry, which added 1012
    /// Service Restart, 1013 Try Again Later and 1014 Bad Gateway): the defined ones but 1004
    /// (reserved), 1005, 1006 and 1015 (never sent), and the ranges for libraries and applications.
    static func isSendableCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    private func tooLarge(_ context: ChannelHandlerContext) {
        message = nil
        fail(context, .messageTooLarge, "a message is longer than \(maxMessageBytes) bytes")
    }

    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, _ reason: String) {
        message = nil
        sendClose(context, code, reason: reason)
        context.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil)
    }

    private func sendClose(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, reason: String) {
        guard !closeSent else { return }
        closeSent = true
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        payload.write(webSocketErrorCode: code)
        // A control frame's payload is at most 125 bytes (§5.5): the reason is cut to fit.
        payload.writeBytes(reason.utf8.prefix(123))
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
