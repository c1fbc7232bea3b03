/// Array-in, array-out forms of the in-place methods, for tests and cold paths. Each allocates the
/// result; the media path uses the `UnsafeMutableRawBufferPointer` methods with a reused buffer.
extension SRTPSession {
    public func protect(_ packet: [UInt8]) throws -> [UInt8] {
        try transform(packet, room: rtpTrailerLength) { try protect(buffer: $0, length: $1) }
    }

    public func protectRTCP(_ packet: [UInt8]) throws -> [UInt8] {
        try transform(packet, room: rtcpTrailerLength) { try protectRTCP(buffer: $0, length: $1) }
    }

    public func unprotect(_ packet: [UInt8]) throws -> [UInt8] {
        try transform(packet, room: 0) { try unprotect(buffer: $0, length: $1) }
    }

    public func unprotectRTCP(_ packet: [UInt8]) throws -> [UInt8] {
        try transform(packet, room: 0) { try unprotectRTCP(buffer: $0, length: $1) }
    }

    private func transform(
        _ packet: [UInt8],
        room: Int,
        _ operation: (UnsafeMutableRawBufferPointer, Int) throws -> Int
    ) throws -> [UInt8] {
        var buffer = packet
        buffer.append(contentsOf: repeatElement(0, count: room))
        let length = try buffer.withUnsafeMutableBytes { try operation($0, packet.count) }
        buffer.removeLast(buffer.count - length)
        return buffer
    }
}
