/// What GStreamer's `rtpsession` says about our video stream, read from the `stats` property
/// that `gst-launch-1.0 -v` prints each time it changes (it changes with every RTCP packet the
/// session sends or receives). The printed structure escapes its nested structures with
/// backslashes; they are removed before the fields are read.
struct GStreamerStatistics: Equatable, CustomStringConvertible {
    /// RTP packets of our SSRC the session received (retransmissions included).
    var packetsReceived: Int
    /// Expected minus received (RFC 3550 §6.4.1 cumulative loss), as its RRs report it.
    var packetsLost: Int
    /// RTCP generic NACK packets and PLIs the session sent about our SSRC.
    var sentNACKs: Int
    var sentPLIs: Int
    /// Interarrival jitter in RTP timestamp units (90 kHz).
    var jitter: Int

    var description: String {
        "received \(packetsReceived) lost \(packetsLost) nack sent \(sentNACKs) pli sent \(sentPLIs) jitter \(jitter)"
    }

    /// The last statistics about `ssrc` in `output`; nil when no printed stats mention it yet.
    static func last(about ssrc: UInt32, in output: String) -> GStreamerStatistics? {
        for line in output.split(separator: "\n").reversed() where line.contains("rtpsession0: stats = ") {
            let text = line.filter { $0 != "\\" }
            // Each source is one quoted structure: "application/x-rtp-source-stats, ssrc=(uint)N, …;"
            for source in text.split(separator: "\"") where source.contains(" ssrc=(uint)\(ssrc),") {
                guard let received = value("packets-received", in: source),
                    let lost = value("packets-lost", in: source),
                    let nacks = value("sent-nack-count", in: source),
                    let plis = value("sent-pli-count", in: source),
                    let jitter = value("jitter", in: source)
                else { continue }
                return GStreamerStatistics(
                    packetsReceived: received,
                    packetsLost: lost,
                    sentNACKs: nacks,
                    sentPLIs: plis,
                    jitter: jitter
                )
            }
        }
        return nil
    }

    /// The integer after ` name=(type)` in a GstStructure's text form.
    static func value(_ name: String, in text: Substring) -> Int? {
        guard let field = text.range(of: " \(name)=(") else { return nil }
        let rest = text[field.upperBound...]
        guard let close = rest.firstIndex(of: ")") else { return nil }
        let digits = rest[rest.index(after: close)...].prefix { $0 == "-" || $0.isNumber }
        return Int(digits)
    }
}
