import Testing

@testable import RTP

@Suite("Key-frame request and retransmission limiters")
struct FeedbackLimiterTests {
    static let ms: UInt64 = 1_000_000

    @Test("a storm of 100 PLIs in one second yields three key frames")
    func pliStorm() {
        var limiter = KeyFrameRequestLimiter()
        var grantedAt: [UInt64] = []
        for index in 0..<100 {
            let now = 1000 * Self.ms + UInt64(index) * 10 * Self.ms
            if limiter.pictureLoss(at: now) { grantedAt.append(now) }
            if limiter.due(at: now) { grantedAt.append(now) }
        }
        for step in 0...100 {
            let now = 2000 * Self.ms + UInt64(step) * 10 * Self.ms
            if limiter.due(at: now) { grantedAt.append(now) }
        }
        #expect(grantedAt == [1000 * Self.ms, 1500 * Self.ms, 2000 * Self.ms])
        #expect(limiter.statistics == .init(requests: 100, duplicateFIRs: 0, coalesced: 98, granted: 3))
    }

    @Test("a key frame sent after a coalesced request answers it")
    func keyFrameAnswers() {
        var limiter = KeyFrameRequestLimiter()
        let first = limiter.pictureLoss(at: 1000 * Self.ms)
        #expect(first)
        let soonAfter = limiter.pictureLoss(at: 1100 * Self.ms)
        #expect(!soonAfter)
        #expect(limiter.isPending)
        limiter.recordKeyFrame(at: 1130 * Self.ms)
        let dueLater = limiter.due(at: 2000 * Self.ms)
        #expect(!limiter.isPending && !dueLater)
        let afterKeyFrame = limiter.pictureLoss(at: 1200 * Self.ms)
        #expect(!afterKeyFrame, "within 500 ms of the key frame at 1130")
    }

    @Test("a coalesced request says when it falls due, and only while it waits")
    func pendingDueTime() {
        var limiter = KeyFrameRequestLimiter()
        #expect(limiter.pendingDueTime == nil)
        _ = limiter.pictureLoss(at: 1000 * Self.ms)
        #expect(limiter.pendingDueTime == nil, "granted at once: nothing waits")
        _ = limiter.pictureLoss(at: 1200 * Self.ms)
        #expect(limiter.pendingDueTime == 1500 * Self.ms)
        let early = limiter.due(at: 1500 * Self.ms - 1)
        let onTime = limiter.due(at: 1500 * Self.ms)
        #expect(!early && onTime)
        #expect(limiter.pendingDueTime == nil)
        _ = limiter.pictureLoss(at: 1600 * Self.ms)
        limiter.recordKeyFrame(at: 1700 * Self.ms)
        #expect(limiter.pendingDueTime == nil, "a periodic key frame answered it")
    }

    @Test("RFC 5104 §4.3.1.2: a FIR repeating its sequence number is the same request")
    func firSequenceNumbers() {
        var limiter = KeyFrameRequestLimiter()
        let firstFIR = limiter.fullIntraRequest(requester: 1, sequenceNumber: 7, at: 1000 * Self.ms)
        #expect(firstFIR)
        let repeatedFIR = limiter.fullIntraRequest(requester: 1, sequenceNumber: 7, at: 2000 * Self.ms)
        #expect(!repeatedFIR)
        let nextFIR = limiter.fullIntraRequest(requester: 1, sequenceNumber: 8, at: 2100 * Self.ms)
        #expect(nextFIR)
        let otherRequester = limiter.fullIntraRequest(requester: 2, sequenceNumber: 8, at: 2200 * Self.ms)
        #expect(!otherRequester, "new requester, coalesced")
        #expect(limiter.statistics == .init(requests: 4, duplicateFIRs: 1, coalesced: 1, granted: 2))
        // More requesters than remembered: the oldest is replaced, none is refused.
        for requester in 10..<(10 + UInt64(KeyFrameRequestLimiter.maximumRequesters)) {
            _ = limiter.fullIntraRequest(requester: requester, sequenceNumber: 0, at: 3000 * Self.ms)
        }
        #expect(limiter.statistics.duplicateFIRs == 1)
        let rememberedAgain = limiter.fullIntraRequest(requester: 10, sequenceNumber: 0, at: 3000 * Self.ms)
        #expect(!rememberedAgain)
        #expect(limiter.statistics.duplicateFIRs == 2)
    }

    @Test("a sequence number is resent to a receiver at most once per round trip")
    func retransmissionLimiter() throws {
        var limiter = try RetransmissionLimiter(capacity: 1024)
        let rtt = 100 * Self.ms
        let firstResend = limiter.decide(5, available: true, at: 1000 * Self.ms, roundTrip: rtt)
        #expect(firstResend == .resend)
        let withinRTT = limiter.decide(5, available: true, at: 1050 * Self.ms, roundTrip: rtt)
        #expect(withinRTT == .suppressed)
        let otherNumber = limiter.decide(6, available: true, at: 1050 * Self.ms, roundTrip: rtt)
        #expect(otherNumber == .resend)
        let afterRTT = limiter.decide(5, available: true, at: 1100 * Self.ms, roundTrip: rtt)
        #expect(afterRTT == .resend)
        let sameSlot = limiter.decide(5 &+ 1024, available: true, at: 1110 * Self.ms, roundTrip: rtt)
        #expect(sameSlot == .resend, "same slot, other number")
        let evicted = limiter.decide(9, available: false, at: 1110 * Self.ms, roundTrip: rtt)
        #expect(evicted == .notFound)
        #expect(limiter.statistics == .init(asked: 6, sent: 4, notFound: 1, suppressed: 1))
        #expect(throws: RTPError.self) { try RetransmissionLimiter(capacity: 3000) }
    }

    @Test("resends stay under the allowed rate over any half second; a refused one may go later")
    func retransmissionRate() throws {
        var limiter = try RetransmissionLimiter(capacity: 1024)
        let rtt = 100 * Self.ms
        /// A 1200-byte resend of `number` at `ms`, the receiver allowing 480 kbit/s: half a
        /// second holds 240 000 bits, 25 resends.
        func decide(_ number: UInt16, atMilliseconds ms: UInt64) -> RetransmissionLimiter.Decision {
            limiter.decide(number, available: true, at: ms * Self.ms, roundTrip: rtt, bytes: 1200, maximumRate: 480_000)
        }
        let decisions = (UInt16(0)..<30).map { decide($0, atMilliseconds: 1000) }
        #expect(decisions.filter { $0 == .resend }.count == 25)
        #expect(decisions[25...].allSatisfy { $0 == .overRate })
        // 20 ms later 9600 bits came back: one more.
        #expect(decide(25, atMilliseconds: 1020) == .resend, "refused before, not remembered as resent")
        #expect(decide(26, atMilliseconds: 1020) == .overRate)
        // A second's pause refills one window, not more.
        let later = (UInt16(100)..<140).map { decide($0, atMilliseconds: 3000) }
        #expect(later.filter { $0 == .resend }.count == 25)
        // Without a rate (the receiver has not reported), only the round-trip rule applies.
        let unlimited = limiter.decide(200, available: true, at: 3000 * Self.ms, roundTrip: rtt, bytes: 1200)
        #expect(unlimited == .resend)
        #expect(limiter.statistics.overRate == 5 + 1 + 15)
        #expect(limiter.statistics.sent == 25 + 1 + 25 + 1)
    }
}
