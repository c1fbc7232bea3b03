import Crypto
import SignalingProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The join token of a server started with a secret: `v1.<expiry>.<signature>`.
///
/// `signature` is base64url (RFC 4648 §5, no padding) of HMAC-SHA256 (RFC 2104) keyed with the
/// secret's UTF-8 bytes over the UTF-8 string `"v1\n" + room + "\n" + uid + "\n" + expiry`, where
/// `expiry` is the decimal Unix time in seconds after which the token is refused. Room and uid
/// cannot contain `\n`, so the input is unambiguous. Docs/signaling.md, "Tokens", is the spec.
public enum SignalingToken {
    public static let formatVersion = "v1"

    /// A token for `uid` in `room` that stops working at `expiry` (Unix seconds).
    public static func make(room: RoomID, uid: MemberID, expiry: Int64, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(signedText(room: room, uid: uid, expiry: expiry).utf8),
            using: SymmetricKey(data: Array(secret.utf8))
        )
        return "\(formatVersion).\(expiry).\(base64URL(Array(mac)))"
    }

    /// Throws ``SignalingError/Code/unauthorized`` with a message saying what is wrong.
    public static func verify(
        _ token: String,
        room: RoomID,
        uid: MemberID,
        secret: String,
        now: Int64
    ) throws(SignalingError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == formatVersion, parts[1].utf8.count <= 19,
            parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let expiry = Int64(parts[1]), let signature = decodeBase64URL(parts[2])
        else {
            throw SignalingError(.unauthorized, "token is malformed: expected v1.<expiry>.<signature>")
        }
        let valid = HMAC<SHA256>.isValidAuthenticationCode(
            signature,
            authenticating: Array(signedText(room: room, uid: uid, expiry: expiry).utf8),
            using: SymmetricKey(data: Array(secret.utf8))
        )
        guard valid else {
            throw SignalingError(
                .unauthorized,
                "token is not valid for room \"\(room)\" and uid \"\(uid)\" (wrong secret, or made for another room or uid)"
            )
        }
        guard now < expiry else {
            throw SignalingError(.unauthorized, "token expired at \(expiry) (Unix time); it is now \(now)")
        }
    }

    /// The exact bytes the signature covers.
    public static func signedText(room: RoomID, uid: MemberID, expiry: Int64) -> String {
        "\(formatVersion)\n\(room.rawValue)\n\(uid.rawValue)\n\(expiry)"
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" })
        return text
    }

    static func decodeBase64URL(_ text: Substring) -> [UInt8]? {
        // SHA-256 output is 32 bytes = 43 characters; anything longer is not ours.
        guard text.utf8.count <= 64 else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
