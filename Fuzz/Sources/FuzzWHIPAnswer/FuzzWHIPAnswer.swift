import JSEP
import SDP
import WHIP

/// Our offers, fixed so a finding replays exactly: one stream, and three simulcast layers.
private let offer = makeOffer(simulcast: nil)
private let simulcastOffer = makeOffer(simulcast: [
    SimulcastLayer(rid: "f", ssrc: 1, retransmissionSSRC: 2),
    SimulcastLayer(rid: "l", ssrc: 4, retransmissionSSRC: 5),
    SimulcastLayer(rid: "q", ssrc: 6, retransmissionSSRC: 7),
])

private func makeOffer(simulcast: [SimulcastLayer]?) -> PublishOffer {
    do {
        return try PublishOffer(
            PublishOffer.Configuration(
                ice: try ICECredentials(ufrag: "fUzZ", password: "fuzzPassword0123456789ab"),
                fingerprint: try CertificateFingerprint(
                    attributeValue:
                        "sha-256 4F:03:A0:60:B7:EB:03:29:72:DC:B3:27:F2:C9:89:B1:4D:5E:73:C3:5B:3D:59:28:A6:F8:75:CA:39:C1:59:BA"
                ),
                cname: "fuzz",
                streamID: "s",
                video: .init(ssrc: 1, retransmissionSSRC: 2, trackID: "v", simulcast: simulcast),
                audio: .init(ssrc: 3, trackID: "a"),
                origin: SDPOrigin(sessionID: 1)
            )
        )
    } catch {
        fatalError("fuzz offer: \(error)")
    }
}

/// libFuzzer entry for what a WHIP endpoint sends back (RFC 9725 §4.2, §4.6): the bytes up to the
/// first NUL are `Link` header values (one per line), the rest is the answer SDP; all of the
/// bytes are also read as an ICE restart's answer fragment (RFC 9725 §4.3.2).
///
/// Invariants: Link parsing never crashes, keeps at most 16 servers, each with a stun/stuns/turn/
/// turns scheme, a host and a port; an answer is refused only with a bounded printable
/// `JSEPError` whose line (if any) exists; an accepted answer uses our payload types (H.264 96,
/// RTX 97 or none, Opus 111 or none), leaves us a DTLS role (active or passive) and has ICE
/// credentials and a sha-256 fingerprint. The same answer is also checked against the simulcast
/// offer: accepted, it takes one to three of our layers (only `f` without `a=simulcast`), each
/// once, and keeps our stream-id extension ids or none. A violation stops the fuzzer (that is a
/// finding).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHIPAnswer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? 0
    let links = bytes[..<split].split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
    checkLinks(links)
    checkFragment(String(decoding: bytes, as: UTF8.self))
    let sdp = Array(bytes[(split < bytes.count && bytes[split] == 0 ? split + 1 : split)...])
    checkAnswer(sdp, to: offer)
    if let video = checkAnswer(sdp, to: simulcastOffer)?.video {
        checkSimulcast(video)
    }
    return 0
}

/// RFC 8853 as the simulcast offer put it: the answer's layers are ours, each once, and the
/// ids are the offered ones or nil.
private func checkSimulcast(_ video: PublishAnswer.Video) {
    guard let simulcast = video.simulcast else { fatalError("no simulcast outcome for a simulcast offer") }
    let rids = simulcast.rids
    guard (1...3).contains(rids.count), Set(rids).count == rids.count, Set(rids).isSubset(of: ["f", "l", "q"]) else {
        fatalError("accepted layers out of shape: \(rids)")
    }
    guard simulcast.isNegotiated || rids == ["f"] else { fatalError("one stream but not our first layer: \(rids)") }
    guard !simulcast.isNegotiated || video.ridHeaderExtensionID == 10 else {
        fatalError("simulcast agreed without the rid extension")
    }
    guard [nil, 4].contains(video.midHeaderExtensionID), [nil, 10].contains(video.ridHeaderExtensionID),
        [nil, 11].contains(video.repairedRIDHeaderExtensionID)
    else { fatalError("a stream-id extension under an id we did not offer") }
}

/// The answer `sdp` to `offer`: refused only with a bounded printable `JSEPError` whose line
/// exists, or accepted with our payload types, a DTLS role, ICE credentials and a checked
/// fingerprint.
@discardableResult
private func checkAnswer(_ sdp: [UInt8], to offer: PublishOffer) -> PublishAnswer? {
    let answer: PublishAnswer
    do {
        answer = try PublishAnswer(parsing: String(decoding: sdp, as: UTF8.self), answering: offer)
    } catch let error as JSEPError {
        guard !error.reason.isEmpty, error.reason.utf8.count <= JSEPError.maximumReasonBytes,
            error.reason.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) })
        else { fatalError("reason out of shape: \(error)") }
        if let line = error.line {
            // Bytes, not Characters: "\r\n" is one Character and would not split on "\n".
            let lines = sdp.split(separator: 0x0A, omittingEmptySubsequences: false).count
            guard line >= 1, line <= lines else { fatalError("error names line \(line) of \(lines)") }
        }
        return nil
    } catch {
        fatalError("a non-JSEP error: \(error)")
    }
    guard let video = answer.video, video.payloadType == PublishOffer.videoPayloadType else {
        fatalError("accepted without our H.264 payload type")
    }
    guard video.retransmissionPayloadType == nil || video.retransmissionPayloadType == 97 else {
        fatalError("accepted an RTX payload type we did not offer")
    }
    guard answer.audio == nil || answer.audio?.payloadType == PublishOffer.audioPayloadType else {
        fatalError("accepted an audio payload type we did not offer")
    }
    guard answer.localSetup == .active || answer.localSetup == .passive else { fatalError("no DTLS role") }
    guard !answer.remote.ice.ufrag.isEmpty, !answer.remote.ice.password.isEmpty else {
        fatalError("no ICE credentials")
    }
    guard
        answer.remote.fingerprints.contains(where: {
            $0.hashFunction == .sha256 || $0.hashFunction == .sha384 || $0.hashFunction == .sha512
        })
    else {
        fatalError("accepted without a checked fingerprint")
    }
    return answer
}

private func checkLinks(_ values: [String]) {
    let (servers, _) = WHIPLinkHeader.iceServers(values)
    guard servers.count <= 16 else { fatalError("\(servers.count) ICE servers kept") }
    for server in servers {
        guard ["stun", "stuns", "turn", "turns"].contains(server.scheme), !server.host.isEmpty, server.port > 0 else {
            fatalError("kept an ICE server out of shape: \(server)")
        }
    }
}

/// The same bytes as an ICE restart's answer fragment (RFC 8840 §9): refused only with a bounded
/// printable `JSEPError`; what is read writes and reads back the same.
private func checkFragment(_ text: String) {
    let fragment: TrickleFragment
    do {
        fragment = try TrickleFragment(parsing: text)
    } catch let error as JSEPError {
        guard !error.reason.isEmpty, error.reason.utf8.count <= JSEPError.maximumReasonBytes else {
            fatalError("fragment error out of shape: \(error)")
        }
        return
    } catch {
        fatalError("a fragment threw a non-JSEP error: \(error)")
    }
    guard fragment.candidates.count <= TrickleFragment.maximumCandidates else { fatalError("too many candidates kept") }
    let written = fragment.text(bundle: ["0"], firstMedia: "video 9 UDP/TLS/RTP/SAVPF 96")
    guard (try? TrickleFragment(parsing: written)) == fragment else {
        fatalError("a fragment does not read back as written: \(written)")
    }
}
