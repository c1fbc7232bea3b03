import CNice
import SDP
import Synchronization

extension ICEAgent {
    /// What the C callbacks reach through their `user_data`: the handlers and the state they
    /// update. One retain is held for libnice from `makeAgent` until `stop()` has detached every
    /// callback on the loop thread, so no callback can outlive it.
    final class Core: Sendable {
        let onEvent: EventHandler
        let onReceive: ReceiveHandler
        let log: @Sendable (String) -> Void
        let inner = Mutex(Inner())

        init(
            onEvent: @escaping EventHandler,
            onReceive: @escaping ReceiveHandler,
            log: @escaping @Sendable (String) -> Void
        ) {
            self.onEvent = onEvent
            self.onReceive = onReceive
            self.log = log
        }

        struct Inner {
            var state = ICEState.new
            /// A pair worked once: a later FAILED is consent lost, not ICE failure.
            var everConnected = false
            var pair: ICECandidatePair?
            var localCandidates: [ICECandidate] = []
            var statistics = ICEStatistics()
        }

        /// A datagram libnice did not consume (not STUN): classify, bound, deliver or count.
        func received(_ datagram: UnsafeRawBufferPointer) {
            guard datagram.count <= ICEAgent.maximumDatagramLength else {
                inner.withLock { $0.statistics.droppedTooLarge += 1 }
                return
            }
            guard let kind = ICEDatagramClass.classify(datagram) else {
                inner.withLock { $0.statistics.droppedNotRFC7983 += 1 }
                return
            }
            inner.withLock { $0.statistics.datagramsReceived += 1 }
            onReceive(datagram, kind)
        }

        /// libnice's component state → ours; final states stay final.
        func componentState(_ raw: guint, agent: OpaquePointer, stream: guint) {
            let pair = ICEAgent.selectedPair(agent, stream: stream)
            let next: ICEState? = inner.withLock { inner in
                guard !inner.state.isFinal else { return nil }
                let next: ICEState
                switch NiceComponentState(rawValue: raw) {
                case NICE_COMPONENT_STATE_GATHERING: next = .gathering
                case NICE_COMPONENT_STATE_CONNECTING: next = .connecting
                case NICE_COMPONENT_STATE_CONNECTED: next = .connected
                case NICE_COMPONENT_STATE_READY: next = .ready
                case NICE_COMPONENT_STATE_FAILED: next = inner.everConnected ? .consentLost : .failed
                default: return nil  // DISCONNECTED: before gathering, or libnice's teardown.
                }
                guard next != inner.state else { return nil }
                if next == .connected || next == .ready {
                    inner.everConnected = true
                    inner.pair = pair ?? inner.pair
                }
                inner.state = next
                return next
            }
            guard let next else { return }
            let reported = pair ?? inner.withLock { $0.pair }
            switch next {
            case .failed:
                log("ICE: failed: no candidate pair worked (checks timed out or were refused)")
            case .consentLost:
                log(
                    "ICE: consent lost on \(reported.map { "\($0)" } ?? "the selected pair"): the peer stopped answering"
                )
            default:
                break
            }
            onEvent(.state(next, pair: next == .failed ? nil : reported))
        }

        func localCandidate(_ candidate: UnsafeMutablePointer<NiceCandidate>, agent: OpaquePointer) {
            guard let text = rtc_nice_agent_generate_local_candidate_sdp()(agent, candidate) else { return }
            defer { rtc_g_free()(text) }
            // `a=candidate:…`, read with SDP's candidate parser like every other one.
            let line = String(cString: text)
            let parsed: ICECandidate
            do throws(CandidateSyntaxError) {
                parsed = try ICECandidate(attribute: line)
            } catch {
                log(
                    "ICE: local candidate not reported, the candidate grammar cannot read it (\(error.problem)): \(line.prefix(120))"
                )
                return
            }
            inner.withLock { $0.localCandidates.append(parsed) }
            onEvent(.localCandidate(parsed))
        }

        func gatheringDone() {
            onEvent(.gatheringDone(inner.withLock { $0.localCandidates }))
        }

        func remoteCandidate(_ candidate: UnsafeMutablePointer<NiceCandidate>) {
            guard candidate.pointee.type == NICE_CANDIDATE_TYPE_PEER_REFLEXIVE else { return }
            let endpoint = ICEAgent.endpoint(candidate)
            inner.withLock { $0.statistics.peerReflexiveCandidates += 1 }
            log("ICE: learnt peer-reflexive candidate \(endpoint) from the peer's checks")
            onEvent(.peerReflexive(endpoint))
        }

