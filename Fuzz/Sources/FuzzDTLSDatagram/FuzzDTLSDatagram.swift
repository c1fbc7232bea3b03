import DTLS

/// libFuzzer entry for the bytes a WebRTC viewer can put on our ICE/DTLS port. The first input
/// byte picks our role (bit 0 clear: client, which calls `start()` first, as rtc-publish does when
/// it answers `a=setup:active`; set: server, as when the peer is active) and the number of
/// datagrams (bits 1-2: one to four). Every datagram but the last is the next two-byte big-endian
/// length's worth of bytes (cut short at the end of the input); the last is the rest. Each goes,
/// in an allocation of its own size, to `receive` of a fresh session, then `handleTimeout()` runs
/// once. Checked, for every call:
///  1. nothing crashes, leaks or reads past a datagram (ASan, LeakSanitizer);
///  2. a datagram the RFC 6347 §4.1 record check refuses is refused by `receive` with the same
///     code (`notDTLS` when the first byte is outside 20...63, RFC 7983 §7; else `malformedRecord`
///     naming the record and its offset) and leaves `state` as it was; one that passes the check
///     is not refused (`DTLSRecordFraming` is internal, so `RecordCheck` restates the check);
///  3. a client refuses datagrams before `start()`, and a failed session refuses every later one
///     (`invalidState`), unchanged;
///  4. every thrown error is a `DTLSError` with a message; a `.failed` event carries a message and
///     is the new state, and the state never fails without one;
///  5. garbage never connects (nor closes, which only a connected session can): we expect the
///     certificate `Fixture.peerFingerprint` names, whose private key no longer exists, so a peer
///     can present it (the seeds do) but never prove it holds the key;
///  6. what the session sends is whole DTLS records within the MTU.
///
/// A session costs about 0.4 ms to make here (`SSL_CTX_new` in `DTLSSession.init`, under ASan and
/// libFuzzer's `strcmp` hook), more than most inputs take. An input whose datagrams `RecordCheck`
/// refuses all therefore goes to long-lived sessions instead (`Fixture.shared`: a new server, a
/// new client and a started one), on which a refusal must leave the state as it was just the
/// same; nothing else reaches them, and they get no `handleTimeout()`, whose timers would change
/// them. Every other input gets fresh sessions and frees them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDTLSDatagram(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard let control = input.first else { return 0 }
    let role: DTLSRole = control & 1 == 0 ? .client : .server
    let datagrams = split(input.dropFirst(), count: 1 + Int(control >> 1 & 3))
    defer { datagrams.forEach { $0.deallocate() } }
    let refusals = datagrams.map { RecordCheck.refusal(of: UnsafeRawBufferPointer($0)) }

    if refusals.allSatisfy({ $0 != nil }) {
        let shared = Fixture.shared
        if role == .client, let first = datagrams.first {
            expectRefusal(shared.newClient, UnsafeRawBufferPointer(first), code: .invalidState)  // before start()
        }
        for (datagram, refusal) in zip(datagrams, refusals) {
            receive(datagram, refusal, by: role == .client ? shared.startedClient : shared.newServer)
        }
        return 0
    }

    let session: DTLSSession
    do {
        session = try DTLSSession(role == .client ? Fixture.client : Fixture.server)
    } catch {
        fatalError("a session with the fixed configuration must be creatable: \(error)")
    }
    if role == .client, let first = datagrams.first {
        expectRefusal(session, UnsafeRawBufferPointer(first), code: .invalidState)  // before start()
        start(session)
    }
    for (datagram, refusal) in zip(datagrams, refusals) {
        receive(datagram, refusal, by: session)
    }
    if case .failed = session.state, let last = datagrams.last {
        expectRefusal(session, UnsafeRawBufferPointer(last), code: .invalidState)
    }
    let before = session.state
    check(session.handleTimeout(), of: session, before: before)
    return 0
}

