import Foundation
import SRTP
import TestSupport

/// A stock GStreamer 1.22 receiver of one SRTP H.264 stream, as `gst-launch-1.0` runs it:
///
///     udpsrc (SRTP) ─┐                   ┌─ rtph264depay ! avdec_h264 ! fakesink (counted)
///                    srtpdec ── rtpbin ──┤
///     udpsrc (SRTCP)─┘   (jitter buffer, └─ RTCP: RR, NACK, PLI ! srtpenc ! udpsink → our socket
///                         NACKs, AVPF)
///
/// `srtpdec` takes the key from the caps of its sink pads (`srtp-key` as a buffer in hex, with
/// the cipher and auth names and our SSRC: without `ssrc` in the caps it asks the application
/// through a signal, which `gst-launch` cannot answer). The RTP caps also carry what an SDP
/// with `a=rtcp-fb:96 nack` and `nack pli` would give (`rtcp-fb-nack`, `rtcp-fb-nack-pli`).
/// `rtpbin` runs the AVPF profile (RFC 4585 early feedback: a NACK or PLI need not wait for
/// the next regular report), its session reports every 0.5 s instead of its default 5 s (set
/// on the child `rtpsession0` through GstChildProxy), and `do-retransmission` makes its jitter
/// buffer NACK missing packets. Its RTCP goes through `srtpenc` with the same key (the SDP
/// gives one) to `feedbackPort`, the port our RTCP comes from: `udpsink` sends to a fixed
/// address and does not latch. `avdec_h264 output-corrupt=false` drops pictures libav marks
/// as corrupt, so the count of decoded frames is the count of intact ones.
///
/// The key is on gst-launch's command line and in its `-v` output (the caps): acceptable for a
/// per-run random test key in a temporary directory, not for a product.
final class GStreamerReceiver {
    /// GStreamer's minimum interval between regular RTCP reports, in ns (its default is 5 s,
    /// about one RR per run; NACKs and PLIs go out early regardless, under AVPF).
    static let reportInterval = 500_000_000
    let rtpPort: Int
    let rtcpPort: Int
    private let process: BackgroundProcess
    private let ssrc: UInt32

