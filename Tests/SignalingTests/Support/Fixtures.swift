import SignalingProtocol

/// Values the tests share, written out so expectations can be exact.
enum Fixture {
    static func room(_ name: String) throws -> RoomID {
        try RoomID(validating: name)
    }

    static func uid(_ name: String) throws -> MemberID {
        try MemberID(validating: name)
    }

    static let screenSDP = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=screen\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=video 0 RTP/SAVP 96\r
        a=rtpmap:96 H264/90000\r

        """

    static func screen(_ label: String = "screen") -> StreamDescription {
        StreamDescription(kind: .screen, codecs: ["H264", "opus"], sdp: screenSDP + "a=label:\(label)\r\n")
    }

    static let camera = StreamDescription(kind: .camera, codecs: ["H264"], sdp: screenSDP)

    static func receive(port: Int = 5004) -> ReceiveDescription {
        ReceiveDescription(
            address: "127.0.0.1",
            videoPort: port,
            audioPort: port + 2,
            rtcpMux: false,
            cryptoSuites: ["AES_CM_128_HMAC_SHA1_80"]
        )
    }

    static func answerSDP(for subscriber: String) -> String {
        screenSDP + "a=subscriber:\(subscriber)\r\n"
    }
}
