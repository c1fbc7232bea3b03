/// Writes big-endian fields into a caller's memory. Every serializer computes its exact
/// length first and checks it against the buffer once (`ensure`), so the stores themselves
/// need no further checks and a packet is written with no allocation at all.
struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset: Int

    init(_ buffer: UnsafeMutableRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    /// `what` is an autoclosure so the hot path builds no message string unless it fails.
    static func ensure(_ needed: Int, fits capacity: Int, what: @autoclosure () -> String) throws(RTPError) {
        guard needed <= capacity else {
            throw RTPError(.bufferTooSmall, "\(what()) needs \(needed) bytes, the buffer holds \(capacity)")
        }
    }

    mutating func write(_ value: UInt8) {
        buffer[offset] = value
        offset += 1
    }

    mutating func write(_ value: UInt16) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
        offset += 2
    }

    mutating func writeUInt24(_ value: UInt32) {
        buffer[offset] = UInt8(truncatingIfNeeded: value >> 16)
        buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        buffer[offset + 2] = UInt8(truncatingIfNeeded: value)
        offset += 3
    }

    mutating func write(_ value: UInt32) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    mutating func write(_ value: UInt64) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let source = bytes.baseAddress, let base = buffer.baseAddress else { return }
        (base + offset).copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    mutating func write(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { write($0) }
    }

    mutating func writeZeros(_ count: Int) {
        guard count > 0 else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + count]).initializeMemory(
            as: UInt8.self,
            repeating: 0
        )
        offset += count
    }
}

extension Array where Element == UInt8 {
    /// Builds an array of exactly `count` bytes by letting `body` write them, without first
    /// zero-filling: one allocation, one pass. `body` must write all `count` bytes.
    static func writing(
        count: Int,
        _ body: (inout ByteWriter) throws(RTPError) -> Void
    ) throws(RTPError) -> [UInt8] {
        var failure: RTPError?
        let result = [UInt8](unsafeUninitializedCapacity: count) { storage, initialized in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(storage))
            do throws(RTPError) {
                try body(&writer)
                initialized = writer.offset
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return result
    }
}
