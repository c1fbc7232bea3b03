import Capture
import Media

/// libFuzzer entry: any bytes (as UTF-8, lossily) as `--capture-region` and `--capture-window`
/// text.
///
/// Invariants: neither parser crashes; a region that parses has a positive size and offsets of
/// 0 or more, and its `WxH+X+Y` description parses back to the same rectangle; a window id that
/// parses is not 0, and its `0x` form parses back to the same id; every refusal is `badTarget`
/// and quotes the text it refused (compared as bytes: a leading combining mark joins the quote
/// before it into one `Character`, so `String.contains` would not find it).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaptureTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let rect = try CaptureTarget.parseRegion(text)
        guard rect.width > 0, rect.height > 0, rect.x >= 0, rect.y >= 0 else {
            fatalError("region '\(text)' parsed to \(rect)")
        }
        guard (try? CaptureTarget.parseRegion(rect.description)) == rect else {
            fatalError("region \(rect) does not parse back from '\(rect.description)'")
        }
    } catch {
        guard error.code == .badTarget, quotes(error.message, text) else {
            fatalError("region '\(text)' refused as \(error)")
        }
    }
    do {
        let window = try CaptureTarget.parseWindow(text)
        let hex = "0x" + String(window, radix: 16)
        guard window != 0, (try? CaptureTarget.parseWindow(hex)) == window else {
            fatalError("window '\(text)' parsed to \(window), which '\(hex)' does not give back")
        }
    } catch {
        guard error.code == .badTarget, quotes(error.message, text) else {
            fatalError("window '\(text)' refused as \(error)")
        }
    }
    return 0
}

/// Whether `message`'s UTF-8 holds `text`'s.
func quotes(_ message: String, _ text: String) -> Bool {
    let haystack = Array(message.utf8)
    let needle = Array(text.utf8)
    guard needle.count <= haystack.count else { return false }
    if needle.isEmpty { return true }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}
