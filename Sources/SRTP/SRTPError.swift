import CSRTP

/// Why an SRTP operation failed.
///
/// Failures reported by libsrtp carry the library's own status name (`srtp_err_status_auth_fail`,
/// `srtp_err_status_replay_fail`, ...) as their code name, so a log line or a test names the exact
/// libsrtp condition instead of a bare number. Failures detected before libsrtp is called (a buffer
/// without room for the trailer, a key of the wrong length) have codes of their own.
public struct SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An extensible error code. Compare against the static members; `name` is stable text.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        init(_ name: String) { self.name = name }

        public var description: String { name }

        /// libsrtp: the authentication tag did not verify (altered packet or wrong key).
        public static let authenticationFailed = Code("srtp_err_status_auth_fail")
        /// libsrtp: the packet index was already seen inside the replay window (RFC 3711 §3.3.2).
        public static let replayed = Code("srtp_err_status_replay_fail")
        /// libsrtp: the packet index is older than the replay window reaches.
        public static let replayTooOld = Code("srtp_err_status_replay_old")
        /// libsrtp: a parameter was rejected (for example a malformed RTP header).
        public static let badParameter = Code("srtp_err_status_bad_param")
        /// libsrtp: the packet could not be parsed.
        public static let parseError = Code("srtp_err_status_parse_err")

        /// The caller's buffer has no room for the SRTP/SRTCP trailer, or `length` exceeds it.
        public static let bufferTooSmall = Code("buffer_too_small")
        /// The packet is shorter than the smallest RTP/RTCP (or SRTP/SRTCP) packet.
        public static let packetTooShort = Code("packet_too_short")
        /// Key and salt bytes do not have the lengths the suite requires.
        public static let invalidKeyMaterial = Code("invalid_key_material")
        /// An RFC 4568 `inline:` value is not well-formed base64 of the right length.
        public static let invalidInlineKey = Code("invalid_inline_key")
        /// A session configuration value is out of range.
        public static let invalidConfiguration = Code("invalid_configuration")
        /// `protect` called on a receiving session or `unprotect` on a sending one.
        public static let wrongDirection = Code("wrong_direction")
    }

    public var code: Code
    public var message: String
    /// The raw `srtp_err_status_t` value when libsrtp reported the failure, for diagnostics.
    public var libsrtpStatus: Int32?

    public init(code: Code, message: String, libsrtpStatus: Int32? = nil) {
        self.code = code
        self.message = message
        self.libsrtpStatus = libsrtpStatus
    }

    public var description: String { "SRTPError(\(code.name)): \(message)" }

    /// Wraps a libsrtp status; `operation` says what was attempted, for the message.
    init(status: srtp_err_status_t, operation: String) {
        let raw = Int32(bitPattern: UInt32(truncatingIfNeeded: status.rawValue))
        let name = SRTPError.statusName(raw)
        self.init(
            code: Code(name),
            message: "\(operation) failed: \(name) (\(SRTPError.statusMeaning(raw)))",
            libsrtpStatus: raw
        )
    }

    /// The enumerator names of `srtp_err_status_t` in libsrtp 2.x (srtp2/srtp.h), indexed by value.
    private static let statusNames: [String] = [
        "ok", "fail", "bad_param", "alloc_fail", "dealloc_fail", "init_fail", "terminus", "auth_fail",
        "cipher_fail", "replay_fail", "replay_old", "algo_fail", "no_such_op", "no_ctx", "cant_check",
        "key_expired", "socket_err", "signal_err", "nonce_bad", "read_fail", "write_fail", "parse_err",
        "encode_err", "semaphore_err", "pfkey_err", "bad_mki", "pkt_idx_old", "pkt_idx_adv",
    ]

    static func statusName(_ raw: Int32) -> String {
        guard raw >= 0, Int(raw) < statusNames.count else { return "srtp_err_status_unknown_\(raw)" }
        return "srtp_err_status_" + statusNames[Int(raw)]
    }

    private static func statusMeaning(_ raw: Int32) -> String {
        switch raw {
        case 7: return "authentication failed: the packet was altered or the key is wrong"
        case 9: return "replayed packet: this index was already received"
        case 10: return "packet index older than the replay window"
        case 2: return "libsrtp rejected a parameter"
        case 21: return "malformed packet"
        case 15: return "the master key reached its lifetime limit"
        default: return "libsrtp status \(raw)"
        }
    }
}
