import Testing

@testable import DTLS

/// The record walk `receive` does before OpenSSL, and the cut of OpenSSL's output into datagrams.
@Suite("DTLS record framing")
struct DTLSRecordFramingTests {
    static func record(_ type: UInt8, _ payload: Int) -> [UInt8] {
        [type, 254, 253, 0, 0, 0, 0, 0, 0, 0, 1, UInt8(payload >> 8), UInt8(payload & 0xFF)]
            + [UInt8](repeating: type, count: payload)
    }

    static let wholeRecords: [([UInt8], Int)] = [
        (record(22, 0), 1),
        (record(22, 100), 1),
        (record(20, 1) + record(22, 40), 2),
        (record(21, 2) + record(23, 30) + record(25, 7), 3),
        ([22, 254, 255, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0xAA, 0xBB], 1),  // DTLS 1.0 record version
    ]

    @Test("whole records are counted", arguments: wholeRecords)
    func valid(datagram: [UInt8], records: Int) throws {
        #expect(try datagram.withUnsafeBytes { try DTLSRecordFraming.validate($0) } == records)
    }

    @Test(
        "RFC 7983: 20...63 is DTLS, the bytes either side are not",
        arguments: [0, 3, 16, 19, 20, 63, 64, 79, 128, 191, 255]
    )
    func demuxRange(first: Int) {
        let datagram = [UInt8(first)] + [UInt8](repeating: 0, count: 20)
        let error = #expect(throws: DTLSError.self) {
            try datagram.withUnsafeBytes { try DTLSRecordFraming.validate($0) }
        }
        // Inside the range the record walk runs (and refuses these zeros for their version).
        #expect(error?.code == ((20...63).contains(first) ? .malformedRecord : .notDTLS))
    }

    static let packings: [([Int], Int, [[Int]])] = [
        ([100, 200, 300], 1200, [[100, 200, 300]]),
        ([1000, 300], 1200, [[1000], [300]]),
        ([500, 500, 500], 1200, [[500, 500], [500]]),
        // 13 + 1187 = 1200 exactly: one per datagram.
        ([1187, 1187], 1200, [[1187], [1187]]),
        ([587, 587], 1200, [[587, 587]]),
        ([588, 587], 1200, [[588], [587]]),
        ([0], 1200, [[0]]),
    ]

    @Test("OpenSSL's output is cut at record boundaries within the MTU", arguments: packings)
    func packing(payloads: [Int], mtu: Int, expected: [[Int]]) {
        let records = payloads.map { Self.record(22, $0) }
        let datagrams = DTLSRecordFraming.datagrams(fromRecords: Array(records.joined()), mtu: mtu)
        let want = expected.map { group in Array(group.map { Self.record(22, $0) }.joined()) }
        #expect(datagrams == want)
        for datagram in datagrams { #expect(datagram.count <= mtu) }
    }

    @Test("an unparsable tail is kept, not dropped")
    func tail() {
        let stream = Self.record(22, 10) + [22, 254]
        #expect(DTLSRecordFraming.datagrams(fromRecords: stream, mtu: 1200) == [stream])
        #expect(DTLSRecordFraming.datagrams(fromRecords: [], mtu: 1200) == [])
    }
}
