import CSRTP

/// One libsrtp session (`srtp_t`): protects outgoing or verifies incoming RTP and RTCP of any SSRC
/// under one master key (RFC 3711).
///
/// A session is one direction. Sending uses `ssrc_any_outbound`, so the audio and video streams of
/// one destination may share the session and its key: their SSRCs differ, which keeps their
/// keystreams apart (RFC 3711 §9.1), and it is what Janus's single `srtpcrypto` requires.
///
/// Threading: libsrtp keeps per-stream state (rollover counter, replay window, SRTCP index) inside
/// the `srtp_t` with no locking, so one session must be used by one task at a time. The class is
/// deliberately not `Sendable`: the compiler then lets a session move into one task or actor (for
/// example the sender actor of a destination) but not be shared by two.
///
/// Hot path: the `UnsafeMutableRawBufferPointer` methods work in place in a caller-owned buffer
/// and allocate nothing on success. The `[UInt8]` overloads are for tests and cold paths.
public final class SRTPSession {
    /// Which half of the traffic a session handles.
    public enum Direction: Sendable {
        /// Protects what we send (`srtp_protect`, `srtp_protect_rtcp`).
        case outbound
        /// Verifies and decrypts what we receive (`srtp_unprotect`, `srtp_unprotect_rtcp`).
        case inbound
    }

    public struct Configuration: Sendable, Equatable {
        /// RFC 3711 §3.3.2 replay window, in packets (libsrtp accepts 64...32767; its default is
        /// 128). We default to 1024 so that a packet resent on a NACK (which reuses its sequence
        /// number) is still inside a receiver's window after as many packets as a 1024-entry NACK
        /// history spans; the cost is 128 bytes of bitmap per stream.
        public var replayWindowSize: Int
        /// Lets `protect` accept a sequence number it has protected before. Only for resending an
        /// unchanged payload on NACK: re-protecting different bytes under the same index reuses
        /// keystream and breaks confidentiality. libsrtp's `allow_repeat_tx`.
        public var allowsRepeatedTransmission: Bool
        /// Only for `AES_CM_128_HMAC_SHA1_32`: tag SRTCP with 32 bits too. RFC 3711 §7.5 and
        /// RFC 5764 §4.1.2 keep SRTCP at 80 bits (our default), but ffmpeg 5.1 (libavformat/srtp.c)
        /// verifies SRTCP under this SDES name with a 32-bit tag and drops 80-bit-tagged sender
        /// reports and BYEs ("HMAC mismatch"). Set it when the receiver is ffmpeg.
        public var usesShortSRTCPTagForSHA1_32: Bool

        public init(
            replayWindowSize: Int = 1024,
            allowsRepeatedTransmission: Bool = false,
            usesShortSRTCPTagForSHA1_32: Bool = false
        ) {
            self.replayWindowSize = replayWindowSize
            self.allowsRepeatedTransmission = allowsRepeatedTransmission
            self.usesShortSRTCPTagForSHA1_32 = usesShortSRTCPTagForSHA1_32
        }
    }

    /// What protects and verifies AES-CM packets (libsrtp2 on Nettle, normally), for logs and
    /// benchmark reports; initialises libsrtp if no session has yet.
    public static var cryptoImplementation: String {
        _ = try? SRTPLibrary.ensureInitialized()
        return SRTPLibrary.cryptoImplementation
    }

    /// Whether AES-CM and HMAC-SHA1 run on Nettle rather than libsrtp2's own build (NSS on
    /// Debian, about five times slower per packet).
    public static var usesNettle: Bool {
        _ = try? SRTPLibrary.ensureInitialized()
        return SRTPLibrary.usesNettle
    }

    /// Largest packet accepted: a UDP datagram cannot carry more.
    public static let maximumPacketLength = 65_535
    private static let minimumRTPLength = 12
    private static let minimumRTCPLength = 8

    public let suite: SRTPSuite
    public let direction: Direction
    public let configuration: Configuration
    private let handle: OpaquePointer

    /// Bytes `protect` appends; keep this much room after every RTP packet.
    public var rtpTrailerLength: Int { suite.rtpTrailerLength }
    /// Bytes `protectRTCP` appends; keep this much room after every RTCP packet.
    public var rtcpTrailerLength: Int {
        shortensSRTCPTag ? 4 + suite.rtpAuthTagLength : suite.rtcpTrailerLength
    }

    private var shortensSRTCPTag: Bool {
        suite == .aesCM128HmacSHA1_32 && configuration.usesShortSRTCPTagForSHA1_32
    }

