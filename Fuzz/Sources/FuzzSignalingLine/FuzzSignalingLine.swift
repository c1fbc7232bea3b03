import Foundation
import FuzzSupport
import NIOCore
import SignalingProtocol

/// libFuzzer entry for the JSON-lines protocol (Docs/signaling.md, "Framing"), all through
/// SignalingProtocol's public API. The input: a control byte (its low six bits + 1, 1...64, are
/// the line limit for the framing check; its top two bits and the next byte can ask for the
/// line-limit check), a seed byte for the chunkings, then a byte stream.
///
/// - **Framing** (``Framing``): the stream through `SkippingLineDecoder` and through
///   `BoundedLineDecoder`, each fed in its own random chunking by NIO's
///   `NIOSingleStepByteToMessageProcessor` (as `ByteToMessageHandler` feeds them), against a
///   model: lines end at LF, a CR before it is dropped, an unterminated last line is a line, a
///   line (CR included) longer than the limit is over-long. Skipping never throws, returns the
///   model's lines and reports each over-long line as `.skipped` with its byte count, in order,
///   never holds more than the limit and consumes everything. Bounded returns the same lines up
///   to the first over-long one and then throws `line-too-long`, in the chunk in which the
///   line's first limit + 1 bytes have arrived (not earlier, not later), never holding more
///   than the limit; without an over-long line it returns all the lines and consumes everything.
/// - **Requests** (``Requests``): every line of the stream (whatever its length; a line the
///   input repeats once) through `SignalingCodec.decodeRequest` and `decodeServerLine`. A
///   failure carries a code and a message of 1...1024 UTF-8 bytes without control characters
///   (C0, DEL), a string `id` of at most 64 bytes. A request that decodes: each SDP field
///   (`stream.sdp`, `receive.offer`, `sdp`) passes `SignalingProtocol.validateSDP` and
///   ``SDPShape``, and has no control character but CR, LF and tab; `encodeLine` gives one line
///   (`\n` last, no byte below 0x20 before it) of at most 65,536 + 1 bytes, or throws
///   `line-too-long`; that line decodes back equal. A server line that decodes re-encodes and
///   decodes back equal.
/// - **SDP** (``SDPText``): the stream, when UTF-8, as an SDP: `validateSDP` refuses it exactly
///   when ``SDPShape`` (the rule restated) does, with `invalid-field` naming the field; when it
///   starts with `v=0`, a `publish` carrying it decodes exactly when it passes.
/// - **Line limit** (``LineLimit``, when the control byte's top bits are 11 and the seed byte's
///   top four bits are 1111): a `signal` whose line is 65,536 − 8 ... 65,536 + 7 bytes, its
///   payload a string of the stream's characters: `encodeLine` writes exactly the JSON
///   (sorted keys, slashes unescaped) and `\n` when that is at most 65,536 bytes, and throws
///   `line-too-long` otherwise; what it writes decodes back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignalingLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 2 else { return 0 }
    let control = data[0]
    let seed = data[1]
    let stream = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    let limit = Int(control & 0x3F) + 1
    let pieces = Framing.model(stream, limit: limit)
    Framing.check(stream, limit: limit, seed: UInt64(seed) << 32 | UInt64(size), expected: pieces)
    // The request checks are a function of the line's bytes alone, so a line seen before in
    // this input proves nothing new; grown inputs repeat lines (23,115 lines in a grown corpus of
    // 1,132 files, 11,195 of them new to their input), and each costs two to four JSON codings.
    var checked = Set<[UInt8]>()
    for line in Framing.lines(stream) where checked.insert(line).inserted {
        Requests.check(line)
    }
    if let text = String(validating: stream, as: UTF8.self) {
        SDPText.check(text)
    }
    if control >> 6 == 3, seed >> 4 == 0xF {
        LineLimit.check(stream, offset: Int(seed & 0x0F) - 8)
    }
    return 0
}

/// What a line decoder gives: a line (without its CR LF), or the length of an over-long one.
enum Piece: Equatable, CustomStringConvertible {
    case line([UInt8])
    case skipped(Int)

