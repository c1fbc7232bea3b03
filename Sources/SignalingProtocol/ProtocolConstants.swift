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
}