private func start(_ client: DTLSSession) {
    do {
        check(try client.start(), of: client, before: .new)
    } catch {
        fatalError("start() of a new client threw \(error)")
    }
    guard client.state == .handshaking else { fatalError("a started client is \(client.state)") }
}

/// `bytes` cut into at most `count` datagrams, each copied into an allocation of exactly its size
/// (so ASan sees a read past its end); the caller deallocates them.
private func split(_ bytes: UnsafeRawBufferPointer.SubSequence, count: Int) -> [UnsafeMutableRawBufferPointer] {
    var rest = bytes
    var pieces: [UnsafeRawBufferPointer.SubSequence] = []
    while pieces.count < count - 1, rest.count >= 2 {
        let length = min(Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1]), rest.count - 2)
        pieces.append(rest.dropFirst(2).prefix(length))
        rest = rest.dropFirst(2 + length)
    }
    pieces.append(rest)
    return pieces.map { piece in
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: piece.count, alignment: 1)
        copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: piece))
        return copy
    }
}

/// One datagram from the peer: refused exactly when the state, the size or the record check
/// (`refusal`) says so; otherwise handled, with the output checked.
private func receive(
    _ datagram: UnsafeMutableRawBufferPointer,
    _ refusal: RecordCheck.Refusal?,
    by session: DTLSSession
) {
    let bytes = UnsafeRawBufferPointer(datagram)
    let before = session.state
    switch before {
    case .failed, .closed:
        expectRefusal(session, bytes, code: .invalidState)
        return
    case .new, .handshaking, .connected:
        break
    }
    if bytes.count > DTLSSession.maximumDatagramLength {
        expectRefusal(session, bytes, code: .datagramTooLarge)
        return
    }
    if let refusal {
        if let first = bytes.first, !(20...63).contains(first), refusal.code != .notDTLS {
            fatalError("RecordCheck: first byte \(first) must be not-dtls, got \(refusal.code)")
        }
        let error = expectRefusal(session, bytes, code: refusal.code)
        if let place = refusal.place, !error.message.hasPrefix(place) {
            fatalError("refusal '\(error.message)' does not begin with '\(place)'")
        }
        return
    }
    do {
        check(try session.receive(bytes), of: session, before: before)
    } catch {
        fatalError("a \(bytes.count)-byte datagram of whole DTLS records was refused in state \(before): \(error)")
    }
    guard session.state != .new else { fatalError("an accepted datagram left the session new") }
}

/// `receive` must throw a `DTLSError` with `code` and a message, and leave the state unchanged.
@discardableResult
private func expectRefusal(
    _ session: DTLSSession,
    _ datagram: UnsafeRawBufferPointer,
    code: DTLSError.Code
) -> DTLSError {
    let before = session.state
    let output: DTLSOutput
    do {
        output = try session.receive(datagram)
    } catch let error as DTLSError {
        guard error.code == code, !error.message.isEmpty else {
            fatalError("expected a \(code) refusal in state \(before), got \(error)")
        }
        guard session.state == before else {
            fatalError("a refused datagram (\(error)) moved the session from \(before) to \(session.state)")
        }
        return error
    } catch {
        fatalError("receive threw a non-DTLS error: \(error)")
    }
    fatalError("a \(datagram.count)-byte datagram was not refused (\(code) expected) in state \(before): \(output)")
}

/// What a call returned, against the state before it and the state now.
private func check(_ output: DTLSOutput, of session: DTLSSession, before: DTLSState) {
    guard session.srtpKeys == nil else { fatalError("garbage produced SRTP keys (state \(session.state))") }
    var failure: DTLSError?
    for event in output.events {
        guard case .failed(let error) = event, failure == nil else {
            fatalError("unexpected event \(event) in \(output.events) (state \(before) -> \(session.state))")
        }
        guard !error.message.isEmpty else { fatalError("a failure without a message: \(error.code)") }
        failure = error
    }
    switch session.state {
    case .failed(let error):
        let reported = failure.map { $0 == error } ?? (before == session.state)
        guard reported else { fatalError("state \(session.state) after \(before), events \(output.events)") }
    case .new, .handshaking:
        guard failure == nil else { fatalError("a failure event (\(output.events)) left state \(session.state)") }
    case .connected, .closed:
        fatalError("garbage brought the session from \(before) to \(session.state)")
    }
    for datagram in output.datagrams {
        let refusal = datagram.withUnsafeBytes { RecordCheck.refusal(of: $0) }
        guard !datagram.isEmpty, datagram.count <= Fixture.mtu, refusal == nil else {
            fatalError("sent a \(datagram.count)-byte datagram (MTU \(Fixture.mtu)): \(String(describing: refusal))")
        }
    }
}

