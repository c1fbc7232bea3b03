import Transport

/// Where one receiver wants the stream: an RTP and an RTCP address for video and for audio.
///
/// The default pairing puts RTCP on RTP port + 1 (RFC 3550 §11), which is what ffmpeg listens
/// on whatever the SDP says; with rtcp-mux (RFC 5761, WebRTC's way) RTCP shares the RTP port.
public struct DestinationAddress: Sendable, Hashable, CustomStringConvertible {
    public var videoRTP: UDPAddress
    public var videoRTCP: UDPAddress
    public var audioRTP: UDPAddress?
    public var audioRTCP: UDPAddress?
    public var rtcpMux: Bool

    /// `host` with video on `videoPort` and audio on `audioPort` (nil: video only). Without
    /// rtcp-mux both RTP ports must be even with port + 1 free for RTCP.
    public init(host: String, videoPort: Int, audioPort: Int?, rtcpMux: Bool = false) throws(TransportError) {
        let rtcpOffset = rtcpMux ? 0 : 1
        for port in [videoPort, audioPort].compactMap({ $0 }) {
            guard (1...65534).contains(port) else {
                throw TransportError(.invalidAddress, "media port \(port) is outside 1...65534")
            }
        }
        videoRTP = try UDPAddress(host: host, port: videoPort)
        videoRTCP = try UDPAddress(host: host, port: videoPort + rtcpOffset)
        audioRTP = try audioPort.map { (port) throws(TransportError) in try UDPAddress(host: host, port: port) }
        audioRTCP = try audioPort.map { (port) throws(TransportError) in
            try UDPAddress(host: host, port: port + rtcpOffset)
        }
        self.rtcpMux = rtcpMux
    }

    /// One bundled, rtcp-muxed 5-tuple for everything (WebRTC, RFC 8843): audio only when sent.
    public init(bundled address: UDPAddress, audio: Bool) {
        videoRTP = address
        videoRTCP = address
        audioRTP = audio ? address : nil
        audioRTCP = audio ? address : nil
        rtcpMux = true
    }

    public var host: String { videoRTP.host }

    public var description: String {
        let audio = audioRTP.map { " audio \($0)" } ?? ""
        return "video \(videoRTP)\(audio)\(rtcpMux ? " (rtcp-mux)" : "")"
    }
}
