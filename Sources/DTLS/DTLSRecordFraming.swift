/// Where DTLS records start and end in a datagram, checked before OpenSSL sees it, and how the
/// records OpenSSL writes are cut back into datagrams.
///
/// RFC 6347 §4.1, the record layer:
///
///     struct {
///         ContentType type;                 // 1 byte
///         ProtocolVersion version;          // 2 bytes: {254, 255} DTLS 1.0, {254, 253} DTLS 1.2
///         uint16 epoch;
///         uint48 sequence_number;
///         uint16 length;                    // bytes of fragment that follow
///         opaque fragment[DTLSPlaintext.length];
///     } DTLSPlaintext;
///
/// A datagram carries one or more whole records (§4.1.1: "Multiple DTLS records may be placed in
/// a single datagram"; a record never spans two).
enum DTLSRecordFraming {
    /// Type, version, epoch, sequence number and length.
    static let headerLength = 13
    /// RFC 6347 §4.1 keeps TLS 1.2's limit (RFC 5246 §6.2.3): a protected fragment is at most
    /// 2^14 + 2048 bytes.
    static let maximumFragmentLength = 16_384 + 2_048
    /// change_cipher_spec (20), alert (21), handshake (22), application_data (23), heartbeat (24,
    /// RFC 6520) and tls12_cid (25, RFC 9146): the record types DTLS 1.2 defines.
    static let contentTypes: ClosedRange<UInt8> = 20...25

    // MARK: RFC 7983 §7

    /// RFC 7983 §7 demultiplexes what arrives on a WebRTC 5-tuple by the first byte:
    ///
    ///              +----------------+
    ///              |        [0..3] -+--> forward to STUN
    ///              |                |
    ///              |      [16..19] -+--> forward to ZRTP
    ///              |                |
    ///  packet -->  |      [20..63] -+--> forward to DTLS
    ///              |                |
    ///              |      [64..79] -+--> forward to TURN Channel
    ///              |                |
    ///              |    [128..191] -+--> forward to RTP/RTCP
    ///              +----------------+
    static let dtlsFirstBytes: ClosedRange<UInt8> = 20...63

    // MARK: Inbound

    /// Checks that `datagram` is DTLS by RFC 7983 and splits cleanly into whole records with a
    /// DTLS 1.0 or 1.2 version and a DTLS 1.2 content type; returns the number of records.
    /// Throws `notDTLS` or `malformedRecord`, naming the record and its byte offset.
    static func validate(_ datagram: UnsafeRawBufferPointer) throws -> Int {
        guard let first = datagram.first else {
            throw DTLSError(.notDTLS, "an empty datagram is not DTLS")
        }
        guard dtlsFirstBytes.contains(first) else {
            throw DTLSError(
                .notDTLS,
                "first byte \(first) is outside 20...63, so the datagram is not DTLS (RFC 7983 §7: "
                    + "0...3 STUN, 128...191 RTP/RTCP)"
            )
        }
        var offset = 0
        var records = 0
        while offset < datagram.count {
            records += 1
            let place = "record \(records) at byte \(offset)"
            guard datagram.count - offset >= headerLength else {
                throw DTLSError(
                    .malformedRecord,
                    "\(place): \(datagram.count - offset) bytes left, shorter than a \(headerLength)-byte record header"
                )
            }
            let type = datagram[offset]
            guard contentTypes.contains(type) else {
                throw DTLSError(.malformedRecord, "\(place): content type \(type) is not a DTLS 1.2 record type")
            }
            let major = datagram[offset + 1]
            let minor = datagram[offset + 2]
            guard major == 254, minor == 255 || minor == 253 else {
                throw DTLSError(
                    .malformedRecord,
                    "\(place): version {\(major), \(minor)} is neither DTLS 1.0 {254, 255} nor 1.2 {254, 253}"
                )
            }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard length <= maximumFragmentLength else {
                throw DTLSError(
                    .malformedRecord,
                    "\(place): length \(length) is above the \(maximumFragmentLength) bytes RFC 6347 allows"
                )
            }
            let end = offset + headerLength + length
            guard end <= datagram.count else {
                throw DTLSError(
                    .malformedRecord,
                    "\(place): length \(length) runs past the end of the \(datagram.count)-byte datagram"
                )
            }
            offset = end
        }
        return records
    }

    // MARK: Outbound

    /// Cuts the records OpenSSL wrote into its memory BIO back into datagrams of at most `mtu`
    /// bytes, packing whole records in order.
    ///
    /// A memory BIO is a byte stream, so the datagram boundaries OpenSSL meant are lost. They are
    /// recoverable: OpenSSL writes whole records and keeps each record within the MTU (it counts
    /// the bytes already pending in the BIO when it sizes handshake fragments), so packing records
    /// greedily gives datagrams within the MTU, as RFC 6347 §4.1.1 allows. A tail that does not
    /// parse (it never happens with OpenSSL's output) goes out with the last datagram rather than
    /// being dropped.
    static func datagrams(fromRecords stream: [UInt8], mtu: Int) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        var current: [UInt8] = []
        var offset = 0
        while offset < stream.count {
            guard stream.count - offset >= headerLength else { break }
            let length = Int(stream[offset + 11]) << 8 | Int(stream[offset + 12])
            let end = offset + headerLength + length
            guard end <= stream.count else { break }
            if !current.isEmpty, current.count + (end - offset) > mtu {
                datagrams.append(current)
                current = []
            }
            current.append(contentsOf: stream[offset..<end])
            offset = end
        }
        if offset < stream.count { current.append(contentsOf: stream[offset...]) }
        if !current.isEmpty { datagrams.append(current) }
        return datagrams
    }
}
