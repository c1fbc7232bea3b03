import Testing

@testable import SendEngine

/// A WebRTC viewer's own payload type numbers go into its copy of each packet, marker kept.
@Suite struct PayloadTypeRewriteTests {
    @Test(
        arguments: [
            // (second header byte as cut, as the viewer gets it)
            (UInt8(96), UInt8(102)),  // video, no marker
            (0x80 | 96, 0x80 | 102),  // video, marker kept
            (97, 111),  // audio
            (0x80 | 97, 0x80 | 111),
            (98, 98),  // another type (our RTX is written with the viewer's number already)
            (0x80 | 0x7F, 0x80 | 0x7F),
        ] as [(UInt8, UInt8)]
    )
    func rewritesOnlyOurTwoTypes(sent: UInt8, expected: UInt8) {
        let rewrite = PayloadTypeRewrite(sentVideo: 96, sentAudio: 97, video: 102, audio: 111, retransmission: 103)
        var packet: [UInt8] = [0x80, sent, 0x12, 0x34]
        packet.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { rewrite.rewrite(base) }
        }
        #expect(packet == [0x80, expected, 0x12, 0x34])
    }
}
