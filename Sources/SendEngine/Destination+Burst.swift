import Media
import RTP
import SRTP
import Transport

extension Destination {
    /// Protects every packet of `burst` into `scratch`, back to back, and sends each run of
    /// equal-size packets (the last of a run may be shorter: FU-A fragments of one NAL unit differ
    /// by at most a byte) as one segmented send. The receiver gets the same datagrams in the same
    /// order as from one `send` per packet. Costs per packet: one copy, one `srtp_protect`; per
    /// run, one system call; no allocation. `scratch` is shared by all destinations (one at a
    /// time, on the sender thread) and must hold `UDPSocket.maximumSegmentedBytes` plus a packet.
    /// `renumbering`: a viewer watching one layer (`LayerSelection`) gets each packet
    /// renumbered into its stream on the way (packets the pacer kept are renumbered already).
    func send(
        burst: PacketBurst,
        layer: Int,
        renumbering: Bool = false,
        headerLength: Int,
        to target: UDPAddress,
        through sink: any DatagramSink,
        scratch: UnsafeMutableRawBufferPointer
    ) {
        guard let base = scratch.baseAddress else { return }
        var run = (bytes: 0, count: 0, segment: 0, closed: false)
        func flush() {
            guard run.count > 0 else { return }
            let sent = sink.send(
                UnsafeRawBufferPointer(start: base, count: run.bytes),
                segmentSize: run.segment,
                to: target
            )
            statistics.rtpPackets += sent.datagrams
            statistics.rtpBytes += sent.bytes
            statistics.sendDrops += run.count - sent.datagrams
            run = (0, 0, 0, false)
        }
        let trailer = keys.suite.rtpTrailerLength
        let now = MonotonicClock.now()
        for index in 0..<burst.count {
            let clear = burst[index]
            if run.count > 0,
                run.closed || run.count == UDPSocket.maximumSegments
                    || run.bytes + clear.count + trailer > UDPSocket.maximumSegmentedBytes
            {
                flush()
            }
            let slot = UnsafeMutableRawBufferPointer(rebasing: scratch[run.bytes...])
            guard let length = protectCopy(of: clear, into: slot, rtcp: false, renumbering: renumbering ? layer : nil)
            else { continue }
            // A viewer of one layer knows one stream: layer 0's, whose reports count it all.
            videoReports[selection == nil ? layer : 0].recordPacketSent(payloadLength: clear.count - headerLength)
            if selection != nil { videoSent.add(length, at: now) }
            if run.count > 0, length > run.segment {
                // Longer than the run's size (a fragment after a small STAP-A): the run ends
                // before it, and it starts the next one from the front of the scratch space.
                let packetStart = base + run.bytes
                flush()
                base.copyMemory(from: packetStart, byteCount: length)
            }
            if run.count == 0 { run.segment = length }
            if length < run.segment { run.closed = true }
            run.bytes += length
            run.count += 1
        }
        flush()
    }
}
