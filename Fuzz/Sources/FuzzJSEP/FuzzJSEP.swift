import Glibc
import JSEP
import SDP

/// Our side of every answer: fixed, so a finding replays exactly.
private let configuration: WebRTCAnswer.Configuration = {
    do {
        return WebRTCAnswer.Configuration(
            ice: try ICECredentials(ufrag: "fUzZ", password: "fuzzPassword0123456789ab"),
            fingerprint: try CertificateFingerprint(
                attributeValue:
                    "sha-256 4F:03:A0:60:B7:EB:03:29:72:DC:B3:27:F2:C9:89:B1:4D:5E:73:C3:5B:3D:59:28:A6:F8:75:CA:39:C1:59:BA"
            ),
            cname: "fuzz",
            streamID: "s",
            video: .init(ssrc: 1, retransmissionSSRC: 2, trackID: "v"),
            audio: .init(ssrc: 3, trackID: "a"),
            candidates: [.host(try SDPAddress("127.0.0.9"), port: 9999)],
            origin: SDPOrigin(sessionID: 1)
        )
    } catch {
        fatalError("fuzz configuration: \(error)")
    }
}()

/// libFuzzer entry: any bytes may be refused, but only with a bounded, printable `JSEPError`
/// whose line (if any) exists. Whatever is answered must write SDP that both parsers read back,
/// with one m-section per offered one (same mids, same order), the BUNDLE group the result
/// reports, sendonly and rtcp-mux on every accepted section, no payload type or rtcp-fb the
/// offer did not have for that section. A violation stops the fuzzer (that is a finding).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSEP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let offer: WebRTCOffer
    do {
        offer = try WebRTCOffer(parsing: bytes)
    } catch let error as JSEPError {
        checkShape(error)
        if let line = error.line {
            let lines = lineCount(bytes)
            guard line >= 1, line <= lines, error.reason.hasPrefix("line \(line) (") else {
                fatalError("parse error names line \(line) of \(lines): \(error)")
            }
        }
        return 0
    } catch {
        fatalError("parsing threw a non-JSEP error: \(error)")
    }
    let answer: WebRTCAnswer
    do {
        answer = try WebRTCAnswer(answering: offer, configuration: configuration)
    } catch let error as JSEPError {
        checkShape(error)
        guard error.line == nil, error.code != .invalidConfiguration else { fatalError("bad rejection: \(error)") }
        return 0
    } catch {
        fatalError("answering threw a non-JSEP error: \(error)")
    }
    checkAnswer(answer, offer)
    return 0
}

private func checkShape(_ error: JSEPError) {
    guard !error.reason.isEmpty, error.reason.utf8.count <= JSEPError.maximumReasonBytes,
        error.reason.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) })
    else { fatalError("reason out of shape: \(error)") }
}

private func checkAnswer(_ answer: WebRTCAnswer, _ offer: WebRTCOffer) {
    guard let strict = try? SDPParser.parse(answer.sdp), strict == answer.description else {
        fatalError("the answer does not parse back strictly to its description")
    }
    guard let reparsed = try? WebRTCOffer(parsing: answer.sdp) else {
        fatalError("the answer does not parse as a WebRTC description")
    }
    guard reparsed.sections.map(\.mid) == offer.sections.map(\.mid),
        reparsed.sections.map(\.kind) == offer.sections.map(\.kind)
    else { fatalError("m-sections differ from the offer's") }
    guard reparsed.bundleGroup?.mids == answer.bundle.mids else { fatalError("BUNDLE group differs") }
    for (offered, answered) in zip(offer.sections, reparsed.sections) {
        guard let mid = answered.mid, answer.bundle.mids.contains(mid) else {
            guard answered.media.port == 0 else { fatalError("unbundled section with a port") }
            continue
        }
        guard answered.direction == .sendonly, answered.media.rtcpMux, answered.setup == answer.localSetup,
            answered.rtcpReducedSize == offered.rtcpReducedSize
        else { fatalError("accepted section \(answered.index) lacks sendonly, rtcp-mux or setup") }
        for format in answered.media.formats where offered.media.format(payloadType: format.payloadType) == nil {
            fatalError("payload type \(format.payloadType) was not offered")
        }
        // RFC 4585's rtcp-fb values are ABNF literals, which are case-insensitive (RFC 5234
        // §2.3): an offered `nacK` is `nack`, and the answer may write it in its own case.
        for feedback in answered.media.rtcpFeedback {
            let offeredIt = offered.media.rtcpFeedback.contains {
                feedback.payloadType.map($0.applies(to:)) == true && $0.type.lowercased() == feedback.type.lowercased()
                    && $0.parameter?.lowercased() == feedback.parameter?.lowercased()
            }
            guard offeredIt else { fatalError("rtcp-fb \(feedback.type) was not offered") }
        }
    }
}

/// How many lines `bytes` has when split at every LF (empty ones counted): one more than its LFs.
/// `memchr` is not instrumented, so counting costs no comparison hook per byte.
private func lineCount(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { buffer in
        guard var at = buffer.baseAddress else { return 1 }
        var left = buffer.count
        var count = 1
        while left > 0, let found = memchr(at, 0x0A, left) {
            let next = UnsafeRawPointer(found) + 1
            left -= next - at
            at = next
            count += 1
        }
        return count
    }
}
