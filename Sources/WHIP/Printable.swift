/// Text from the network made fit for one log line: printable ASCII only, whitespace runs folded
/// into one space, cut to a length.
enum Printable {
    /// Control bytes become spaces and non-ASCII characters `?`, so a hostile server cannot forge log
    /// lines or terminal escapes through an error message.
    static func text(_ bytes: some Sequence<UInt8>, limit: Int) -> String {
        var result: [UInt8] = []
        var pendingSpace = false
        for byte in bytes {
            let mapped: UInt8
            switch byte {
            case 0x21...0x7E: mapped = byte
            case 0x80...0xBF: continue  // a UTF-8 continuation byte: its lead byte already gave `?`
            case 0xC0...0xFF: mapped = UInt8(ascii: "?")
            default:
                pendingSpace = !result.isEmpty
                continue
            }
            let needed = pendingSpace ? 2 : 1
            guard result.count + needed <= limit else {
                return String(decoding: result, as: UTF8.self) + "..."
            }
            if pendingSpace {
                result.append(UInt8(ascii: " "))
                pendingSpace = false
            }
            result.append(mapped)
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func text(_ string: String, limit: Int) -> String {
        text(string.utf8, limit: limit)
    }
}
