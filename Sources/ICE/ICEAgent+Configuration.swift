import SDP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension ICEAgent {
    /// How an agent is set up. Everything is fixed at `init`: ICE restart is a new agent.
    public struct Configuration: Sendable {
        /// Controlling when offering, controlled when answering.
        public var role: ICERole
        /// Numeric IPv4/IPv6 addresses to gather host candidates on (`--ice-address`, repeatable),
        /// each added with `nice_agent_add_local_address`. Empty: libnice's own choice, every
        /// interface that is up except loopback. Loopback is used only when named here.
        public var localAddresses: [String]
        /// A STUN server for a server-reflexive candidate (`--stun HOST:PORT`).
        public var stunServer: Server?
        /// A TURN server, UDP, for a relayed candidate (`--turn turn:USER:PASS@HOST:PORT`).
        public var turnServer: TURNServer?
        /// Only relayed candidates are offered and checked (`--ice-transport-policy relay`, the W3C
        /// `iceTransportPolicy`: no local address reaches the peer; libnice's `force-relay`).
        public var relayOnly: Bool
        /// The UDP ports host candidates may bind (`--ice-ports MIN-MAX`, for a firewall that opens
        /// only these, or traffic shaped by source port): `nice_agent_set_port_range` on every
        /// component before gathering. Server-reflexive and relayed candidates share the host
        /// candidates' sockets, so they leave from these ports too. No free port in the range on
        /// an address makes `gather()` throw. Nil: any port the kernel picks. Kept across
        /// `restart()` (the same sockets).
        public var portRange: ClosedRange<UInt16>?
        /// Our ufrag and password; nil lets libnice generate them (4 and 22 random ice-chars).
        public var localCredentials: ICECredentials?
        /// Retransmissions of a connectivity check before it fails (`stun-max-retransmissions`,
        /// libnice's default 7, RFC 5389's Rc). With the 200 ms initial timeout, 7 gives up
        /// after about 39.5 s, 3 after about 3 s.
        public var checkRetransmissions: UInt32
        /// The first retransmission timeout of a check in milliseconds (`stun-initial-timeout`).
        public var checkInitialTimeoutMilliseconds: UInt32
        /// One line per event worth a log line (an mDNS candidate ignored, a peer-reflexive
        /// candidate learnt, ICE failed, consent lost). Called on the agent's GLib thread or in
        /// the call that caused it; must not block.
        public var log: @Sendable (String) -> Void

        public init(
            role: ICERole,
            localAddresses: [String] = [],
            stunServer: Server? = nil,
            turnServer: TURNServer? = nil,
            relayOnly: Bool = false,
            portRange: ClosedRange<UInt16>? = nil,
            localCredentials: ICECredentials? = nil,
            checkRetransmissions: UInt32 = 7,
            checkInitialTimeoutMilliseconds: UInt32 = 200,
            log: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.role = role
            self.localAddresses = localAddresses
            self.stunServer = stunServer
            self.turnServer = turnServer
            self.relayOnly = relayOnly
            self.portRange = portRange
            self.localCredentials = localCredentials
            self.checkRetransmissions = checkRetransmissions
            self.checkInitialTimeoutMilliseconds = checkInitialTimeoutMilliseconds
            self.log = log
        }

        func validate() throws {
            guard localAddresses.count <= ICEAgent.maximumLocalAddresses else {
                throw ICEError(
                    .invalidConfiguration,
                    "at most \(ICEAgent.maximumLocalAddresses) local addresses, not \(localAddresses.count)"
                )
            }
            for address in localAddresses where numericAddressFamily(address) == nil {
                throw ICEError(.invalidConfiguration, "local address '\(address)' is not an IPv4 or IPv6 literal")
            }
            guard (1...20).contains(checkRetransmissions), (50...5000).contains(checkInitialTimeoutMilliseconds)
            else {
                throw ICEError(.invalidConfiguration, "check retransmissions 1...20, initial timeout 50...5000 ms")
            }
            if let turnServer, turnServer.username.isEmpty || turnServer.password.isEmpty {
                throw ICEError(.invalidConfiguration, "a TURN server needs a user name and a password")
            }
            if relayOnly, turnServer == nil {
                throw ICEError(.invalidConfiguration, "a relay-only transport policy needs a TURN server")
            }
            // A `ClosedRange` has min ≤ max already; port 0 would mean "any port" to libnice.
            if let portRange, portRange.lowerBound == 0 {
                throw ICEError(
                    .invalidConfiguration,
                    "port range \(portRange.lowerBound)-\(portRange.upperBound) must start at 1 or above"
                )
            }
        }
    }

    /// A STUN server. libnice takes a numeric address; a name is resolved once, at `init`.
    public struct Server: Hashable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: UInt16

        public init(host: String, port: UInt16 = 3478) {
            self.host = host
            self.port = port
        }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// A TURN server over UDP (RFC 8656) with long-term credentials.
    public struct TURNServer: Hashable, Sendable, CustomStringConvertible {
        public var server: Server
        public var username: String
        public var password: String

        public init(server: Server, username: String, password: String) {
            self.server = server
            self.username = username
            self.password = password
        }

        /// The password is not printed.
        public var description: String { "turn:\(username)@\(server)" }
    }
}

/// AF_INET or AF_INET6 when `text` is a numeric address, else nil.
func numericAddressFamily(_ text: String) -> Int32? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 { return AF_INET }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 { return AF_INET6 }
    return nil
}

/// The first address `host` resolves to, as a numeric string (libnice's STUN and TURN settings
/// take only numeric addresses). Numeric input comes back unchanged without a lookup.
func resolveNumeric(_ host: String) throws -> String {
    if numericAddressFamily(host) != nil { return host }
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, nil, &hints, &list)
    defer { if let list { freeaddrinfo(list) } }
    var cursor = list
    while status == 0, let entry = cursor {
        var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        if getnameinfo(
            entry.pointee.ai_addr,
            entry.pointee.ai_addrlen,
            &name,
            socklen_t(name.count),
            nil,
            0,
            NI_NUMERICHOST
        )
            == 0
        {
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        cursor = entry.pointee.ai_next
    }
    throw ICEError(.unresolvable, "'\(host)' does not resolve (getaddrinfo \(status))")
}
