import Ingest

/// libFuzzer entry for the capture socket's parser (Docs/ingest.md): any bytes may be refused,
/// but nothing may crash, and whatever parses must serialize to bytes that parse again and
/// serialize to the very same bytes (a stable round trip). A violation stops the fuzzer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIngestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parser = IngestParser()
    guard let (message, length) = try? parser.parse(bytes) else { return 0 }
    guard length > 0, length <= bytes.count else { fatalError("parse consumed \(length) of \(bytes.count) bytes") }
    do {
        let written = try IngestSerializer.bytes(of: message)
        let (again, againLength) = try parser.parse(written)
        guard againLength == written.count else { fatalError("re-parse consumed \(againLength) of \(written.count)") }
        guard try IngestSerializer.bytes(of: again) == written else { fatalError("serializing is not stable") }
    } catch {
        fatalError("a parsed message did not serialize and parse back: \(error)")
    }
    return 0
}
