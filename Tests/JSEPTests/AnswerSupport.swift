import JSEP
import SDP
import Testing

/// Our side of every answer in these tests, fixed so answers are byte-for-byte repeatable.
enum Publisher {
    static let fingerprint =
        "sha-256 4F:03:A0:60:B7:EB:03:29:72:DC:B3:27:F2:C9:89:B1:4D:5E:73:C3:5B:3D:59:28:A6:F8:75:CA:39:C1:59:BA"

    static func configuration(
        rtx: Bool = true,
        codecs: [VideoCodec] = [.h264],
        audio: Bool = true,
        setup: ConnectionSetup = .active,
        candidates: [ICECandidate] = []
    ) throws -> WebRTCAnswer.Configuration {
        WebRTCAnswer.Configuration(
            ice: try ICECredentials(ufrag: "pUbL", password: "publisherPassword0123456"),
            fingerprint: try CertificateFingerprint(attributeValue: fingerprint),
            cname: "rtc-publisher-7",
            streamID: "screen",
            video: .init(
                ssrc: 0x1111_1111,
                retransmissionSSRC: rtx ? 0x2222_2222 : nil,
                trackID: "screen-video",
                codecs: codecs
            ),
            audio: audio ? .init(ssrc: 0x3333_3333, trackID: "screen-audio") : nil,
            setup: setup,
            candidates: candidates,
            origin: SDPOrigin(sessionID: 4_242_424_242, sessionVersion: 1)
        )
    }
}

