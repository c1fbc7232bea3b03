import Dispatch
import ICE
import JSEP
import SDP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two real libnice agents in this process, host candidates on 127.0.0.1 only (added by name, as
/// libnice gathers no loopback otherwise). Every wait runs on a Dispatch thread (`blocking`).
@Suite struct ICEAgentTests {
    /// Controlling and controlled reach ready on the same pair, and datagrams of each RFC 7983
    /// class cross both ways intact; others are dropped and counted.
    @Test func connectsAndCarriesDatagrams() async throws {
        try await blocking {
            let a = try Peer(.controlling)
            let b = try Peer(.controlled)
            defer {
                a.agent.stop()
                b.agent.stop()
            }
            #expect(a.agent.localCredentials != b.agent.localCredentials)
            let start = DispatchTime.now()
            try exchange(a, b)
            #expect(a.recorder.waitForState(.ready, seconds: 15))
            #expect(b.recorder.waitForState(.ready, seconds: 15))
            print("ICE: both ready \(seconds(since: start)) s after the exchange")
            let pairA = try #require(a.agent.selectedPair)
            let pairB = try #require(b.agent.selectedPair)
            #expect(pairA.local.address == "127.0.0.1" && pairA.remote.address == "127.0.0.1")
            #expect(pairA.local.port == pairB.remote.port && pairA.remote.port == pairB.local.port)
            #expect(a.recorder.states.contains(.connected) || a.recorder.states.contains(.ready))
            #expect(a.agent.state == .ready && b.agent.state == .ready)

            let dtls: [UInt8] = [22, 254, 253] + Array(repeating: 0xAB, count: 100)
            let srtp: [UInt8] = [0x80, 96, 0, 1] + (0..<1196).map { UInt8(truncatingIfNeeded: $0) }
            let srtcp: [UInt8] = [0x80, 200, 0, 6] + Array(repeating: 7, count: 24)
            try a.agent.send(dtls)
            try a.agent.send(srtp)
            try b.agent.send(srtcp)
            try b.agent.send(dtls)
            // Not RFC 7983 for us: dropped and counted by the receiver.
            try a.agent.send([100, 1, 2, 3])
            try a.agent.send([200, 1, 2, 3])
            #expect(
                b.recorder.wait(seconds: 5) {
                    b.recorder.received.count == 2 && b.agent.statistics.droppedNotRFC7983 == 2
                }
            )
            #expect(a.recorder.wait(seconds: 5) { a.recorder.received.count == 2 })
            #expect(b.recorder.received == [.init(bytes: dtls, kind: .dtls), .init(bytes: srtp, kind: .srtp)])
            #expect(a.recorder.received == [.init(bytes: srtcp, kind: .srtcp), .init(bytes: dtls, kind: .dtls)])
            #expect(b.agent.statistics.droppedNotRFC7983 == 2)
            #expect(throws: ICEError.self) { try a.agent.send(Array(repeating: 0x80, count: 1501)) }
        }
    }

    /// The selected pair's socket is a real UDP socket: a datagram sent with plain sendto on it
    /// from the controlling side reaches the controlled agent's receive handler.
    @Test func fastPathSocketReachesThePeer() async throws {
        try await blocking {
            let a = try Peer(.controlling)
            let b = try Peer(.controlled)
            defer {
                a.agent.stop()
                b.agent.stop()
            }
            try exchange(a, b)
            #expect(a.recorder.waitForState(.ready, seconds: 15))
            #expect(b.recorder.waitForState(.ready, seconds: 15))
            let socket = try #require(try a.agent.selectedSocket())
            #expect(socket.fd >= 0)
            var type: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(socket.fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0)
            #expect(type == Int32(SOCK_DGRAM.rawValue))
            #expect(socket.remote.port == b.agent.selectedPair?.local.port)
            let packet: [UInt8] = [0x80, 111, 0x12, 0x34] + Array(repeating: 0x5A, count: 160)
            var remote = socket.remoteAddress
            let sent = packet.withUnsafeBytes { bytes in
                withUnsafePointer(to: &remote) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(socket.fd, bytes.baseAddress, bytes.count, 0, $0, socket.remoteAddressLength)
                    }
                }
            }
            #expect(sent == packet.count)
            #expect(b.recorder.wait(seconds: 5) { b.recorder.received.contains(.init(bytes: packet, kind: .srtp)) })
        }
    }

    /// An answerer given no remote candidates at all (only credentials), as from a browser in a
    /// network without a default route, connects: the offerer's checks make it learn a
    /// peer-reflexive candidate.
    @Test func learnsPeerReflexiveFromChecks() async throws {
        try await blocking {
            let a = try Peer(.controlling)
            let b = try Peer(.controlled)
            defer {
                a.agent.stop()
                b.agent.stop()
            }
            try exchange(a, b, candidatesToB: false)
            #expect(a.recorder.waitForState(.ready, seconds: 15))
            #expect(b.recorder.waitForState(.ready, seconds: 15))
            #expect(b.agent.statistics.remoteCandidates == 0)
            #expect(b.agent.statistics.peerReflexiveCandidates >= 1)
            #expect(b.agent.selectedPair?.remote.type == .peerReflexive)
            #expect(b.recorder.lines.contains { $0.contains("peer-reflexive") })
            try a.agent.send([0x80, 96, 0, 9])
            try b.agent.send([23, 254, 253, 0])
            #expect(b.recorder.wait(seconds: 5) { b.recorder.received.count == 1 })
            #expect(a.recorder.wait(seconds: 5) { a.recorder.received.count == 1 })
        }
    }

    /// mDNS `.local` candidates never reach libnice: ignored, counted, one log line each, whether
    /// given as a line or as JSEP's parsed value.
    @Test func ignoresMDNSCandidates() throws {
        let b = try Peer(.controlled)
        defer { b.agent.stop() }
        let added = try b.agent.addRemoteCandidate(
            "candidate:2 1 udp 2113937151 4f1a2b3c-0d9e-4e8f-a1b2-c3d4e5f60718.local 51234 typ host generation 0"
        )
        #expect(!added)
        #expect(b.agent.statistics.ignoredMDNSCandidates == 1)
        #expect(b.agent.statistics.remoteCandidates == 0)
        #expect(b.recorder.lines.filter { $0.contains(".local") }.count == 1)
        let parsed = try ICECandidate(
            attributeValue: "5 1 UDP 2113937151 0b6d0a4e-2a4c-4f4c-9c1a-1d2a3b4c5d6e.local 51237 typ host"
        )
        #expect(try !b.agent.addRemoteCandidate(parsed))
        #expect(b.agent.statistics.ignoredMDNSCandidates == 2)
        #expect(b.recorder.lines.filter { $0.contains(".local") }.count == 2)
        // Component 2 (RTCP without rtcp-mux) is ignored too; a host candidate goes through.
        #expect(try !b.agent.addRemoteCandidate("candidate:3 2 udp 2113937150 127.0.0.1 51235 typ host"))
        #expect(b.agent.statistics.ignoredOtherComponent == 1)
        #expect(try b.agent.addRemoteCandidate("candidate:4 1 udp 2113937151 127.0.0.1 51236 typ host"))
        #expect(b.agent.statistics.remoteCandidates == 1)
        #expect(b.agent.statistics.ignoredMDNSCandidates == 2)
    }

    /// What must not reach libnice is refused with `.invalidCandidate`: lines JSEP's parser
    /// rejects, overlong lines (as text or as a value whose written line is too long), and values
    /// built in code that do not follow the grammar. Nothing is counted as added.
    @Test func refusesMalformedAndOverlongCandidates() throws {
        let b = try Peer(.controlled)
        defer { b.agent.stop() }
        func code(_ body: () throws -> Bool) -> ICEError.Code? {
            do {
                _ = try body()
                return nil
            } catch let error as ICEError {
                return error.code
            } catch {
                return nil
            }
        }
        #expect(
            code { try b.agent.addRemoteCandidate("a=candidate:1 1 udp x 127.0.0.1 5 typ host") } == .invalidCandidate
        )
        #expect(code { try b.agent.addRemoteCandidate("a=ice-ufrag:abcd") } == .invalidCandidate)
        let long = "candidate:1 1 udp 1 127.0.0.1 5 typ host " + String(repeating: "x", count: 600)
        #expect(code { try b.agent.addRemoteCandidate(long) } == .invalidCandidate)
        var many = try ICECandidate(attribute: "candidate:1 1 udp 1 127.0.0.1 5 typ host")
        many.extensions = (0..<60).map { ICECandidate.Extension(name: "x\($0)", value: "0123456") }
        #expect(many.attribute.utf8.count > ICEAgent.maximumCandidateLength)
        #expect(code { try b.agent.addRemoteCandidate(many) } == .invalidCandidate)
        var spaced = try ICECandidate(attribute: "candidate:1 1 udp 1 127.0.0.1 5 typ host")
        spaced.foundation = "1 1"
        #expect(code { try b.agent.addRemoteCandidate(spaced) } == .invalidCandidate)
        #expect(b.agent.statistics.remoteCandidates == 0)
    }

    /// RFC 7675: when the peer vanishes without a word (its agent is destroyed, its socket
    /// closed), the survivor reports consent lost, with the pair, well within 30 s.
    @Test func reportsConsentLostWhenThePeerVanishes() async throws {
        try await blocking {
            let a = try Peer(.controlling)
            let b = try Peer(.controlled)
            defer { a.agent.stop() }
            try exchange(a, b)
            #expect(a.recorder.waitForState(.ready, seconds: 15))
            #expect(b.recorder.waitForState(.ready, seconds: 15))
            let vanished = DispatchTime.now()
            b.agent.stop()
            #expect(a.recorder.waitForState(.consentLost, seconds: 30))
            let elapsed = seconds(since: vanished)
            print("ICE: consent lost \(elapsed) s after the peer vanished")
            #expect(elapsed < 30)
            #expect(a.agent.state == .consentLost)
            #expect(!a.recorder.states.contains(.failed))
            #expect(a.recorder.lines.contains { $0.contains("consent lost") })
            let lost = a.recorder.allEvents.compactMap { event -> ICECandidatePair? in
                if case .state(.consentLost, let pair) = event { return pair }
                return nil
            }
            #expect(lost.count == 1)
        }
    }

    /// A wrong ice-pwd: the checks of the side holding it never authenticate, so that side never
    /// connects and reports failed after its checks run out (3 retransmissions here).
    @Test func wrongPasswordFails() async throws {
        try await blocking {
            let a = try Peer(.controlling, retransmissions: 3)
            let b = try Peer(.controlled, retransmissions: 3)
            defer {
                a.agent.stop()
                b.agent.stop()
            }
            let wrong = try ICECredentials(ufrag: b.agent.localCredentials.ufrag, password: "wrongwrongwrongwrong22")
            let start = DispatchTime.now()
            try exchange(a, b, credentialsForA: wrong)
            #expect(a.recorder.waitForState(.failed, seconds: 30))
            print("ICE: wrong password failed after \(seconds(since: start)) s; controlled side: \(b.recorder.states)")
            #expect(!a.recorder.states.contains(.connected) && !a.recorder.states.contains(.ready))
            #expect(!b.recorder.states.contains(.ready))
            #expect(a.recorder.lines.contains { $0.contains("failed") })
        }
    }

    /// `portRange` (`--ice-ports`): every host candidate of two agents binds inside the range,
    /// each on a port of its own, and the pair they select uses those ports.
    @Test func hostCandidatesBindOnlyInThePortRange() async throws {
        try await blocking {
            let range: ClosedRange<UInt16> = 43210...43219
            let a = try Peer(.controlling, portRange: range)
            let b = try Peer(.controlled, portRange: range)
            defer {
                a.agent.stop()
                b.agent.stop()
            }
            try exchange(a, b)
            let hosts = (a.agent.localCandidates + b.agent.localCandidates).filter { $0.type == .host }
            #expect(hosts.count >= 2, "\(hosts)")
            for candidate in hosts {
                #expect(range.contains(candidate.port), "\(candidate) outside \(range)")
            }
            #expect(Set(hosts.map(\.port)).count == hosts.count, "one port each: \(hosts)")
            #expect(a.recorder.waitForState(.ready, seconds: 15))
            let pair = try #require(a.agent.selectedPair)
            #expect(range.contains(pair.local.port) && range.contains(pair.remote.port), "\(pair)")
        }
    }

    /// A range with no free port fails the gathering with a message naming it; a range from
    /// port 0 (libnice's "any port") is refused at `init`.
    @Test func refusesAnUnusablePortRange() throws {
        // Take both ports of a small range on loopback first.
        let range: ClosedRange<UInt16> = 43230...43231
        let sockets = try range.map { try boundUDPSocket(port: $0) }
        defer { sockets.forEach { close($0) } }
        let full = try Peer(.controlled, portRange: range)
        defer { full.agent.stop() }
        let gatherError = #expect(throws: ICEError.self) { try full.agent.gather() }
        #expect(
            gatherError?.message.contains("no free UDP port in 43230-43231") ?? false,
            "\(String(describing: gatherError))"
        )

        let fromZero = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], portRange: 0...10)
        let error = #expect(throws: ICEError.self) {
            try ICEAgent(fromZero, onEvent: { _ in }, onReceive: { _, _ in })
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message == "port range 0-10 must start at 1 or above", "\(String(describing: error))")
    }

    /// Configuration errors are thrown, not crashed on.
    @Test func refusesBadConfiguration() {
        let bad = ICEAgent.Configuration(role: .controlled, localAddresses: ["localhost"])
        #expect(throws: ICEError.self) { try ICEAgent(bad, onEvent: { _ in }, onReceive: { _, _ in }) }
        let tooMany = ICEAgent.Configuration(role: .controlled, localAddresses: Array(repeating: "127.0.0.1", count: 9))
        #expect(throws: ICEError.self) { try ICEAgent(tooMany, onEvent: { _ in }, onReceive: { _, _ in }) }
        // A relay-only policy with no TURN server could never connect.
        let relayWithoutTURN = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], relayOnly: true)
        let error = #expect(throws: ICEError.self) {
            try ICEAgent(relayWithoutTURN, onEvent: { _ in }, onReceive: { _, _ in })
        }
        #expect(error?.message.contains("relay-only") ?? false, "\(String(describing: error))")
    }
}

/// A UDP socket bound to 127.0.0.1:`port`, so libnice cannot take that port.
private func boundUDPSocket(port: UInt16) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw ICEError(.agent, "socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else {
        close(fd)
        throw ICEError(.agent, "bind 127.0.0.1:\(port): errno \(errno)")
    }
    return fd
}
