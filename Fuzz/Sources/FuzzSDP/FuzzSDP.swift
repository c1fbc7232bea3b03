import SDP

/// libFuzzer entry: any bytes may fail to parse, but whatever parses must write, parse back to the
/// same value, and write to the same text again. A violation stops the fuzzer (that is a finding).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let parsed = try? SDPParser.parse(bytes: bytes) else { return 0 }
    let text: String
    do {
        text = try SDPWriter.write(parsed)
    } catch {
        fatalError("a parsed description could not be written: \(error)")
    }
    do {
        let reparsed = try SDPParser.parse(text)
        guard reparsed == parsed else { fatalError("parse(write(parse(x))) != parse(x)") }
        guard try SDPWriter.write(reparsed) == text else { fatalError("writing is not stable") }
    } catch {
        fatalError("written text did not parse back: \(error)")
    }
    return 0
}