/// What every answer must satisfy against its offer (RFC 8829 §5.3.1, RFC 8843, RFC 4585),
/// checked on the text as a peer would read it. Returns the violations; empty means sound.
enum AnswerInvariants {
    static func violations(
        of answer: WebRTCAnswer,
        for offer: WebRTCOffer,
        configuration: WebRTCAnswer.Configuration
    ) -> [String] {
        var problems: [String] = []
        func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }
        guard let strict = try? SDPParser.parse(answer.sdp) else { return ["the answer does not parse strictly"] }
        check(strict == answer.description, "the strict parse differs from the answer's description")
        let reparsed: WebRTCOffer
        do {
            reparsed = try WebRTCOffer(parsing: answer.sdp)
        } catch {
            return problems + ["the answer does not parse as a WebRTC description: \(error)"]
        }
        guard reparsed.sections.count == offer.sections.count else {
            return problems + ["\(reparsed.sections.count) m-sections answer \(offer.sections.count)"]
        }
        check(reparsed.sections.map(\.mid) == offer.sections.map(\.mid), "mids or their order differ")
        check(reparsed.sections.map(\.kind) == offer.sections.map(\.kind), "media kinds differ")
        let bundle = reparsed.bundleGroup?.mids ?? []
        check(bundle == answer.bundle.mids, "the written BUNDLE group differs from the result's")
        check(bundle.allSatisfy { offer.bundleGroup?.mids.contains($0) == true }, "an answered mid was not bundled")
        let expectedSetup = offer.section(mid: offer.bundleGroup?.mids.first ?? "")?.setup
        let localSetup: ConnectionSetup? =
            switch expectedSetup {
            case .actpass: configuration.setup
            case .active: .passive
            case .passive: .active
            default: nil
            }
        let ports = Set(reparsed.sections.filter { bundle.contains($0.mid ?? "") }.map(\.media.port))
        var answeredExtensions: [HeaderExtensionMapping] = []
        check(ports.count <= 1, "bundled sections have different ports")
        for (offered, answered) in zip(offer.sections, reparsed.sections) {
            let name = "section \(answered.index)"
            guard let mid = answered.mid, bundle.contains(mid) else {
                check(answered.media.port == 0, "\(name) is not bundled but has port \(answered.media.port)")
                continue
            }
            check(answered.media.port != 0, "\(name) is bundled with port 0")
            // An audio section when we send no audio is kept in the bundle, inactive and empty.
            let carriesNothing = offered.kind == .audio && configuration.audio == nil
            if carriesNothing {
                check(answered.direction == .inactive, "\(name) is \(answered.direction), not inactive")
                check(answered.media.ssrcAttributes.isEmpty, "\(name) announces an SSRC it will not send")
                check(answered.media.rtcpFeedback.isEmpty, "\(name) answers feedback for nothing sent")
            } else {
                check(answered.direction == .sendonly, "\(name) is \(answered.direction), not sendonly")
            }
            check(answered.setup == localSetup, "\(name) says setup \(String(describing: answered.setup))")
            check(answered.media.rtcpMux, "\(name) has no rtcp-mux")
            check(answered.rtcpReducedSize == offered.rtcpReducedSize, "\(name) rtcp-rsize differs from the offer")
            check(answered.iceCredentials == configuration.ice, "\(name) has other ICE credentials")
            check(
                answered.fingerprints == [configuration.fingerprint],
                "\(name) has other fingerprints"
            )
            for mapping in answered.headerExtensions {
                check(
                    configuration.headerExtensions.contains(mapping.uri),
                    "\(name) answers a=extmap \(mapping.uri), which we do not stamp"
                )
                check((1...14).contains(mapping.id), "\(name) answers a=extmap id \(mapping.id), not one-byte")
                check(
                    offered.headerExtensions.contains { $0.id == mapping.id && $0.uri == mapping.uri },
                    "\(name) answers a=extmap:\(mapping.id) \(mapping.uri), not offered so"
                )
                check(mapping.direction == nil || mapping.direction == .sendonly, "\(name) answers a=extmap receiving")
                for other in answeredExtensions where (other.uri == mapping.uri) != (other.id == mapping.id) {
                    problems.append("\(name) maps a=extmap \(mapping.id) unlike another bundled section")
                }
            }
            answeredExtensions += answered.headerExtensions
            let stampsTransportWide = answered.headerExtensions.contains {
                $0.uri == HeaderExtensionMapping.transportWideCC
            }
            check(
                stampsTransportWide || !answered.media.rtcpFeedback.contains { $0.type == "transport-cc" },
                "\(name) answers transport-cc without the transport-wide sequence number extension"
            )
            check(carriesNothing || !answered.media.ssrcAttributes.isEmpty, "\(name) has no a=ssrc")
            check(
                answered.media.ssrcAttributes.filter { $0.name == "cname" }.allSatisfy {
                    $0.value == configuration.cname
                },
                "\(name) has another cname"
            )
            for format in answered.media.formats {
                guard let original = offered.media.format(payloadType: format.payloadType) else {
                    problems.append("\(name) answers payload type \(format.payloadType), which was not offered")
                    continue
                }
                check(
                    original.rtpmap?.encodingName.lowercased() == format.rtpmap?.encodingName.lowercased()
                        && original.rtpmap?.clockRate == format.rtpmap?.clockRate,
                    "\(name) payload type \(format.payloadType) changed its encoding"
                )
                if format.isRetransmission {
                    check(
                        format.associatedPayloadType == original.associatedPayloadType,
                        "\(name) RTX \(format.payloadType) changed its apt"
                    )
                }
            }
            // RFC 4585's rtcp-fb values are ABNF literals, case-insensitive (RFC 5234 §2.3): an
            // offered `NACK` is `nack`, which the answer writes in its own case.
            for feedback in answered.media.rtcpFeedback {
                let offeredIt = offered.media.rtcpFeedback.contains {
                    feedback.payloadType.map($0.applies(to:)) == true
                        && $0.type.lowercased() == feedback.type.lowercased()
                        && $0.parameter?.lowercased() == feedback.parameter?.lowercased()
                }
                check(offeredIt, "\(name) answers rtcp-fb \(feedback.type) \(feedback.parameter ?? ""), not offered")
            }
            let hasCandidates = !answered.candidates.isEmpty || !answered.skippedCandidates.isEmpty
            check(!hasCandidates || mid == bundle.first, "\(name) has candidates but is not the tagged section")
        }
        return problems
    }
}
