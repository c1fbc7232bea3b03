import Foundation
import Testing

/// Offers as WebRTC stacks write them, for the JSEP tests and as fuzz seeds.
///
/// Representative, not captured: each is composed from how that stack lays out a recvonly
/// audio + video offer (attribute order, payload type numbering, feedback, extmap, candidate
/// syntax), with addresses from the documentation ranges and made-up credentials. Written with
/// LF here; `text` turns them into the CRLF a peer sends.
enum OfferFixtures {
    struct Fixture: Sendable, CustomTestStringConvertible {
        let name: String
        let lines: String

        /// CRLF line ends, as on the wire.
        var text: String { lines.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n") }

        var testDescription: String { name }

        /// The fixture with every line starting with `prefix` removed.
        func removing(_ prefix: String) -> String {
            text.components(separatedBy: "\r\n").filter { !$0.hasPrefix(prefix) }.joined(separator: "\r\n")
        }

        /// The fixture with every occurrence of `old` replaced.
        func replacing(_ old: String, with new: String) -> String {
            text.replacingOccurrences(of: old, with: new)
        }
    }

    static let all = [chromium, chromiumNoCandidates, firefox, aiortc, gstreamer]

    /// Chromium (M12x-style): audio transceiver first, then video; dynamic payload types with
    /// H.264 42001f (102) before 42e01f (106), each with RTX; transport-cc and REMB; a complete
    /// offer after gathering: a host candidate, an mDNS host candidate, srflx and TCP active, in
    /// the first m-section only.
    static let chromium = Fixture(
        name: "Chromium",
        lines: """
            v=0
            o=- 4611731400430051336 2 IN IP4 127.0.0.1
            s=-
            t=0 0
            a=group:BUNDLE 0 1
            a=extmap-allow-mixed
            a=msid-semantic: WMS
            m=audio 54400 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126
            c=IN IP4 192.0.2.20
            a=rtcp:9 IN IP4 0.0.0.0
            a=candidate:2999745851 1 udp 2122260223 192.0.2.20 54400 typ host generation 0 network-id 1 network-cost 10
            a=candidate:3527651374 1 udp 2122194687 6f0c3c7e-6a4e-4d5b-9e0f-2b1c8d7a4e31.local 54401 typ host generation 0 network-id 2
            a=candidate:842163049 1 udp 1686052607 203.0.113.7 54400 typ srflx raddr 192.0.2.20 rport 54400 generation 0 network-id 1 network-cost 10
            a=candidate:4233069003 1 tcp 1518280447 192.0.2.20 9 typ host tcptype active generation 0 network-id 1 network-cost 10
            a=ice-ufrag:8hhY
            a=ice-pwd:asd88fgpdd777uzjYhagZg3x
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:0
            a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
            a=recvonly
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:111 opus/48000/2
            a=rtcp-fb:111 transport-cc
            a=fmtp:111 minptime=10;useinbandfec=1
            a=rtpmap:63 red/48000/2
            a=fmtp:63 111/111
            a=rtpmap:9 G722/8000
            a=rtpmap:0 PCMU/8000
            a=rtpmap:8 PCMA/8000
            a=rtpmap:13 CN/8000
            a=rtpmap:110 telephone-event/48000
            a=rtpmap:126 telephone-event/8000
            m=video 54400 UDP/TLS/RTP/SAVPF 96 97 102 103 104 105 106 107 108 109 127 125 45 46 98 99 112 113 116 117 118
            c=IN IP4 192.0.2.20
            a=rtcp:9 IN IP4 0.0.0.0
            a=ice-ufrag:8hhY
            a=ice-pwd:asd88fgpdd777uzjYhagZg3x
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:1
            a=extmap:14 urn:ietf:params:rtp-hdrext:toffset
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=extmap:13 urn:3gpp:video-orientation
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
            a=extmap:6 http://www.webrtc.org/experiments/rtp-hdrext/video-content-type
            a=extmap:7 http://www.webrtc.org/experiments/rtp-hdrext/video-timing
            a=extmap:8 http://www.webrtc.org/experiments/rtp-hdrext/color-space
            a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
            a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id
            a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id
            a=recvonly
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:96 VP8/90000
            a=rtcp-fb:96 goog-remb
            a=rtcp-fb:96 transport-cc
            a=rtcp-fb:96 ccm fir
            a=rtcp-fb:96 nack
            a=rtcp-fb:96 nack pli
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=rtpmap:102 H264/90000
            a=rtcp-fb:102 goog-remb
            a=rtcp-fb:102 transport-cc
            a=rtcp-fb:102 ccm fir
            a=rtcp-fb:102 nack
            a=rtcp-fb:102 nack pli
            a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
            a=rtpmap:103 rtx/90000
            a=fmtp:103 apt=102
            a=rtpmap:104 H264/90000
            a=rtcp-fb:104 goog-remb
            a=rtcp-fb:104 transport-cc
            a=rtcp-fb:104 ccm fir
            a=rtcp-fb:104 nack
            a=rtcp-fb:104 nack pli
            a=fmtp:104 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f
            a=rtpmap:105 rtx/90000
            a=fmtp:105 apt=104
            a=rtpmap:106 H264/90000
            a=rtcp-fb:106 goog-remb
            a=rtcp-fb:106 transport-cc
            a=rtcp-fb:106 ccm fir
            a=rtcp-fb:106 nack
            a=rtcp-fb:106 nack pli
            a=fmtp:106 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
            a=rtpmap:107 rtx/90000
            a=fmtp:107 apt=106
            a=rtpmap:108 H264/90000
            a=rtcp-fb:108 goog-remb
            a=rtcp-fb:108 transport-cc
            a=rtcp-fb:108 ccm fir
            a=rtcp-fb:108 nack
            a=rtcp-fb:108 nack pli
            a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f
            a=rtpmap:109 rtx/90000
            a=fmtp:109 apt=108
            a=rtpmap:127 H264/90000
            a=rtcp-fb:127 goog-remb
            a=rtcp-fb:127 transport-cc
            a=rtcp-fb:127 ccm fir
            a=rtcp-fb:127 nack
            a=rtcp-fb:127 nack pli
            a=fmtp:127 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f
            a=rtpmap:125 rtx/90000
            a=fmtp:125 apt=127
            a=rtpmap:45 AV1/90000
            a=rtcp-fb:45 goog-remb
            a=rtcp-fb:45 transport-cc
            a=rtcp-fb:45 ccm fir
            a=rtcp-fb:45 nack
            a=rtcp-fb:45 nack pli
            a=fmtp:45 level-idx=5;profile=0;tier=0
            a=rtpmap:46 rtx/90000
            a=fmtp:46 apt=45
            a=rtpmap:98 VP9/90000
            a=rtcp-fb:98 goog-remb
            a=rtcp-fb:98 transport-cc
            a=rtcp-fb:98 ccm fir
            a=rtcp-fb:98 nack
            a=rtcp-fb:98 nack pli
            a=fmtp:98 profile-id=0
            a=rtpmap:99 rtx/90000
            a=fmtp:99 apt=98
            a=rtpmap:112 H264/90000
            a=rtcp-fb:112 goog-remb
            a=rtcp-fb:112 transport-cc
            a=rtcp-fb:112 ccm fir
            a=rtcp-fb:112 nack
            a=rtcp-fb:112 nack pli
            a=fmtp:112 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=64001f
            a=rtpmap:113 rtx/90000
            a=fmtp:113 apt=112
            a=rtpmap:116 red/90000
            a=rtpmap:117 rtx/90000
            a=fmtp:117 apt=116
            a=rtpmap:118 ulpfec/90000

            """
    )