    var description: String {
        switch self {
        case .line(let bytes): "line(\(bytes.count) B)"
        case .skipped(let count): "skipped(\(count))"
        }
    }
}

enum Framing {
    /// The stream's lines as the model reads them: each with its start offset and its length
    /// before the LF (a CR before the LF included), and its bytes without that CR.
    static func segments(_ stream: [UInt8]) -> [(start: Int, length: Int, line: [UInt8])] {
        var result: [(start: Int, length: Int, line: [UInt8])] = []
        var start = 0
        for (index, byte) in stream.enumerated() where byte == UInt8(ascii: "\n") {
            result.append((start, index - start, stripCR(stream[start..<index])))
            start = index + 1
        }
        if start < stream.count {
            result.append((start, stream.count - start, stripCR(stream[start...])))
        }
        return result
    }

    static func lines(_ stream: [UInt8]) -> [[UInt8]] {
        segments(stream).map(\.line)
    }

    private static func stripCR(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        Array(bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes)
    }

    static func model(_ stream: [UInt8], limit: Int) -> [Piece] {
        segments(stream).map { $0.length > limit ? .skipped($0.length) : .line($0.line) }
    }

    static func check(_ stream: [UInt8], limit: Int, seed: UInt64, expected: [Piece]) {
        var random = SplitMix64(seed: seed)
        let skipping = NIOSingleStepByteToMessageProcessor(
            SkippingLineDecoder(maxLineBytes: limit),
            maximumBufferSize: limit
        )
        var got: [Piece] = []
        for chunk in chunks(of: stream, limit: limit, random: &random) {
            do {
                try skipping.process(buffer: ByteBuffer(bytes: chunk)) { got.append(Piece($0)) }
            } catch {
                fatalError("SkippingLineDecoder (limit \(limit)) threw \(error) after \(got)")
            }
        }
        do {
            try skipping.finishProcessing(seenEOF: true) { got.append(Piece($0)) }
        } catch {
            fatalError("SkippingLineDecoder (limit \(limit)) threw \(error) at the end after \(got)")
        }
        guard got == expected else {
            fatalError("SkippingLineDecoder (limit \(limit)) gave \(got), expected \(expected)")
        }
        guard skipping.unprocessedBytes == 0 else {
            fatalError("SkippingLineDecoder left \(skipping.unprocessedBytes) bytes")
        }

        // Bounded: the lines before the first over-long one, then `line-too-long` in the chunk
        // that brings that line's byte number limit + 1.
        let lines = expected.prefix { if case .line = $0 { true } else { false } }
        let firstLong = segments(stream).first { $0.length > limit }
        let bounded = NIOSingleStepByteToMessageProcessor(
            BoundedLineDecoder(maxLineBytes: limit),
            maximumBufferSize: limit
        )
        var boundedLines: [Piece] = []
        var fed = 0
        var threw = false
        for chunk in chunks(of: stream, limit: limit, random: &random) {
            fed += chunk.count
            do {
                try bounded.process(buffer: ByteBuffer(bytes: chunk)) {
                    boundedLines.append(.line(Array($0.readableBytesView)))
                }
            } catch let error as SignalingError where error.code == .lineTooLong {
                guard let long = firstLong else {
                    fatalError("BoundedLineDecoder threw \(error) without an over-long line")
                }
                let due = long.start + limit + 1
                guard fed >= due, fed - chunk.count < due else {
                    fatalError("BoundedLineDecoder (limit \(limit)) threw with \(fed) bytes fed; due at \(due)")
                }
                threw = true
                break
            } catch {
                fatalError("BoundedLineDecoder threw \(error)")
            }
        }
        if !threw {
            guard firstLong == nil else { fatalError("BoundedLineDecoder (limit \(limit)) took an over-long line") }
            do {
                try bounded.finishProcessing(seenEOF: true) { boundedLines.append(.line(Array($0.readableBytesView))) }
            } catch {
                fatalError("BoundedLineDecoder threw \(error) at the end")
            }
            guard bounded.unprocessedBytes == 0 else {
                fatalError("BoundedLineDecoder left \(bounded.unprocessedBytes) bytes")
            }
        }
        guard boundedLines == Array(lines) else {
            fatalError("BoundedLineDecoder (limit \(limit)) gave \(boundedLines), expected \(Array(lines))")
        }
    }

