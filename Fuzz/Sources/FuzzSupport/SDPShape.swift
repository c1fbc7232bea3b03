import SignalingProtocol

/// What `SignalingProtocol.validateSDP` (and every `sdp` and `offer` field of the line protocol)
/// accepts as an SDP, restated from Docs/signaling.md and RFC 8866 §5 to compare it against:
/// at most `SignalingProtocol.maxSDPBytes` UTF-8 bytes; the first three characters `v=0`; then
/// lines, each ended by CRLF or LF (the last may lack its end), each `<type>=<value>` with a
/// lower-case letter as type, no control character (below 0x20, or 0x7F) in the value but a
/// tab, no carriage return but the one before a line's LF, and no empty line.
public enum SDPShape {
    /// `FieldRules.sdpShapeProblem` takes a line of just a type letter when LF alone ends it
    /// (`v=0\nx\n`), though it refuses the same line ended by CRLF or by the end of the text
    /// (it checks for the `=` only when a second byte comes). While `true`, such a line is
    /// accepted here too; `false` expects the rule (a finding of 2026-11-28, Docs/fuzzing.md).
    public static let typeLetterLineAccepted = false

    /// Why `text` is no SDP by the rule, or nil.
    public static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count <= SignalingProtocol.maxSDPBytes else {
            return "longer than \(SignalingProtocol.maxSDPBytes)"
        }
        guard text.prefix(3) == "v=0" else { return "not starting with v=0" }
        let segments = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let terminated = index < segments.count - 1
            if !terminated, segment.isEmpty { break }  // the text ends with its last line's LF
            var line = segment[...]
            if terminated, line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let number = index + 1
            guard let type = line.first else { return "line \(number) is empty" }
            guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(type) else { return "line \(number) has no type" }
            if line.count == 1, terminated, segment.count == 1, typeLetterLineAccepted { continue }
            guard line.count >= 2, line[line.startIndex + 1] == UInt8(ascii: "=") else {
                return "line \(number) has no ="
            }
            for byte in line.dropFirst(2) where byte < 0x20 && byte != 0x09 || byte == 0x7F {
                return "line \(number) has control byte \(byte)"
            }
        }
        return nil
    }
}