        func firstPeerCheck() {
            inner.withLock { $0.statistics.peerChecksReceived = true }
        }

        func selectedPair(local: UnsafeMutablePointer<NiceCandidate>, remote: UnsafeMutablePointer<NiceCandidate>) {
            let pair = ICECandidatePair(local: ICEAgent.endpoint(local), remote: ICEAgent.endpoint(remote))
            inner.withLock { $0.pair = pair }
            onEvent(.selectedPair(pair))
        }
    }

    static func callbackCore(_ raw: gpointer?) -> Core { Unmanaged<Core>.fromOpaque(raw!).takeUnretainedValue() }

    /// Creates and configures the NiceAgent, its stream and callbacks. On the GLib thread.
    static func makeAgent(
        _ configuration: Configuration,
        stun: String?,
        turn: String?,
        context: OpaquePointer,
        _ onEvent: @escaping EventHandler,
        _ onReceive: @escaping ReceiveHandler
    ) -> Result<(OpaquePointer, guint, ICECredentials, Core, [gulong]), ICEError> {
        let options = NiceAgentOption(
            rawValue: NICE_AGENT_OPTION_REGULAR_NOMINATION.rawValue | NICE_AGENT_OPTION_ICE_TRICKLE.rawValue
                | NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue
        )
        guard let agent = rtc_nice_agent_new_full()(context, NICE_COMPATIBILITY_RFC5245, options) else {
            return .failure(ICEError(.agent, "nice_agent_new_full failed"))
        }
        func fail(_ error: ICEError) -> Result<(OpaquePointer, guint, ICECredentials, Core, [gulong]), ICEError> {
            rtc_g_object_unref()(UnsafeMutableRawPointer(agent))
            return .failure(error)
        }
        rtc_nice_set_bool(agent, "controlling-mode", configuration.role == .controlling ? 1 : 0)
        rtc_nice_set_bool(agent, "ice-tcp", 0)
        rtc_nice_set_bool(agent, "ice-udp", 1)
        rtc_nice_set_bool(agent, "upnp", 0)
        rtc_nice_set_bool(agent, "keepalive-conncheck", 1)
        rtc_nice_set_bool(agent, "force-relay", configuration.relayOnly ? 1 : 0)
        rtc_nice_set_uint(agent, "stun-max-retransmissions", configuration.checkRetransmissions)
        rtc_nice_set_uint(agent, "stun-initial-timeout", configuration.checkInitialTimeoutMilliseconds)
        if let stun, let server = configuration.stunServer {
            rtc_nice_set_string(agent, "stun-server", stun)
            rtc_nice_set_uint(agent, "stun-server-port", guint(server.port))
        }
        for address in configuration.localAddresses {
            var niceAddress = NiceAddress()
            rtc_nice_address_init()(&niceAddress)
            guard rtc_nice_address_set_from_string()(&niceAddress, address) != 0,
                rtc_nice_agent_add_local_address()(agent, &niceAddress) != 0
            else {
                return fail(ICEError(.invalidConfiguration, "libnice refused local address \(address)"))
            }
        }
        let stream = rtc_nice_agent_add_stream()(agent, componentCount)
        guard stream != 0 else { return fail(ICEError(.agent, "nice_agent_add_stream failed")) }
        // After the stream exists, before `gather()`; libnice keeps it per component, across restarts.
        if let range = configuration.portRange {
            for component in 1...componentCount {
                rtc_nice_agent_set_port_range()(
                    agent,
                    stream,
                    component,
                    guint(range.lowerBound),
                    guint(range.upperBound)
                )
            }
        }
        if let turn, let server = configuration.turnServer {
            guard
                rtc_nice_agent_set_relay_info()(
                    agent,
                    stream,
                    1,
                    turn,
                    guint(server.server.port),
                    server.username,
                    server.password,
                    NICE_RELAY_TYPE_TURN_UDP
                ) != 0
            else { return fail(ICEError(.invalidConfiguration, "libnice refused the TURN server \(server)")) }
        }
        if let credentials = configuration.localCredentials {
            guard rtc_nice_agent_set_local_credentials()(agent, stream, credentials.ufrag, credentials.password) != 0
            else {
                return fail(ICEError(.invalidCredentials, "libnice refused the local credentials"))
            }
        }
        let credentials: ICECredentials
        do {
            credentials = try readLocalCredentials(agent, stream: stream)
        } catch {
            return fail(error)
        }

        let core = Core(onEvent: onEvent, onReceive: onReceive, log: configuration.log)
        let user = Unmanaged.passRetained(core).toOpaque()
        var handlers: [gulong] = []
        handlers.append(
            rtc_nice_connect_component_state_changed(
                agent,
                { agent, stream, _, state, user in
                    ICEAgent.callbackCore(user).componentState(state, agent: agent!, stream: stream)
                },
                user
            )
        )
        handlers.append(
            rtc_nice_connect_new_candidate_full(
                agent,
                { agent, candidate, user in ICEAgent.callbackCore(user).localCandidate(candidate!, agent: agent!) },
                user
            )
        )
        handlers.append(
            rtc_nice_connect_new_remote_candidate_full(
                agent,
                { _, candidate, user in ICEAgent.callbackCore(user).remoteCandidate(candidate!) },
                user
            )
        )
        handlers.append(
            rtc_nice_connect_candidate_gathering_done(
                agent,
                { _, _, user in ICEAgent.callbackCore(user).gatheringDone() },
                user
            )
        )
        handlers.append(
            rtc_nice_connect_initial_binding_request_received(
                agent,
                { _, _, user in ICEAgent.callbackCore(user).firstPeerCheck() },
                user
            )
        )
        handlers.append(
            rtc_nice_connect_new_selected_pair_full(
                agent,
                { _, _, _, local, remote, user in
                    ICEAgent.callbackCore(user).selectedPair(local: local!, remote: remote!)
                },
                user
            )
        )
        rtc_nice_agent_attach_recv()(
            agent,
            stream,
            1,
            context,
            { _, _, _, length, buffer, user in
                ICEAgent.callbackCore(user).received(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            },
            user
        )
        return .success((agent, stream, credentials, core, handlers))
    }

    /// The selected pair as libnice has it now, if any. On the GLib thread.
    static func selectedPair(_ agent: OpaquePointer, stream: guint) -> ICECandidatePair? {
        var local: UnsafeMutablePointer<NiceCandidate>?
        var remote: UnsafeMutablePointer<NiceCandidate>?
        guard rtc_nice_agent_get_selected_pair()(agent, stream, 1, &local, &remote) != 0, let local, let remote else {
            return nil
        }
        return ICECandidatePair(local: endpoint(local), remote: endpoint(remote))
    }

    static func endpoint(_ candidate: UnsafeMutablePointer<NiceCandidate>) -> ICEEndpoint {
        var text = [CChar](repeating: 0, count: 64)  // INET6_ADDRSTRLEN is 46
        rtc_nice_address_to_string()(&candidate.pointee.addr, &text)
        let port = UInt16(truncatingIfNeeded: rtc_nice_address_get_port()(&candidate.pointee.addr))
        let type: ICECandidate.CandidateType
        switch candidate.pointee.type {
        case NICE_CANDIDATE_TYPE_SERVER_REFLEXIVE: type = .serverReflexive
        case NICE_CANDIDATE_TYPE_PEER_REFLEXIVE: type = .peerReflexive
        case NICE_CANDIDATE_TYPE_RELAYED: type = .relay
        default: type = .host
        }
        let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ICEEndpoint(address: address, port: port, type: type)
    }
}

extension ICEAgent {
    /// The stream's `a=ice-ufrag` and `a=ice-pwd` as libnice made them (at creation, and anew at
    /// each restart). On the GLib thread.
    static func readLocalCredentials(_ agent: OpaquePointer, stream: guint) throws(ICEError) -> ICECredentials {
        var ufrag: UnsafeMutablePointer<gchar>?
        var password: UnsafeMutablePointer<gchar>?
        guard rtc_nice_agent_get_local_credentials()(agent, stream, &ufrag, &password) != 0, let ufrag, let password
        else {
            throw ICEError(.agent, "no local credentials")
        }
        let credentials = try? ICECredentials(ufrag: String(cString: ufrag), password: String(cString: password))
        rtc_g_free()(ufrag)
        rtc_g_free()(password)
        guard let credentials else { throw ICEError(.invalidCredentials, "libnice made unusable credentials") }
        return credentials
    }
}
