import Foundation
import JSEP
import SDP
import Testing

/// Transport-wide congestion control in our answers (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01 §2.3 and §3, RFC 8285 §5 and §7, RFC 8843 §12): the offer's `a=extmap` for the
/// transport-wide sequence number is answered under the offer's id when it fits our one-byte
/// headers and lets us send, and `transport-cc` feedback only with it.
@Suite("JSEP transport-wide congestion control")
struct TransportWideCCTests {
    static let uri = HeaderExtensionMapping.transportWideCC

    /// Chromium's line for it, in both of its sections.
    static let chromiumLine = "a=extmap:3 \(uri)"

    static func answer(
        _ text: String,
        _ configuration: WebRTCAnswer.Configuration? = nil
    ) throws -> WebRTCAnswer {
        let offer = try WebRTCOffer(parsing: text)
        let configuration = try configuration ?? Publisher.configuration()
        let answer = try WebRTCAnswer(answering: offer, configuration: configuration)
        #expect(AnswerInvariants.violations(of: answer, for: offer, configuration: configuration) == [])
        return answer
    }

    static func lines(_ answer: WebRTCAnswer) -> [String] {
        answer.sdp.components(separatedBy: "\r\n")
    }

    /// The answer's lines of the m-section that starts with `mLinePrefix`.
    static func section(_ answer: WebRTCAnswer, _ mLinePrefix: String) -> [String] {
        let all = lines(answer)
        guard let start = all.firstIndex(where: { $0.hasPrefix(mLinePrefix) }) else { return [] }
        let end = all[(start + 1)...].firstIndex { $0.hasPrefix("m=") } ?? all.endIndex
        return Array(all[start..<end])
    }

    /// `text` with the first occurrence of `old` after the line starting with `anchor` replaced.
    static func replacing(_ old: String, with new: String, after anchor: String, in text: String) -> String {
        guard let anchorRange = text.range(of: anchor),
            let range = text.range(of: old, range: anchorRange.upperBound..<text.endIndex)
        else { return text }
        return text.replacingCharacters(in: range, with: new)
    }

    @Test("Chromium: a=extmap:3 in both sections, transport-cc for H.264 102 and Opus 111, none for RTX 103")
    func chromium() throws {
        let answer = try Self.answer(OfferFixtures.chromium.text)
        #expect(answer.video?.transportWideSequenceNumberID == 3)
        #expect(answer.audio?.transportWideSequenceNumberID == 3)
        #expect(answer.video?.feedback.contains(.transportWideCongestionControl) == true)
        #expect(answer.audio?.feedback == [.transportWideCongestionControl])
        let audio = Self.section(answer, "m=audio")
        let video = Self.section(answer, "m=video")
        #expect(audio.filter { $0.hasPrefix("a=extmap") } == [Self.chromiumLine])
        #expect(video.filter { $0.hasPrefix("a=extmap") } == [Self.chromiumLine])
        #expect(audio.contains("a=rtcp-fb:111 transport-cc"))
        #expect(video.contains("a=rtcp-fb:102 transport-cc"))
        #expect(!video.contains { $0.hasPrefix("a=rtcp-fb:103") })
        // The offered abs-send-time, sdes:mid, ... are not stamped, so not answered.
        #expect(Self.lines(answer).filter { $0.hasPrefix("a=extmap") }.count == 2)
    }

    /// Firefox and GStreamer number the extension differently (7 in Firefox's video only, 1 in
    /// both of webrtcbin's sections); aiortc offers none.
    static let stacks: [(OfferFixtures.Fixture, UInt8?, UInt8?)] = [
        (OfferFixtures.firefox, 7, nil),
        (OfferFixtures.gstreamer, 1, 1),
        (OfferFixtures.aiortc, nil, nil),
        (OfferFixtures.chromiumNoCandidates, 3, 3),
    ]

    @Test("each stack's id is kept", arguments: stacks)
    func otherStacks(fixture: OfferFixtures.Fixture, video: UInt8?, audio: UInt8?) throws {
        let answer = try Self.answer(fixture.text)
        #expect(answer.video?.transportWideSequenceNumberID == video)
        #expect(answer.audio?.transportWideSequenceNumberID == audio)
        let extmaps = Self.lines(answer).filter { $0.hasPrefix("a=extmap") }.sorted()
        #expect(extmaps == [video, audio].compactMap { $0 }.map { "a=extmap:\($0) \(Self.uri)" }.sorted())
    }