    /// Chromium from another build, in a network namespace without a default route: no
    /// candidates at all; video first with H.264 42001f on 108 and 42e01f on 112, a second video
    /// transceiver and a data channel that we reject.
    static let chromiumNoCandidates = Fixture(
        name: "Chromium, no candidates, extra sections",
        lines: """
            v=0
            o=- 8015370339361389143 2 IN IP4 127.0.0.1
            s=-
            t=0 0
            a=group:BUNDLE 0 1 2 3
            a=extmap-allow-mixed
            a=msid-semantic: WMS
            m=video 9 UDP/TLS/RTP/SAVPF 96 97 108 109 35 36 112 113 114 115 45 46
            c=IN IP4 0.0.0.0
            a=rtcp:9 IN IP4 0.0.0.0
            a=ice-ufrag:tB3u
            a=ice-pwd:Ubh8cZpwG0MNchFsA4xJoVd2
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:0
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
            a=recvonly
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:96 VP8/90000
            a=rtcp-fb:96 goog-remb
            a=rtcp-fb:96 transport-cc
            a=rtcp-fb:96 ccm fir
            a=rtcp-fb:96 nack
            a=rtcp-fb:96 nack pli
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=rtpmap:108 H264/90000
            a=rtcp-fb:108 goog-remb
            a=rtcp-fb:108 transport-cc
            a=rtcp-fb:108 ccm fir
            a=rtcp-fb:108 nack
            a=rtcp-fb:108 nack pli
            a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
            a=rtpmap:109 rtx/90000
            a=fmtp:109 apt=108
            a=rtpmap:35 H264/90000
            a=rtcp-fb:35 goog-remb
            a=rtcp-fb:35 transport-cc
            a=rtcp-fb:35 ccm fir
            a=rtcp-fb:35 nack
            a=rtcp-fb:35 nack pli
            a=fmtp:35 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f
            a=rtpmap:36 rtx/90000
            a=fmtp:36 apt=35
            a=rtpmap:112 H264/90000
            a=rtcp-fb:112 goog-remb
            a=rtcp-fb:112 transport-cc
            a=rtcp-fb:112 ccm fir
            a=rtcp-fb:112 nack
            a=rtcp-fb:112 nack pli
            a=fmtp:112 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
            a=rtpmap:113 rtx/90000
            a=fmtp:113 apt=112
            a=rtpmap:114 H264/90000
            a=rtcp-fb:114 goog-remb
            a=rtcp-fb:114 transport-cc
            a=rtcp-fb:114 ccm fir
            a=rtcp-fb:114 nack
            a=rtcp-fb:114 nack pli
            a=fmtp:114 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f
            a=rtpmap:115 rtx/90000
            a=fmtp:115 apt=114
            a=rtpmap:45 AV1/90000
            a=rtcp-fb:45 goog-remb
            a=rtcp-fb:45 transport-cc
            a=rtcp-fb:45 ccm fir
            a=rtcp-fb:45 nack
            a=rtcp-fb:45 nack pli
            a=fmtp:45 level-idx=5;profile=0;tier=0
            a=rtpmap:46 rtx/90000
            a=fmtp:46 apt=45
            m=audio 9 UDP/TLS/RTP/SAVPF 111 63 0 8 126
            c=IN IP4 0.0.0.0
            a=rtcp:9 IN IP4 0.0.0.0
            a=ice-ufrag:tB3u
            a=ice-pwd:Ubh8cZpwG0MNchFsA4xJoVd2
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:1
            a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
            a=recvonly
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:111 opus/48000/2
            a=rtcp-fb:111 transport-cc
            a=fmtp:111 minptime=10;useinbandfec=1
            a=rtpmap:63 red/48000/2
            a=fmtp:63 111/111
            a=rtpmap:0 PCMU/8000
            a=rtpmap:8 PCMA/8000
            a=rtpmap:126 telephone-event/8000
            m=video 9 UDP/TLS/RTP/SAVPF 96 97 108 109
            c=IN IP4 0.0.0.0
            a=rtcp:9 IN IP4 0.0.0.0
            a=ice-ufrag:tB3u
            a=ice-pwd:Ubh8cZpwG0MNchFsA4xJoVd2
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:2
            a=recvonly
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:96 VP8/90000
            a=rtcp-fb:96 nack
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=rtpmap:108 H264/90000
            a=rtcp-fb:108 nack
            a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
            a=rtpmap:109 rtx/90000
            a=fmtp:109 apt=108
            m=application 9 UDP/DTLS/SCTP webrtc-datachannel
            c=IN IP4 0.0.0.0
            a=ice-ufrag:tB3u
            a=ice-pwd:Ubh8cZpwG0MNchFsA4xJoVd2
            a=ice-options:trickle
            a=fingerprint:sha-256 DD:F8:D3:10:D2:16:93:30:8B:1E:D6:55:3E:49:72:C3:80:73:53:7B:65:6B:6E:8B:95:F6:35:B2:B1:29:AA:56
            a=setup:actpass
            a=mid:3
            a=sctp-port:5000
            a=max-message-size:262144

            """
    )

