import Testing

@testable import CongestionControl

/// The burst allowance (libwebrtc `send_burst_interval`): packets leave while the debt is below
/// the allowance, so ordinary pictures go whole and only a key frame's excess is spread.
@Suite("Pacer burst allowance")
struct PacerBurstTests {
    static let allowance40ms = Pacer.Configuration(burstAllowanceUs: 40_000)

    @Test("a 12 kB picture at 1.8 Mbit/s leaves at once with a 40 ms allowance; 5 ms spacing without")
    func pictureLeavesWhole() throws {
        let picture = (0..<10).map { PacerTests.Arrival(timeUs: 0, handle: $0, size: 1200, kind: .video) }
        var sizes: [Int: Int] = [:]
        var burst = try PacerTests.pacer(Self.allowance40ms)
        let whole = PacerTests.run(&burst, picture, sizes: &sizes)
        #expect(whole.count == 10)
        #expect(whole.allSatisfy { $0.timeUs == 0 })
        var paced = try PacerTests.pacer()
        let spread = PacerTests.run(&paced, picture, sizes: &sizes)
        // Packet k at ⌈k × 9600 bits / 4.5 Mbit/s⌉: the last at 19 200 µs.
        #expect(spread.last?.timeUs == 19_200)
    }

    @Test("a 100 kB key frame: 19 packets at once (debt ≤ 180 000 bits), the rest paced, the last at 137 067 µs")
    func keyFrameExcessSpread() throws {
        var pacer = try PacerTests.pacer(Self.allowance40ms)
        var sizes: [Int: Int] = [:]
        let sent = PacerTests.run(&pacer, PacerTests.keyFrame(), sizes: &sizes)
        #expect(sent.count == 84)
        // 40 ms at 4.5 Mbit/s = 180 000 bits: packet k leaves once k × 9600 − 4.5 t ≤ 180 000.
        #expect(sent.filter { $0.timeUs == 0 }.count == 19)
        #expect(sent[19].timeUs == 534)
        #expect(sent.last?.timeUs == 137_067)
        #expect(pacer.queuedPackets == 0)
        // The long-run rate is still the pacing rate: any 100 ms after the burst holds
        // ≤ 100 ms of 4.5 Mbit/s (56 250 bytes) + one packet.
        let after = Array(sent[19...])
        #expect(PacerTests.maximumBytes(in: after, sizes: sizes, windowUs: 100_000) <= 56_250 + 1200)
    }

    @Test("the allowance is capped at 63 kB: at 100 Mbit/s pacing 53 packets leave at once, not 417")
    func cappedAtMaximumBurst() throws {
        var pacer = try PacerTests.pacer(target: 40_000_000, Self.allowance40ms)
        #expect(pacer.pacingRate == 100_000_000)
        let frame = (0..<200).map { PacerTests.Arrival(timeUs: 0, handle: $0, size: 1200, kind: .video) }
        var sizes: [Int: Int] = [:]
        let sent = PacerTests.run(&pacer, frame, sizes: &sizes)
        // 63 000 bytes = 504 000 bits; packet k leaves while k × 9600 ≤ 504 000: k = 0…52.
        #expect(sent.filter { $0.timeUs == 0 }.count == 53)
        #expect(sent.count == 200)
    }

    @Test("burstAllowed = false (a probe) paces as without an allowance; true again restores it")
    func heldOffForProbes() throws {
        var pacer = try PacerTests.pacer(target: 0, Self.allowance40ms)
        // A probe paces at its own rate, not 2.5 × a target.
        pacer.setPacingRate(4_500_000)
        #expect(pacer.pacingRate == 4_500_000 && pacer.targetRate == 1_800_000)
        pacer.burstAllowed = false
        var sizes: [Int: Int] = [:]
        let held = PacerTests.run(&pacer, PacerTests.keyFrame(), sizes: &sizes)
        #expect(held.filter { $0.timeUs == 0 }.count == 1)
        #expect(held.last?.timeUs == 177_067)
        pacer.burstAllowed = true
        let again = PacerTests.run(&pacer, PacerTests.keyFrame(at: 1_000_000, first: 100), sizes: &sizes)
        #expect(again.filter { $0.timeUs == 1_000_000 }.count == 19)
    }

    @Test("nextSendTime honours the allowance: now while under it, else when the debt falls back to it")
    func nextSendTimeWithAllowance() throws {
        var pacer = try PacerTests.pacer(Self.allowance40ms)
        for handle in 0..<30 {
            let accepted = pacer.enqueue(handle: handle, size: 1200, kind: .video, at: 0)
            #expect(accepted)
        }
        #expect(pacer.nextSendTime(at: 0) == 0)
        var sentAtZero = 0
        while pacer.next(at: 0) != nil { sentAtZero += 1 }
        #expect(sentAtZero == 19)
        // Debt 182 400 bits; back to 180 000 after 2 400 / 4.5 µs = 533.3 → 534.
        #expect(pacer.nextSendTime(at: 0) == 534)
        let early = pacer.next(at: 533)
        #expect(early == nil)
        let due = pacer.next(at: 534)
        #expect(due?.handle == 19)
    }
}