/// RFC 6347 §4.1 and RFC 7983 §7, restated here because `DTLSRecordFraming` is internal to DTLS:
/// a DTLS datagram starts with a byte in 20...63 and is one or more whole records, each a 13-byte
/// header (content type 20...25, version {254, 255} or {254, 253}, epoch, sequence number, length
/// of at most 2^14 + 2048) and that many bytes.
enum RecordCheck {
    struct Refusal: CustomStringConvertible {
        let code: DTLSError.Code
        /// For a malformed record, how the message must begin: "record 2 at byte 40".
        let place: String?
        var description: String { "\(code) \(place ?? "")" }
    }

    static func refusal(of datagram: UnsafeRawBufferPointer) -> Refusal? {
        guard let first = datagram.first, (20...63).contains(first) else {
            return Refusal(code: .notDTLS, place: nil)
        }
        var offset = 0
        var record = 0
        while offset < datagram.count {
            record += 1
            let malformed = { Refusal(code: .malformedRecord, place: "record \(record) at byte \(offset):") }
            guard datagram.count - offset >= 13 else { return malformed() }
            let type = datagram[offset]
            let major = datagram[offset + 1]
            let minor = datagram[offset + 2]
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard (20...25).contains(type), major == 254, minor == 255 || minor == 253, length <= 16_384 + 2_048,
                length <= datagram.count - offset - 13
            else { return malformed() }
            offset += 13 + length
        }
        return nil
    }
}

/// Built once: certificates are slow to make, sessions are not.
enum Fixture {
    static let mtu = 1200
    /// The certificate the seeds from a real handshake present (Docs/fuzzing.md, "Seed corpus").
    /// Its private key was never written down, so no input can prove it owns this certificate.
    static let peerFingerprint: DTLSFingerprint = {
        do {
            return try DTLSFingerprint(
                sdp:
                    "sha-256 2D:32:A8:A4:76:03:10:5E:20:4F:1B:A5:FD:89:83:60:61:47:44:5F:FB:BF:09:E5:6A:27:6A:EA:B6:13:2D:D6"
            )
        } catch {
            fatalError("fixed fingerprint: \(error)")
        }
    }()
    static let certificate: DTLSCertificate = {
        do {
            return try DTLSCertificate.generate(commonName: "fuzz")
        } catch {
            fatalError("cannot generate our certificate: \(error)")
        }
    }()
    static let client = DTLSSession.Configuration(
        role: .client,
        certificate: certificate,
        remoteFingerprint: peerFingerprint,
        mtu: mtu
    )
    static let server = DTLSSession.Configuration(
        role: .server,
        certificate: certificate,
        remoteFingerprint: peerFingerprint,
        mtu: mtu
    )

    /// Sessions for inputs that `RecordCheck` refuses all of. libFuzzer calls the entry point from
    /// one thread only, which is what makes the unchecked global state safe here.
    struct Shared {
        let newClient: DTLSSession
        let startedClient: DTLSSession
        let newServer: DTLSSession
    }
    nonisolated(unsafe) static let shared: Shared = {
        do {
            let shared = Shared(
                newClient: try DTLSSession(client),
                startedClient: try DTLSSession(client),
                newServer: try DTLSSession(server)
            )
            start(shared.startedClient)
            return shared
        } catch {
            fatalError("a session with the fixed configuration must be creatable: \(error)")
        }
    }()
}