    /// Firefox (12x-style): fingerprint, ice-options and BUNDLE at session level; fmtp lines
    /// before rtpmap; H.264 42e01f packetization-mode=1 on 126 first; mDNS host candidates
    /// (UDP and TCP) and one srflx in the first section; end-of-candidates in both.
    static let firefox = Fixture(
        name: "Firefox",
        lines: """
            v=0
            o=mozilla...THIS_IS_SDPARTA-128.0 3497579305088229251 0 IN IP4 0.0.0.0
            s=-
            t=0 0
            a=fingerprint:sha-256 16:E5:F6:0F:20:7A:1A:00:73:45:1C:35:A9:D3:15:D1:7F:DC:17:D7:FA:B6:64:49:B0:0C:DF:AA:DC:8B:24:9E
            a=group:BUNDLE 0 1
            a=ice-options:trickle
            a=msid-semantic:WMS *
            m=audio 49770 UDP/TLS/RTP/SAVPF 109 9 0 8 101
            c=IN IP4 203.0.113.9
            a=candidate:0 1 UDP 2122252543 2c2c4e5f-8f1e-4b8d-9d4d-0e7c9f3a1b2d.local 49770 typ host
            a=candidate:1 1 TCP 2105524479 2c2c4e5f-8f1e-4b8d-9d4d-0e7c9f3a1b2d.local 9 typ host tcptype active
            a=candidate:2 1 UDP 1686052863 203.0.113.9 49770 typ srflx raddr 0.0.0.0 rport 0
            a=recvonly
            a=end-of-candidates
            a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
            a=extmap:2/recvonly urn:ietf:params:rtp-hdrext:csrc-audio-level
            a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
            a=fmtp:109 maxplaybackrate=48000;stereo=1;useinbandfec=1
            a=fmtp:101 0-15
            a=ice-pwd:e3baa26dd2fa5030d881d385f1e36cce
            a=ice-ufrag:58b99ead
            a=mid:0
            a=rtcp-mux
            a=rtpmap:109 opus/48000/2
            a=rtpmap:9 G722/8000/1
            a=rtpmap:0 PCMU/8000
            a=rtpmap:8 PCMA/8000
            a=rtpmap:101 telephone-event/8000
            a=setup:actpass
            a=ssrc:2655508255 cname:{735484ea-4f6c-4b8b-a3b5-62b4b55d1e27}
            m=video 49770 UDP/TLS/RTP/SAVPF 120 124 121 125 126 127 97 98 105 106 103 104 99 100 123 122 119
            c=IN IP4 203.0.113.9
            a=recvonly
            a=end-of-candidates
            a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
            a=extmap:4 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=extmap:5 urn:ietf:params:rtp-hdrext:toffset
            a=extmap:6/recvonly http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
            a=extmap:7 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=fmtp:126 profile-level-id=42e01f;level-asymmetry-allowed=1;packetization-mode=1
            a=fmtp:97 profile-level-id=42e01f;level-asymmetry-allowed=1
            a=fmtp:105 profile-level-id=42001f;level-asymmetry-allowed=1;packetization-mode=1
            a=fmtp:103 profile-level-id=42001f;level-asymmetry-allowed=1
            a=fmtp:120 max-fs=12288;max-fr=60
            a=fmtp:124 apt=120
            a=fmtp:121 max-fs=12288;max-fr=60
            a=fmtp:125 apt=121
            a=fmtp:127 apt=126
            a=fmtp:98 apt=97
            a=fmtp:106 apt=105
            a=fmtp:104 apt=103
            a=fmtp:100 apt=99
            a=fmtp:119 apt=122
            a=ice-pwd:e3baa26dd2fa5030d881d385f1e36cce
            a=ice-ufrag:58b99ead
            a=mid:1
            a=rtcp-fb:120 nack
            a=rtcp-fb:120 nack pli
            a=rtcp-fb:120 ccm fir
            a=rtcp-fb:120 goog-remb
            a=rtcp-fb:120 transport-cc
            a=rtcp-fb:121 nack
            a=rtcp-fb:121 nack pli
            a=rtcp-fb:121 ccm fir
            a=rtcp-fb:121 goog-remb
            a=rtcp-fb:121 transport-cc
            a=rtcp-fb:126 nack
            a=rtcp-fb:126 nack pli
            a=rtcp-fb:126 ccm fir
            a=rtcp-fb:126 goog-remb
            a=rtcp-fb:126 transport-cc
            a=rtcp-fb:97 nack
            a=rtcp-fb:97 nack pli
            a=rtcp-fb:97 ccm fir
            a=rtcp-fb:97 goog-remb
            a=rtcp-fb:97 transport-cc
            a=rtcp-fb:105 nack
            a=rtcp-fb:105 nack pli
            a=rtcp-fb:105 ccm fir
            a=rtcp-fb:105 goog-remb
            a=rtcp-fb:105 transport-cc
            a=rtcp-fb:103 nack
            a=rtcp-fb:103 nack pli
            a=rtcp-fb:103 ccm fir
            a=rtcp-fb:103 goog-remb
            a=rtcp-fb:103 transport-cc
            a=rtcp-fb:99 nack
            a=rtcp-fb:99 nack pli
            a=rtcp-fb:99 ccm fir
            a=rtcp-fb:99 goog-remb
            a=rtcp-fb:99 transport-cc
            a=rtcp-mux
            a=rtcp-rsize
            a=rtpmap:120 VP8/90000
            a=rtpmap:124 rtx/90000
            a=rtpmap:121 VP9/90000
            a=rtpmap:125 rtx/90000
            a=rtpmap:126 H264/90000
            a=rtpmap:127 rtx/90000
            a=rtpmap:97 H264/90000
            a=rtpmap:98 rtx/90000
            a=rtpmap:105 H264/90000
            a=rtpmap:106 rtx/90000
            a=rtpmap:103 H264/90000
            a=rtpmap:104 rtx/90000
            a=rtpmap:99 AV1/90000
            a=rtpmap:100 rtx/90000
            a=rtpmap:123 ulpfec/90000
            a=rtpmap:122 red/90000
            a=rtpmap:119 rtx/90000
            a=setup:actpass
            a=ssrc:3161542010 cname:{735484ea-4f6c-4b8b-a3b5-62b4b55d1e27}

            """
    )

