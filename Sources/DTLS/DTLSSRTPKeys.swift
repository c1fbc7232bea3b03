import SRTP

/// The SRTP master keys a DTLS-SRTP handshake produced: one per direction.
///
/// Unlike SDES, where one `a=crypto` key serves a destination, DTLS-SRTP gives each side its own
/// write key (RFC 5764 §4.2). `local` protects what we send (`SRTPSession(keys: local, direction:
/// .outbound)`), `remote` verifies what the peer sends (`.inbound`). Both print redacted, like
/// every `SRTPKeyMaterial`.
public struct DTLSSRTPKeys: Sendable, Equatable {
    public let profile: DTLSSRTPProfile
    /// Our write key and salt: the client's half when we are the DTLS client.
    public let local: SRTPKeyMaterial
    /// The peer's write key and salt.
    public let remote: SRTPKeyMaterial

    /// The label RFC 5764 §4.2 registers for the RFC 5705 exporter.
    public static let exporterLabel = "EXTRACTOR-dtls_srtp"

    /// RFC 5764 §4.2: splits the exporter's output for `profile` into the two directions.
    ///
    ///     2 * (SRTPSecurityParams.master_key_len + SRTPSecurityParams.master_salt_len) bytes
    ///     of data are exported ... split up as:
    ///
    ///         client_write_SRTP_master_key[SRTPSecurityParams.master_key_len];
    ///         server_write_SRTP_master_key[SRTPSecurityParams.master_key_len];
    ///         client_write_SRTP_master_salt[SRTPSecurityParams.master_salt_len];
    ///         server_write_SRTP_master_salt[SRTPSecurityParams.master_salt_len];
    ///
    /// Key and salt lengths: 16 and 14 for AES_CM_128_HMAC_SHA1_80 (RFC 5764 §4.1.2), 16 and 12
    /// for AEAD_AES_128_GCM (RFC 7714 §12). The client writes with the client half.
    public init(exportedKeyingMaterial exported: [UInt8], profile: DTLSSRTPProfile, role: DTLSRole) throws {
        guard exported.count == profile.exportedLength else {
            throw DTLSError(
                .keyExportFailed,
                "\(profile) needs \(profile.exportedLength) exported bytes, got \(exported.count)"
            )
        }
        let keyLength = profile.suite.masterKeyLength
        let saltLength = profile.suite.masterSaltLength
        let clientKey = exported[0..<keyLength]
        let serverKey = exported[keyLength..<2 * keyLength]
        let clientSalt = exported[2 * keyLength..<2 * keyLength + saltLength]
        let serverSalt = exported[2 * keyLength + saltLength..<2 * (keyLength + saltLength)]
        let client = try SRTPKeyMaterial(
            suite: profile.suite,
            masterKey: Array(clientKey),
            masterSalt: Array(clientSalt)
        )
        let server = try SRTPKeyMaterial(
            suite: profile.suite,
            masterKey: Array(serverKey),
            masterSalt: Array(serverSalt)
        )
        self.profile = profile
        self.local = role == .client ? client : server
        self.remote = role == .client ? server : client
    }
}

extension DTLSSRTPKeys: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "DTLSSRTPKeys(\(profile), local and remote <redacted>)" }
    public var debugDescription: String { description }
    /// `dump()` and reflection-based printers see the profile only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["profile": profile, "local": "<redacted>", "remote": "<redacted>"],
            displayStyle: .struct
        )
    }
}
