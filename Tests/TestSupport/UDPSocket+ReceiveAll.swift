import Transport

extension UDPSocket {
    /// Every datagram that arrives until the socket has been quiet for `quietMilliseconds`, in
    /// arrival order. `bufferSize` bounds one datagram (a UDP GSO burst needs up to 65,507).
    public func receiveAll(quietMilliseconds: Int32 = 200, bufferSize: Int = 2048) -> [[UInt8]] {
        var received: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while waitReadable(milliseconds: quietMilliseconds) {
            guard let got = buffer.withUnsafeMutableBytes({ receive(into: $0) }) else { break }
            received.append(Array(buffer[0..<got.length]))
        }
        return received
    }
}