    /// aiortc (1.x-style): video first with VP8 before H.264 42001f (99) and 42e01f (101), RTX
    /// for each, nack/pli/REMB only; no rtcp-rsize; its own SSRCs even though recvonly; the
    /// same host and srflx candidates in both sections; sha-256, sha-384 and sha-512
    /// fingerprints.
    static let aiortc = Fixture(
        name: "aiortc",
        lines: """
            v=0
            o=- 3937296853 3937296853 IN IP4 0.0.0.0
            s=-
            t=0 0
            a=group:BUNDLE 0 1
            a=msid-semantic:WMS *
            m=video 41234 UDP/TLS/RTP/SAVPF 97 98 99 100 101 102
            c=IN IP4 198.51.100.5
            a=recvonly
            a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=mid:0
            a=rtcp:9 IN IP4 0.0.0.0
            a=rtcp-mux
            a=ssrc-group:FID 2459339216 1478215690
            a=ssrc:2459339216 cname:7c3a3b8e-5f0e-4d7f-9c9e-3c3f2b1d0e4a
            a=ssrc:1478215690 cname:7c3a3b8e-5f0e-4d7f-9c9e-3c3f2b1d0e4a
            a=rtpmap:97 VP8/90000
            a=rtcp-fb:97 nack
            a=rtcp-fb:97 nack pli
            a=rtcp-fb:97 goog-remb
            a=rtpmap:98 rtx/90000
            a=fmtp:98 apt=97
            a=rtpmap:99 H264/90000
            a=rtcp-fb:99 nack
            a=rtcp-fb:99 nack pli
            a=rtcp-fb:99 goog-remb
            a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
            a=rtpmap:100 rtx/90000
            a=fmtp:100 apt=99
            a=rtpmap:101 H264/90000
            a=rtcp-fb:101 nack
            a=rtcp-fb:101 nack pli
            a=rtcp-fb:101 goog-remb
            a=fmtp:101 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
            a=rtpmap:102 rtx/90000
            a=fmtp:102 apt=101
            a=candidate:8e4b1c3d5f6a7b8c9d0e1f2a3b4c5d6e 1 udp 2130706431 198.51.100.5 41234 typ host
            a=candidate:1f2e3d4c5b6a79880796a5b4c3d2e1f0 1 udp 1694498815 203.0.113.23 41234 typ srflx raddr 198.51.100.5 rport 41234
            a=end-of-candidates
            a=ice-ufrag:Qm3T
            a=ice-pwd:8yRkWHZo1Gq4s3mDJ6xF2b
            a=fingerprint:sha-256 8B:9E:3D:73:71:EC:6D:CD:4B:46:84:35:47:C1:06:D6:E0:7E:5E:5E:38:05:E6:8B:6E:7A:CE:F6:3B:24:DE:88
            a=fingerprint:sha-384 13:7B:91:78:2B:FB:54:09:29:2A:1B:57:0D:9A:29:01:88:80:EF:C5:BB:0A:04:97:17:4D:57:9C:53:BF:AA:32:B8:5A:37:F8:1C:08:FC:FC:78:D9:25:E5:87:57:81:47
            a=fingerprint:sha-512 D7:2F:9C:B0:34:08:16:51:79:FD:89:44:D6:50:19:66:BB:1E:27:B1:51:7C:33:BD:2F:E4:4D:B9:35:DC:80:54:66:65:06:EA:A0:3E:34:18:D0:62:6E:33:EE:93:65:D2:34:B0:B2:1E:95:EB:FE:E0:91:56:0A:2C:6C:9D:A3:72
            a=setup:actpass
            m=audio 41234 UDP/TLS/RTP/SAVPF 96 0 8
            c=IN IP4 198.51.100.5
            a=recvonly
            a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid
            a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
            a=mid:1
            a=rtcp:9 IN IP4 0.0.0.0
            a=rtcp-mux
            a=ssrc:3302917437 cname:7c3a3b8e-5f0e-4d7f-9c9e-3c3f2b1d0e4a
            a=rtpmap:96 opus/48000/2
            a=rtpmap:0 PCMU/8000
            a=rtpmap:8 PCMA/8000
            a=candidate:8e4b1c3d5f6a7b8c9d0e1f2a3b4c5d6e 1 udp 2130706431 198.51.100.5 41234 typ host
            a=candidate:1f2e3d4c5b6a79880796a5b4c3d2e1f0 1 udp 1694498815 203.0.113.23 41234 typ srflx raddr 198.51.100.5 rport 41234
            a=end-of-candidates
            a=ice-ufrag:Qm3T
            a=ice-pwd:8yRkWHZo1Gq4s3mDJ6xF2b
            a=fingerprint:sha-256 8B:9E:3D:73:71:EC:6D:CD:4B:46:84:35:47:C1:06:D6:E0:7E:5E:5E:38:05:E6:8B:6E:7A:CE:F6:3B:24:DE:88
            a=fingerprint:sha-384 13:7B:91:78:2B:FB:54:09:29:2A:1B:57:0D:9A:29:01:88:80:EF:C5:BB:0A:04:97:17:4D:57:9C:53:BF:AA:32:B8:5A:37:F8:1C:08:FC:FC:78:D9:25:E5:87:57:81:47
            a=fingerprint:sha-512 D7:2F:9C:B0:34:08:16:51:79:FD:89:44:D6:50:19:66:BB:1E:27:B1:51:7C:33:BD:2F:E4:4D:B9:35:DC:80:54:66:65:06:EA:A0:3E:34:18:D0:62:6E:33:EE:93:65:D2:34:B0:B2:1E:95:EB:FE:E0:91:56:0A:2C:6C:9D:A3:72
            a=setup:actpass

            """
    )