    /// One change to Chromium's two transport-wide cc lines and what we answer.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// Replaces `a=extmap:3 <URI>` in both sections; nil removes the lines.
        var offered: String?
        /// The answer's line in both sections; nil: none, and no transport-cc feedback.
        var answered: String?

        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "no extmap offered", offered: nil, answered: nil),
        Case(name: "no direction (the recvonly stream's)", offered: "a=extmap:3 \(uri)", answered: "a=extmap:3 \(uri)"),
        Case(name: "id 14, the last one-byte id", offered: "a=extmap:14 \(uri)", answered: "a=extmap:14 \(uri)"),
        Case(name: "sendrecv", offered: "a=extmap:3/sendrecv \(uri)", answered: "a=extmap:3 \(uri)"),
        Case(
            name: "recvonly: the offerer receives it, MUST be answered sendonly (RFC 8285 section 7)",
            offered: "a=extmap:3/recvonly \(uri)",
            answered: "a=extmap:3/sendonly \(uri)"
        ),
        Case(name: "sendonly: only the offerer would send it", offered: "a=extmap:3/sendonly \(uri)", answered: nil),
        Case(name: "inactive", offered: "a=extmap:3/inactive \(uri)", answered: nil),
        Case(name: "id 15: two-byte form only", offered: "a=extmap:15 \(uri)", answered: nil),
        Case(name: "id 200: two-byte form only", offered: "a=extmap:200 \(uri)", answered: nil),
        Case(name: "id 4096: to be remapped, not usable as is", offered: "a=extmap:4096 \(uri)", answered: nil),
        Case(
            name: "extension attributes are not echoed",
            offered: "a=extmap:3 \(uri) some-attribute",
            answered: "a=extmap:3 \(uri)"
        ),
    ]

    @Test("offered id and direction → answered line", arguments: cases)
    func offeredExtmap(_ change: Case) throws {
        // Without Chromium's toffset, so that id 14 is free.
        let chromium = OfferFixtures.chromium.removing("a=extmap:14 urn:ietf:params:rtp-hdrext:toffset")
        let text =
            change.offered.map { chromium.replacingOccurrences(of: Self.chromiumLine, with: $0) }
            ?? chromium.components(separatedBy: "\r\n").filter { $0 != Self.chromiumLine }.joined(separator: "\r\n")
        let answer = try Self.answer(text)
        let id =
            change.answered.map { line in
                UInt8(line.dropFirst("a=extmap:".count).prefix { $0.isNumber })
            } ?? nil
        #expect(answer.video?.transportWideSequenceNumberID == id)
        #expect(answer.audio?.transportWideSequenceNumberID == id)
        for mLine in ["m=audio", "m=video"] {
            let section = Self.section(answer, mLine)
            #expect(section.filter { $0.hasPrefix("a=extmap") } == (change.answered.map { [$0] } ?? []), "\(mLine)")
            // Chromium offers transport-cc for 102 and 111 in every case here.
            #expect(section.contains { $0.hasSuffix(" transport-cc") } == (id != nil), "\(mLine)")
        }
    }

    @Test("different ids in the video and audio sections break BUNDLE: video's wins, audio gets none")
    func mismatchedIDs() throws {
        // The audio section comes first in Chromium's offer.
        let text = Self.replacing(
            Self.chromiumLine,
            with: "a=extmap:5 \(Self.uri)",
            after: "m=audio",
            in: OfferFixtures.chromium.text
        )
        let answer = try Self.answer(text)
        #expect(answer.video?.transportWideSequenceNumberID == 3)
        #expect(answer.audio?.transportWideSequenceNumberID == nil)
        #expect(answer.audio?.feedback.isEmpty == true)
        let audio = Self.section(answer, "m=audio")
        #expect(!audio.contains { $0.hasPrefix("a=extmap") || $0.hasSuffix(" transport-cc") })
        #expect(Self.section(answer, "m=video").contains(Self.chromiumLine))
    }

    @Test("audio's id naming another extension in the video section is not answered either")
    func collidingID() throws {
        // Video: id 3 becomes toffset (instead of 14), and no transport-wide cc at all.
        let text = Self.replacing(
            Self.chromiumLine,
            with: "a=extmap:3 urn:ietf:params:rtp-hdrext:toffset",
            after: "m=video",
            in: OfferFixtures.chromium.removing("a=extmap:14 urn:ietf:params:rtp-hdrext:toffset")
        )
        let answer = try Self.answer(text)
        #expect(answer.video?.transportWideSequenceNumberID == nil)
        #expect(answer.audio?.transportWideSequenceNumberID == nil)
        #expect(!Self.lines(answer).contains { $0.hasPrefix("a=extmap") || $0.hasSuffix(" transport-cc") })
    }

    @Test("the video section without the extension leaves audio free to agree it")
    func audioAlone() throws {
        let text = Self.replacing(
            Self.chromiumLine + "\r\n",
            with: "",
            after: "m=video",
            in: OfferFixtures.chromium.text
        )
        let answer = try Self.answer(text)
        #expect(answer.video?.transportWideSequenceNumberID == nil)
        #expect(answer.audio?.transportWideSequenceNumberID == 3)
        #expect(!Self.section(answer, "m=video").contains { $0.hasSuffix(" transport-cc") })
    }

    @Test("a configuration that stamps nothing answers no extmap and no transport-cc")
    func notStamped() throws {
        var configuration = try Publisher.configuration()
        configuration.headerExtensions = []
        let answer = try Self.answer(OfferFixtures.chromium.text, configuration)
        #expect(answer.video?.transportWideSequenceNumberID == nil)
        #expect(answer.audio?.transportWideSequenceNumberID == nil)
        #expect(answer.video?.feedback.contains(.transportWideCongestionControl) == false)
        #expect(!Self.lines(answer).contains { $0.hasPrefix("a=extmap") || $0.hasSuffix(" transport-cc") })
    }

    @Test("feedback without transport-cc keeps the extension but answers no transport-cc line")
    func feedbackExcluded() throws {
        var configuration = try Publisher.configuration()
        configuration.video?.feedback = [.nack, .pictureLossIndication]
        configuration.audio?.feedback = []
        let answer = try Self.answer(OfferFixtures.chromium.text, configuration)
        #expect(answer.video?.transportWideSequenceNumberID == 3)
        #expect(answer.video?.feedback == [.nack, .pictureLossIndication])
        #expect(!Self.lines(answer).contains { $0.hasSuffix(" transport-cc") })
    }

    @Test("an audio-only publisher agrees it on the audio section")
    func audioOnly() throws {
        var configuration = try Publisher.configuration()
        configuration.video = nil
        let answer = try Self.answer(OfferFixtures.chromium.text, configuration)
        #expect(answer.audio?.transportWideSequenceNumberID == 3)
        #expect(Self.section(answer, "m=audio").contains(Self.chromiumLine))
    }
}