    /// Starts the pipeline on `rtpPort` and `rtpPort + 1` (RTCP) and waits until it has bound
    /// both.
    init(
        rtpPort: Int,
        ssrc: UInt32,
        keys: SRTPKeyMaterial,
        feedbackPort: Int,
        latencyMilliseconds: Int = 500,
        directory: TemporaryDirectory
    ) throws {
        guard keys.suite == .aesCM128HmacSHA1_80 else {
            throw InteropFailure("the GStreamer pipeline is written for AES_CM_128_HMAC_SHA1_80, not \(keys.suite)")
        }
        let launcher = try GStreamerInstallation.launcher()
        self.rtpPort = rtpPort
        rtcpPort = rtpPort + 1
        self.ssrc = ssrc
        let key = keys.hexKeyAndSalt()
        let crypto =
            "ssrc=(uint)\(ssrc),srtp-key=(buffer)\(key),srtp-cipher=(string)aes-128-icm,srtp-auth=(string)hmac-sha1-80,"
            + "srtcp-cipher=(string)aes-128-icm,srtcp-auth=(string)hmac-sha1-80"
        let rtpCaps =
            "application/x-srtp,media=(string)video,clock-rate=(int)90000,encoding-name=(string)H264,payload=(int)96,"
            + "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true,\(crypto)"
        let arguments = [
            "-v",
            "rtpbin", "name=rb", "do-retransmission=true", "rtp-profile=avpf", "latency=\(latencyMilliseconds)",
            // rtpbin makes its session when the pads are linked; gst-launch sets the child's
            // property then (GstChildProxy): RRs every 0.5 s instead of every 5 s.
            "rtpsession0::rtcp-min-interval=\(Self.reportInterval)",
            // reuse=false: a port someone else holds is a failure to start, not a silent share
            // in which the other socket gets our packets (udpsrc sets SO_REUSEADDR by default).
            "udpsrc", "address=127.0.0.1", "port=\(rtpPort)", "reuse=false", "caps=\(rtpCaps)", "!", "dec.rtp_sink",
            "udpsrc", "address=127.0.0.1", "port=\(rtcpPort)", "reuse=false", "caps=application/x-srtcp,\(crypto)", "!",
            "dec.rtcp_sink",
            "srtpdec", "name=dec",
            "dec.rtp_src", "!", "rb.recv_rtp_sink_0",
            "dec.rtcp_src", "!", "rb.recv_rtcp_sink_0",
            "rb.", "!", "rtph264depay", "!", "avdec_h264", "output-corrupt=false", "!",
            "fakesink", "name=frames", "silent=false", "sync=false",
            "rb.send_rtcp_src_0", "!", "enc.rtcp_sink_0",
            "srtpenc", "name=enc", "key=\(key)",
            "rtp-cipher=aes-128-icm", "rtp-auth=hmac-sha1-80", "rtcp-cipher=aes-128-icm", "rtcp-auth=hmac-sha1-80",
            "enc.rtcp_src_0", "!", "udpsink", "host=127.0.0.1", "port=\(feedbackPort)", "sync=false", "async=false",
        ]
        // GStreamer 1.22 once aborted while going to PLAYING ("malloc(): unaligned tcache chunk
        // detected", 1 start in about 30), before a packet of ours existed. A peer that dies
        // that early gets one more start, announced in the test's output; a second death, or
        // one after start-up, fails the test.
        var started: BackgroundProcess?
        for attempt in 1...2 where started == nil {
            let candidate = try BackgroundProcess(launcher, arguments, directory: directory, name: "gst-launch")
            // PLAYING comes after udpsrc has bound its port (READY → PAUSED); the ports are
            // checked too, so a pipeline that failed to bind is not taken for a ready one.
            try candidate.waitUntil(deadlineSeconds: 30, "reaching PLAYING on UDP ports \(rtpPort) and \(rtcpPort)") {
                guard candidate.isRunning else { return true }
                let ports = [UInt16(rtpPort), UInt16(rtpPort + 1)]
                return candidate.output.contains("Setting pipeline to PLAYING")
                    && ((try? ports.allSatisfy { try LoopbackUDPSocket.isTaken(port: $0) }) ?? false)
            }
            if candidate.isRunning {
                started = candidate
            } else if attempt == 1 {
                print("gst-launch-1.0 died at start (status \(candidate.exitStatus ?? -1)); starting it once more")
            } else {
                throw InteropFailure("gst-launch-1.0 exited at start twice:\n\(candidate.output.suffix(3000))")
            }
        }
        guard let started else { throw InteropFailure("gst-launch-1.0 did not start") }
        process = started
    }

    /// Everything gst-launch printed so far.
    var output: String { process.output }
    var isRunning: Bool { process.isRunning }

    /// For failure messages: the exit status and the last lines that are not per-frame or
    /// statistics notices, each cut short.
    var diagnostics: String {
        let lines = output.split(separator: "\n").filter { !$0.contains("last-message") && !$0.contains(": stats = ") }
        let status = process.exitStatus.map { "exited with status \($0)" } ?? "running"
        return "gst-launch-1.0 \(status):\n" + lines.suffix(25).map { String($0.prefix(300)) }.joined(separator: "\n")
    }

    /// Pictures the decoder output intact, so far: one `last-message = chain` line per buffer
    /// that reached the fakesink.
    var decodedFrames: Int { output.components(separatedBy: "(frames:sink) (").count - 1 }

    /// The session's latest statistics about our stream.
    var statistics: GStreamerStatistics? { GStreamerStatistics.last(about: ssrc, in: output) }

    /// Ctrl-C: gst-launch sets the pipeline to NULL and exits (SIGKILL if it has not within
    /// 5 s). Whatever was still in the jitter buffer is not decoded: the runs leave a tail of
    /// three times its latency before stopping.
    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        process.waitForExit(deadlineSeconds: 5)
    }
}