    /// The stream cut into reads: mostly 1...2 × limit + 1 bytes, sometimes all the rest.
    private static func chunks(of stream: [UInt8], limit: Int, random: inout SplitMix64) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var at = 0
        while at < stream.count {
            let draw = random.next()
            let count = draw & 7 == 0 ? stream.count - at : 1 + Int((draw >> 3) % UInt64(2 * limit + 1))
            let end = min(stream.count, at + count)
            result.append(stream[at..<end])
            at = end
        }
        return result
    }
}

extension Piece {
    init(_ decoded: DecodedLine) {
        switch decoded {
        case .line(let buffer): self = .line(Array(buffer.readableBytesView))
        case .skipped(let bytes): self = .skipped(bytes)
        }
    }
}

struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Error messages: a code and 1...1024 UTF-8 bytes without a control character (C0 or DEL, as
/// SignalingProtocol's own quoting escapes them).
func checkError(_ error: SignalingError, _ context: @autoclosure () -> String) {
    guard !error.code.rawValue.isEmpty, (1...1024).contains(error.message.utf8.count),
        !error.message.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else {
        fatalError(
            "\(context()): the error \(error.code) has a message of \(error.message.utf8.count) bytes: \(error.message.debugDescription.prefix(2000))"
        )
    }
}

enum Requests {
    static func check(_ line: [UInt8]) {
        checkRequest(line)
        checkServerLine(line)
    }

    static func checkRequest(_ line: [UInt8]) {
        switch SignalingCodec.decodeRequest(line) {
        case .failure(let failure):
            checkError(failure.error, "decodeRequest")
            if case .string(let id)? = failure.id, id.utf8.count > RequestID.maxStringBytes {
                fatalError("a failure echoes a \(id.utf8.count)-byte id")
            }
        case .success(let request):
            for (field, sdp) in sdpFields(of: request.message) {
                do throws(SignalingError) {
                    try SignalingProtocol.validateSDP(sdp, field: field)
                } catch {
                    fatalError("\(request.message.type): field \(field) decoded but validateSDP says \(error)")
                }
                if let problem = SDPShape.problem(sdp) {
                    fatalError(
                        "\(request.message.type): field \(field) decoded but \(problem): \(Array(sdp.utf8.prefix(300)))"
                    )
                }
                if sdp.unicodeScalars.contains(where: {
                    ($0.value < 0x20 && !"\r\n\t".unicodeScalars.contains($0)) || $0.value == 0x7F
                }) {
                    fatalError("\(request.message.type): field \(field) holds a control character")
                }
            }
            let encoded: [UInt8]
            do {
                encoded = try SignalingCodec.encodeLine(request)
            } catch let error as SignalingError where error.code == .lineTooLong {
                guard let json = try? LineLimit.json(request), json.count > SignalingProtocol.maxLineBytes else {
                    fatalError("encodeLine refused a request that fits: \(error)")
                }
                return
            } catch {
                fatalError("encodeLine threw \(error)")
            }
            checkLine(encoded, "encodeLine(\(request.message.type))")
            guard case .success(let again) = SignalingCodec.decodeRequest(encoded.dropLast()), again == request else {
                fatalError(
                    "\(request.message.type) does not decode back: \(SignalingCodec.decodeRequest(encoded.dropLast())) "
                        + "from \(String(decoding: encoded.prefix(400), as: UTF8.self))"
                )
            }
        }
    }

    static func checkServerLine(_ line: [UInt8]) {
        do throws(SignalingError) {
            guard let envelope = try SignalingCodec.decodeServerLine(line) else { return }
            let encoded: [UInt8]
            do {
                encoded = try SignalingCodec.encodeLine(envelope)
            } catch let error as SignalingError where error.code == .lineTooLong {
                return
            } catch {
                fatalError("encodeLine threw \(error)")
            }
            checkLine(encoded, "encodeLine(\(envelope.message.type))")
            let again: ServerEnvelope?
            do {
                again = try SignalingCodec.decodeServerLine(encoded.dropLast())
            } catch {
                fatalError("the server line \(envelope.message.type) does not decode back: \(error)")
            }
            guard again == envelope else {
                fatalError("the server line \(envelope.message.type) decodes back as \(String(describing: again))")
            }
        } catch {
            checkError(error, "decodeServerLine")
        }
    }

    /// One line: at most the limit and its `\n`, which is its only byte below 0x20.
    static func checkLine(_ encoded: [UInt8], _ what: @autoclosure () -> String) {
        guard encoded.count <= SignalingProtocol.maxLineBytes + 1, encoded.last == UInt8(ascii: "\n"),
            !encoded.dropLast().contains(where: { $0 < 0x20 })
        else {
            fatalError("\(what()) wrote \(encoded.count) bytes: not one line of at most the limit")
        }
    }

    static func sdpFields(of message: ClientMessage) -> [(String, String)] {
        switch message {
        case .publish(let publish): [("stream.sdp", publish.stream.sdp)]
        case .subscribe(let subscribe): subscribe.receive.offer.map { [("receive.offer", $0)] } ?? []
        case .subscribeAnswer(let answer): [("sdp", answer.sdp)]
        default: []
        }
    }
}

enum SDPText {
    static func check(_ text: String) {
        let problem = SDPShape.problem(text)
        do throws(SignalingError) {
            try SignalingProtocol.validateSDP(text, field: "sdp")
            guard problem == nil else {
                fatalError("validateSDP took an SDP that is \(problem!): \(Array(text.utf8.prefix(300)))")
            }
        } catch {
            guard problem != nil else {
                fatalError("validateSDP refused a good SDP (\(error)): \(Array(text.utf8.prefix(300)))")
            }
            guard error.code == .invalidField, error.message.hasPrefix("field \"sdp\" ") else {
                fatalError("validateSDP refused with \(error)")
            }
            checkError(error, "validateSDP")
        }
        // The same text in a publish, through the codec (only when it could pass: the other
        // texts are refused at their first bytes, and two JSON decodings per input cost).
        guard text.utf8.starts(with: "v=0".utf8) else { return }
        let publish = ClientRequest(
            id: .number(1),
            .publish(ClientMessage.Publish(stream: StreamDescription(kind: .screen, codecs: ["H264"], sdp: text)))
        )
        guard let line = try? SignalingCodec.encodeLine(publish) else { fatalError("cannot encode a publish") }
        switch SignalingCodec.decodeRequest(line.dropLast()) {
        case .success(let request):
            guard problem == nil else { fatalError("a publish whose SDP is \(problem!) decoded") }
            guard request == publish else { fatalError("a publish decoded as \(request)") }
        case .failure(let failure):
            guard problem != nil else { fatalError("a publish with a good SDP was refused: \(failure.error)") }
            guard failure.error.code == .invalidField, failure.error.message.contains("\"stream.sdp\""),
                failure.id == .number(1)
            else {
                fatalError("a publish with a bad SDP was refused with \(failure)")
            }
        }
    }
}

enum LineLimit {
    /// The JSON `encodeLine` is to write, without its `\n`.
    static func json(_ request: ClientRequest) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(request))
    }

    /// A signal's JSON for the payload `round.text` repeated `round.times` times and then
    /// `rest`, put together from `encode` of the empty payload (`empty`), of `round.text` and of
    /// `rest`: the escaped payload sits between the `"payload":"` and the `"` after it.
    static func composedJSON(
        empty: [UInt8],
        round: (text: String, times: Int),
        rest: String,
        encode: (String) -> [UInt8]
    ) -> [UInt8] {
        let key = Array(#""payload":""#.utf8)
        guard
            let start = (0...(empty.count - key.count)).first(where: {
                empty[$0..<$0 + key.count].elementsEqual(key)
            })
        else { fatalError("no payload in the empty signal's JSON") }
        let head = empty[..<(start + key.count)]
        let tail = empty[(start + key.count)...]
        func escaped(_ text: String) -> ArraySlice<UInt8> {
            guard !text.isEmpty else { return [] }
            let json = encode(text)
            guard json.count >= empty.count, json.starts(with: head), json.reversed().starts(with: tail.reversed())
            else { fatalError("a signal's JSON is not the empty one's with the payload inside") }
            return json[head.count..<(json.count - tail.count)]
        }
        let roundBytes = escaped(round.text)
        let restBytes = escaped(rest)
        var result: [UInt8] = []
        result.reserveCapacity(empty.count + roundBytes.count * round.times + restBytes.count)
        result += head
        for _ in 0..<round.times { result += roundBytes }
        result += restBytes
        result += tail
        return result
    }

    /// Whether the first `count` bytes of `a` and `b` are the same (`memcmp`: a 64 KiB compare
    /// in Swift goes through libFuzzer's comparison hook for every byte).
    static func sameBytes(_ a: [UInt8], _ b: [UInt8], count: Int) -> Bool {
        guard a.count >= count, b.count >= count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, count) == 0 } }
    }

    static func check(_ stream: [UInt8], offset: Int) {
        let decoded = String(decoding: stream, as: UTF8.self)
        let roundText = decoded.isEmpty ? "a" : decoded
        let scalars = Array(roundText.unicodeScalars)
        func request(_ text: String) -> ClientRequest {
            guard let to = try? MemberID(validating: "bob") else { fatalError("cannot name bob") }
            return ClientRequest(id: .string("limit"), .signal(ClientMessage.Signal(to: to, payload: .string(text))))
        }
        guard let empty = try? json(request("")) else { fatalError("cannot encode a signal") }
        let base = empty.count
        // Fill to about the limit + offset, counting what JSON's escapes cost: whole rounds of
        // the stream's characters, then as many more as it takes.
        let target = SignalingProtocol.maxLineBytes + offset - base
        let costs = scalars.map { scalar -> Int in
            switch scalar.value {
            case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: 2
            case 0..<0x20: 6
            default: UTF8.width(scalar)
            }
        }
        let round = costs.reduce(0, +)
        var text = String(repeating: roundText, count: target / round)
        var cost = target / round * round
        var rest = String.UnicodeScalarView()
        for (scalar, scalarCost) in zip(scalars, costs) where cost < target {
            rest.append(scalar)
            cost += scalarCost
        }
        text += String(rest)
        let signal = request(text)
        // The JSON `JSONEncoder` writes for the signal, from three small encodings instead of a
        // second one of 64 KiB: JSON escapes each character by itself, so it is the empty
        // signal's JSON with the payload's `""` holding the round's escaped text `target / round`
        // times and then the rest's.
        let expected = composedJSON(empty: empty, round: (text: roundText, times: target / round), rest: String(rest)) {
            guard let json = try? json(request($0)) else { fatalError("cannot encode a signal") }
            return json
        }
        do {
            let line = try SignalingCodec.encodeLine(signal)
            guard expected.count <= SignalingProtocol.maxLineBytes, line.count == expected.count + 1,
                line.last == UInt8(ascii: "\n"), sameBytes(line, expected, count: expected.count)
            else {
                fatalError("encodeLine wrote \(line.count) bytes for \(expected.count) bytes of JSON")
            }
            guard case .success(let again) = SignalingCodec.decodeRequest(line.dropLast()), again == signal else {
                fatalError("a \(line.count)-byte signal does not decode back")
            }
        } catch let error as SignalingError where error.code == .lineTooLong {
            guard expected.count > SignalingProtocol.maxLineBytes else {
                fatalError("encodeLine refused \(expected.count) bytes of JSON: \(error)")
            }
            checkError(error, "encodeLine")
        } catch {
            fatalError("encodeLine threw \(error)")
        }
    }
}