    /// GStreamer webrtcbin (1.22-style): session-level ice-options, mids `video0`/`audio1`,
    /// rtcp-fb before fmtp, `OPUS` in capitals, trickled candidates (UDP and TCP active) in the
    /// first section and no end-of-candidates yet.
    static let gstreamer = Fixture(
        name: "GStreamer webrtcbin",
        lines: """
            v=0
            o=- 2893047298164419330 0 IN IP4 0.0.0.0
            s=-
            t=0 0
            a=ice-options:trickle
            a=group:BUNDLE video0 audio1
            m=video 9 UDP/TLS/RTP/SAVPF 96 97
            c=IN IP4 0.0.0.0
            a=setup:actpass
            a=ice-ufrag:oTXrkw7oB5Q3G3N8vd9uWcbZ4cUTnKg5
            a=ice-pwd:pNcgRrW8YSYz6Ri7IfaMtlfNShDvqgQ3
            a=rtcp-mux
            a=rtcp-rsize
            a=recvonly
            a=rtpmap:96 H264/90000
            a=rtcp-fb:96 nack
            a=rtcp-fb:96 nack pli
            a=rtcp-fb:96 ccm fir
            a=rtcp-fb:96 transport-cc
            a=fmtp:96 packetization-mode=1;profile-level-id=42e01f;level-asymmetry-allowed=1
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=extmap:1 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=mid:video0
            a=fingerprint:sha-256 27:80:04:53:24:5D:9A:B4:5C:5C:35:BE:44:B1:28:E7:2C:61:44:E3:98:1E:CE:98:0D:E9:96:0B:98:1B:14:A2
            a=candidate:1 1 UDP 2015363327 198.51.100.7 48702 typ host
            a=candidate:2 1 TCP 1015021823 198.51.100.7 9 typ host tcptype active
            m=audio 9 UDP/TLS/RTP/SAVPF 98
            c=IN IP4 0.0.0.0
            a=setup:actpass
            a=ice-ufrag:oTXrkw7oB5Q3G3N8vd9uWcbZ4cUTnKg5
            a=ice-pwd:pNcgRrW8YSYz6Ri7IfaMtlfNShDvqgQ3
            a=rtcp-mux
            a=rtcp-rsize
            a=recvonly
            a=rtpmap:98 OPUS/48000/2
            a=rtcp-fb:98 transport-cc
            a=fmtp:98 sprop-maxcapturerate=48000;sprop-stereo=0
            a=extmap:1 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
            a=mid:audio1
            a=fingerprint:sha-256 27:80:04:53:24:5D:9A:B4:5C:5C:35:BE:44:B1:28:E7:2C:61:44:E3:98:1E:CE:98:0D:E9:96:0B:98:1B:14:A2

            """
    )
}
