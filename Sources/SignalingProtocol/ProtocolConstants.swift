/// Numbers both ends of the signaling protocol must agree on (see Docs/signaling.md, "Framing").
public enum SignalingProtocol {
    /// The protocol version this code speaks; `join` carries it and the server refuses others.
    public static let version = 1

    /// The longest line either side accepts, in bytes, not counting the terminating `\n`.
    ///
    /// 64 KiB holds an SDP with room to spare while bounding what one peer can make the other buffer.
    public static let maxLineBytes = 65_536

    /// The longest SDP accepted in `publish` or `subscribe-answer`, in UTF-8 bytes.
    public static let maxSDPBytes = 32_768

    /// Checks an SDP the way every `sdp` and `offer` field is checked: at most ``maxSDPBytes``,
    /// starting with `v=0`, and shaped as RFC 8866 lines. For descriptions that reach the
    /// server another way (a WHEP `POST` body); `field` names it in the error.
    public static func validateSDP(_ sdp: String, field: String) throws(SignalingError) {
        do {
            _ = try FieldRules.sdp(sdp, at: [PathKey(field)])
        } catch let error as SignalingError {
            throw error
        } catch {
            throw SignalingError(.invalidField, "field \"\(field)\" is not an SDP")
        }
    }
}
