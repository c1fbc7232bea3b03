import Foundation
import Glibc
import SRTP
import TestSupport

/// Minimal RTP sender for the interop test: RFC 3550 headers by hand, RFC 6184 single NAL unit
/// packets, RFC 7587 one Opus packet per RTP packet, all protected in place in one reused buffer.
final class MediaSender {
    private let session: SRTPSession?
    private let socket: LoopbackUDPSocket
    private var buffer = [UInt8](repeating: 0, count: 1500)
    private var videoSequence: UInt16 = 4321

    init(session: SRTPSession?) throws {
        self.session = session
        socket = try LoopbackUDPSocket()
    }

    /// One access unit: its NAL units share the timestamp, the marker is on the last (RFC 6184 §5.1).
    func sendVideoFrame(_ units: [[UInt8]], index: Int, ssrc: UInt32, to port: UInt16) throws {
        let timestamp = UInt32(90_000 + index * 3000)
        for (position, unit) in units.enumerated() {
            let marker = position == units.count - 1
            try sendRTP(
                payloadType: 96,
                marker: marker,
                sequence: videoSequence,
                timestamp: timestamp,
                ssrc: ssrc,
                payload: unit,
                to: port
            )
            videoSequence &+= 1
        }
    }

    /// One 20 ms Opus packet: 960 samples at 48 kHz (RFC 7587 §4.1).
    func sendAudioPacket(_ packet: [UInt8], index: Int, ssrc: UInt32, to port: UInt16) throws {
        let timestamp = UInt32(48_000 + index * 960)
        try sendRTP(
            payloadType: 97,
            marker: index == 0,
            sequence: UInt16(100 + index),
            timestamp: timestamp,
            ssrc: ssrc,
            payload: packet,
            to: port
        )
    }

    /// RFC 3550 §6.6: a compound of an empty receiver report and a BYE, as SRTCP when encrypted.
    func sendBye(ssrc: UInt32, to port: UInt16) throws {
        let ssrcBytes = withUnsafeBytes(of: ssrc.bigEndian, Array.init)
        let packet: [UInt8] = [0x80, 201, 0, 1] + ssrcBytes + [0x81, 203, 0, 1] + ssrcBytes
        buffer.replaceSubrange(0..<packet.count, with: packet)
        let length =
            try session.map { session in
                try buffer.withUnsafeMutableBytes { try session.protectRTCP(buffer: $0, length: packet.count) }
            } ?? packet.count
        try buffer.withUnsafeBytes { try socket.send(UnsafeRawBufferPointer(rebasing: $0[..<length]), to: port) }
    }

    private func sendRTP(
        payloadType: UInt8,
        marker: Bool,
        sequence: UInt16,
        timestamp: UInt32,
        ssrc: UInt32,
        payload: [UInt8],
        to port: UInt16
    ) throws {
        var header: [UInt8] = [0x80, (marker ? 0x80 : 0) | payloadType, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        header += withUnsafeBytes(of: timestamp.bigEndian, Array.init)
        header += withUnsafeBytes(of: ssrc.bigEndian, Array.init)
        let packet = header + payload
        buffer.replaceSubrange(0..<packet.count, with: packet)
        let length =
            try session.map { session in
                try buffer.withUnsafeMutableBytes { try session.protect(buffer: $0, length: packet.count) }
            } ?? packet.count
        try buffer.withUnsafeBytes { try socket.send(UnsafeRawBufferPointer(rebasing: $0[..<length]), to: port) }
    }
}
