import Ingest
import NIOCore
import NIOPosix

/// A plain byte-stream connection to the server: sends whatever bytes a test builds (broken ones
/// included) and reads what the host answers until it closes.
struct RawConnection {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    static func connect(_ address: IngestAddress) async throws -> RawConnection {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        switch address {
        case .unix(let path):
            channel = try await bootstrap.connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        case .tcp(let host, let port):
            channel = try await bootstrap.connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        }
        return RawConnection(channel: channel)
    }

    /// Sends `chunks` in order, then reads until the host closes (or `timeout`), and returns the
    /// host's messages. After chunk `i` it first waits until `answers[i]` messages have come in
    /// all, so a test can wait for the host's hello before sending more.
    func exchange(
        _ chunks: [[UInt8]],
        waitingFor answers: [Int] = [],
        timeout: Duration = .seconds(5)
    ) async throws -> [IngestMessage] {
        let parser = IngestParser()
        return try await channel.executeThenClose { inbound, outbound in
            var received = ByteBuffer()
            var iterator = inbound.makeAsyncIterator()
            var messages: [IngestMessage] = []
            let deadline = ContinuousClock.now + timeout
            func readMessages(until count: Int?) async throws {
                while count.map({ messages.count < $0 }) ?? true {
                    guard ContinuousClock.now < deadline else { throw TestFailure("the host did not answer in time") }
                    guard var chunk = try await iterator.next() else { return }
                    received.writeBuffer(&chunk)
                    while let header = try parser.header(in: received), received.readableBytes >= header.messageLength {
                        messages.append(try parser.message(header, in: received))
                        received.moveReaderIndex(forwardBy: header.messageLength)
                    }
                }
            }
            for (index, chunk) in chunks.enumerated() {
                try await outbound.write(ByteBuffer(bytes: chunk))
                if index < answers.count {
                    try await readMessages(until: answers[index])
                }
            }
            try await readMessages(until: nil)
            return messages
        }
    }
}

extension IngestMessage {
    var endReason: IngestEndReason? {
        if case .control(.end(let reason, _)) = self { return reason }
        return nil
    }

    var endText: String? {
        if case .control(.end(_, let text)) = self { return text }
        return nil
    }

    var hello: IngestHello? {
        if case .hello(let hello) = self { return hello }
        return nil
    }
}
