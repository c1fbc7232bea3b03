// swift-tools-version: 6.1
// libFuzzer targets for every parser that reads bytes from outside: RTP, RTCP, RTX, the H.264,
// VP8 and VP9 depacketizers, SDP, WebRTC offers (JSEP) and our answers to them, a WHIP endpoint's answer and Link headers, SRTP unprotect, DTLS datagrams
// from a viewer, the capture socket's messages, rtc-signal's JSON lines (framing, requests, SDP fields), and
// what a client sends rtc-signal's web port (protocol sniffing, WebSocket frames, HTTP requests to its routes). `make fuzz` (scripts/fuzz.sh) builds and runs them.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, and a clone may be called anything.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "rtc-publisher-fuzz",
    dependencies: [
        .package(path: ".."),
        // The same swift-nio the server links (Package.resolved pins it), for NIOEmbedded's channels.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        .executableTarget(name: "FuzzRTPPacket", dependencies: [.product(name: "RTP", package: root)]),
        .executableTarget(name: "FuzzRTCP", dependencies: [.product(name: "RTP", package: root)]),
        .executableTarget(name: "FuzzRTX", dependencies: [.product(name: "RTP", package: root)]),
        .executableTarget(name: "FuzzH264Depacketizer", dependencies: [.product(name: "RTP", package: root)]),
        .executableTarget(name: "FuzzVPXDepacketizer", dependencies: [.product(name: "RTP", package: root)]),
        .executableTarget(name: "FuzzSDP", dependencies: [.product(name: "SDP", package: root)]),
        .executableTarget(
            name: "FuzzJSEP",
            dependencies: [.product(name: "JSEP", package: root), .product(name: "SDP", package: root)]
        ),
        .executableTarget(
            name: "FuzzWHIPAnswer",
            dependencies: [
                .product(name: "JSEP", package: root), .product(name: "SDP", package: root),
                .product(name: "WHIP", package: root),
            ]
        ),
        .executableTarget(name: "FuzzSRTPUnprotect", dependencies: [.product(name: "SRTP", package: root)]),
        .executableTarget(name: "FuzzDTLSDatagram", dependencies: [.product(name: "DTLS", package: root)]),
        .executableTarget(name: "FuzzIngestParser", dependencies: [.product(name: "Ingest", package: root)]),
        .executableTarget(
            name: "FuzzCaptureTarget",
            dependencies: [.product(name: "Capture", package: root), .product(name: "Media", package: root)]
        ),
        // What more than one harness restates (the SDP shape rule of Docs/signaling.md).
        .target(
            name: "FuzzSupport",
            dependencies: [.product(name: "SignalingProtocol", package: root)]
        ),
        .executableTarget(
            name: "FuzzSignalingLine",
            dependencies: [
                "FuzzSupport",
                .product(name: "SignalingProtocol", package: root),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "FuzzSignalingWeb",
            dependencies: [
                "FuzzSupport",
                .product(name: "SignalingServer", package: root),
                .product(name: "SignalingProtocol", package: root),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