    public init(keys: SRTPKeyMaterial, direction: Direction, configuration: Configuration = Configuration()) throws {
        guard (64...32_767).contains(configuration.replayWindowSize) else {
            throw SRTPError(
                code: .invalidConfiguration,
                message: "replay window size must be 64...32767 packets, got \(configuration.replayWindowSize)"
            )
        }
        try SRTPLibrary.ensureInitialized()

        var policy = srtp_policy_t()
        keys.suite.apply(rtp: &policy.rtp, rtcp: &policy.rtcp)
        if keys.suite == .aesCM128HmacSHA1_32 && configuration.usesShortSRTCPTagForSHA1_32 {
            rtc_srtp_policy_aes_cm_128_hmac_sha1_32(&policy.rtcp)
        }
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(configuration.replayWindowSize)
        policy.allow_repeat_tx = configuration.allowsRepeatedTransmission ? 1 : 0
        policy.next = nil

        // libsrtp copies the key into its own contexts during srtp_create (and zeroes them in
        // srtp_dealloc); our temporary copy is wiped straight after.
        var key = keys.keyAndSalt
        var created: srtp_t? = nil
        let status = key.withUnsafeMutableBufferPointer { keyBuffer in
            policy.key = keyBuffer.baseAddress
            defer { policy.key = nil }
            return srtp_create(&created, &policy)
        }
        for index in key.indices { key[index] = 0 }
        guard status == srtp_err_status_ok, let session = created else {
            throw SRTPError(status: status, operation: "srtp_create (\(keys.suite.sdpName))")
        }
        self.handle = session
        self.suite = keys.suite
        self.direction = direction
        self.configuration = configuration
    }

    deinit {
        srtp_dealloc(handle)
    }

    // MARK: In place (hot path)

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place (RFC 3711 §3.3)
    /// and returns the SRTP length, `length + rtpTrailerLength`. The buffer must hold at least that
    /// many bytes; it is checked and never overrun.
    public func protect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws -> Int {
        try transform(
            buffer,
            length,
            .outbound,
            "SRTP protect",
            Self.minimumRTPLength,
            rtpTrailerLength,
            "RTP",
            srtp_protect
        )
    }

    /// Encrypts and authenticates an RTCP compound packet in place (RFC 3711 §3.4) and returns the
    /// SRTCP length, `length + rtcpTrailerLength`.
    public func protectRTCP(buffer: UnsafeMutableRawBufferPointer, length: Int) throws -> Int {
        try transform(
            buffer,
            length,
            .outbound,
            "SRTCP protect",
            Self.minimumRTCPLength,
            rtcpTrailerLength,
            "RTCP",
            srtp_protect_rtcp
        )
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0..<length]` in place and returns the RTP
    /// length. Throws `authenticationFailed`, `replayed` or `replayTooOld` for packets to drop.
    public func unprotect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws -> Int {
        try transform(buffer, length, .inbound, "SRTP unprotect", Self.minimumRTPLength, 0, "SRTP", srtp_unprotect)
    }

    /// Verifies and decrypts an SRTCP packet in place and returns the RTCP length.
    public func unprotectRTCP(buffer: UnsafeMutableRawBufferPointer, length: Int) throws -> Int {
        try transform(
            buffer,
            length,
            .inbound,
            "SRTCP unprotect",
            Self.minimumRTCPLength,
            0,
            "SRTCP",
            srtp_unprotect_rtcp
        )
    }

    /// The one path all four take: right direction, room checked before libsrtp touches the
    /// buffer, then the in-place call, its status surfaced by name.
    private func transform(
        _ buffer: UnsafeMutableRawBufferPointer,
        _ length: Int,
        _ expected: Direction,
        _ operation: String,
        _ minimum: Int,
        _ trailer: Int,
        _ kind: String,
        _ call: (srtp_t?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t
    ) throws -> Int {
        try require(expected, for: operation)
        try checkRoom(buffer, length: length, minimum: minimum, trailer: trailer, kind: kind)
        var octets = Int32(length)
        let status = call(handle, buffer.baseAddress, &octets)
        guard status == srtp_err_status_ok else { throw SRTPError(status: status, operation: operation) }
        return Int(octets)
    }

    // MARK: Checks

    /// libsrtp would happily protect in either direction (it only raises an SSRC-collision event),
    /// so a session used the wrong way round is caught here.
    private func require(_ expected: Direction, for operation: String) throws {
        guard direction == expected else {
            throw SRTPError(
                code: .wrongDirection,
                message: "\(operation) needs an \(expected) session, this one is \(direction)"
            )
        }
    }

    private func checkRoom(
        _ buffer: UnsafeMutableRawBufferPointer,
        length: Int,
        minimum: Int,
        trailer: Int,
        kind: String
    ) throws {
        guard length >= minimum else {
            throw SRTPError(
                code: .packetTooShort,
                message: "\(kind) packet of \(length) bytes is shorter than the minimum \(minimum)"
            )
        }
        guard length <= Self.maximumPacketLength else {
            throw SRTPError(
                code: .bufferTooSmall,
                message: "\(kind) packet of \(length) bytes is larger than a UDP datagram"
            )
        }
        guard buffer.count >= length + trailer else {
            throw SRTPError(
                code: .bufferTooSmall,
                message: "buffer of \(buffer.count) bytes cannot hold a \(length)-byte \(kind) packet"
                    + (trailer > 0 ? " plus its \(trailer)-byte trailer" : "")
            )
        }
    }
}
