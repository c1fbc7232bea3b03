import Testing

@testable import Transport

#if canImport(Glibc)
    import Glibc
#endif

/// The hand-over from libnice's thread to the sender thread: order kept, bounded, the pipe
/// readable exactly while something waits.
@Suite struct DatagramInboxTests {
    private func readable(_ inbox: DatagramInbox) -> Bool {
        var entry = pollfd(fd: inbox.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    private func take(_ inbox: DatagramInbox) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: DatagramInbox.slotSize)
        let length = buffer.withUnsafeMutableBytes { inbox.take(into: $0) }
        return length.map { Array(buffer[0..<$0]) }
    }

    @Test func datagramsComeOutInOrderAndThePipeTellsWhenAnyWait() throws {
        let inbox = try DatagramInbox(capacity: 4)
        #expect(!readable(inbox))
        for value in UInt8(1)...3 {
            #expect([value, value &+ 10].withUnsafeBytes { inbox.put($0) })
        }
        #expect(readable(inbox))
        #expect(take(inbox) == [1, 11])
        #expect(take(inbox) == [2, 12])
        #expect(readable(inbox))
        #expect(take(inbox) == [3, 13])
        #expect(!readable(inbox), "emptied: the wake-up byte is read")
        #expect(take(inbox) == nil)
    }

    @Test func aFullRingDropsTheNewestAndCountsIt() throws {
        let inbox = try DatagramInbox(capacity: 2)
        for value in UInt8(1)...3 { _ = [value].withUnsafeBytes { inbox.put($0) } }
        #expect(inbox.drops.full == 1)
        #expect(take(inbox) == [1])
        #expect(take(inbox) == [2])
        #expect(take(inbox) == nil)
    }

    @Test func aDatagramLongerThanASlotIsRefused() throws {
        let inbox = try DatagramInbox(capacity: 2)
        let long = [UInt8](repeating: 0x80, count: DatagramInbox.slotSize + 1)
        #expect(!long.withUnsafeBytes { inbox.put($0) })
        #expect(inbox.drops.tooLong == 1)
        #expect(!readable(inbox))
    }

    @Test func theRingWrapsAroundWithoutMixingSlots() throws {
        let inbox = try DatagramInbox(capacity: 3)
        for round in 0..<10 {
            let datagram = [UInt8](repeating: UInt8(round), count: 100 + round)
            #expect(datagram.withUnsafeBytes { inbox.put($0) })
            #expect(take(inbox) == datagram)
        }
    }
}
