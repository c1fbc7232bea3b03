// swift-tools-version: 6.1
// rtc-publisher: a real-time screen-share publisher (H.264 + Opus over SRTP) and its room server.
// Licensed GPL-2.0-or-later (it links libx264); see LICENSE.
import PackageDescription

let package = Package(
    name: "rtc-publisher",
    products: [
        .library(name: "Media", targets: ["Media"]),
        .library(name: "RTP", targets: ["RTP"]),
        .library(name: "SRTP", targets: ["SRTP"]),
        .library(name: "SDP", targets: ["SDP"]),
        .library(name: "DTLS", targets: ["DTLS"]),
        .library(name: "JSEP", targets: ["JSEP"]),
        .library(name: "ICE", targets: ["ICE"]),
        .library(name: "SignalingProtocol", targets: ["SignalingProtocol"]),
        .library(name: "SignalingClient", targets: ["SignalingClient"]),
        .library(name: "SignalingServer", targets: ["SignalingServer"]),
        .executable(name: "rtc-signal", targets: ["rtc-signal"]),
        .executable(name: "rtc-publish", targets: ["rtc-publish"]),
        .executable(name: "rtc-subscribe", targets: ["rtc-subscribe"]),
        .library(name: "Ingest", targets: ["Ingest"]),
        .executable(name: "rtc-capture-sim", targets: ["rtc-capture-sim"]),
        .executable(name: "rtc-encode", targets: ["rtc-encode"]),
        .executable(name: "rtc-capture", targets: ["rtc-capture"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "SystemAudio", targets: ["SystemAudio"]),
        // For the micro-benchmarks in Benchmarks/ (a package of its own).
        .library(name: "Publisher", targets: ["Publisher"]),
        .library(name: "SendEngine", targets: ["SendEngine"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "WHIP", targets: ["WHIP"]),
        .library(name: "CongestionControl", targets: ["CongestionControl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C libraries, found with pkg-config where Debian ships a .pc file.
        .systemLibrary(name: "CX264", pkgConfig: "x264", providers: [.apt(["libx264-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        // Nettle: the AES-CTR and HMAC-SHA1 that libsrtp2's AES-CM suites run on here.
        .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        // OpenSSL 3.0: DTLS 1.2 with use_srtp for WebRTC's DTLS-SRTP (only the DTLS module uses it).
        // Loaded by the first certificate, not linked (Sources/COpenSSL/shim.h): no pkg-config, which
        // would link libssl and libcrypto into every executable; the headers are in /usr/include.
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // libnice 0.1.21 (with GLib/GIO): the RFC 8445 ICE agent of GStreamer's webrtcbin and of Janus.
        // Loaded by the first ICE agent, not linked (Sources/CNice/shim.h): no pkg-config here, as
        // SwiftPM would link its libraries into every executable; GLib's headers come from
        // `glibHeaders`, given to each target that loads this module.
        .systemLibrary(name: "CNice", providers: [.apt(["libnice-dev"])]),
        // Debian's libyuv-dev has no pkg-config file; the module map links "yuv" itself.
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
        // XCB 1.15 with MIT-SHM, XFIXES, RandR and DAMAGE: the X11 screen capture. One module:
        // pkg-config finds xcb; the module map links the four extension libraries beside it.
        .systemLibrary(
            name: "CXCB",
            pkgConfig: "xcb",
            providers: [
                .apt([
                    "libxcb1-dev", "libxcb-shm0-dev", "libxcb-xfixes0-dev", "libxcb-randr0-dev", "libxcb-damage0-dev",
                ])
            ]
        ),

        // libvpx 1.12: the VP8 and VP9 encoders (and, for the tests, decoders).
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        // Linux process calls Swift cannot make itself (prctl is variadic): header only.
        .systemLibrary(name: "CLinux"),

        // Raw frames and PCM in, H.264 access units and Opus packets out. Depends only on C bindings.
        .target(
            name: "Media",
            dependencies: ["CX264", "COpus", "CYUV", "CSpeexDSP"],
            swiftSettings: pixelLoopsOptimized
        ),

        // VP8 and VP9 encoding (libvpx, real time, screen content) for viewers that cannot take
        // H.264: the same I420 `VideoFrame` in as H264Encoder, coded frames out for the RTP
        // module's VP8Payloader and VP9Payloader.
        .target(name: "VPX", dependencies: ["CVPX", "Media"]),

        // X11 screen capture (Docs/capture.md): the screen, a RandR monitor, a window or a region
        // through MIT-SHM (GetImage when SHM cannot attach), the XFIXES cursor, DAMAGE as a hint
        // and a block comparison as the truth of what changed. Pixels out as borrowed BGRX.
        .target(name: "Capture", dependencies: ["CXCB", "Media"], swiftSettings: pixelLoopsOptimized),

        // libpulse 16: system audio from PulseAudio or PipeWire's pulse server. Loaded by the first
        // capture, not linked (Sources/CPulse/shim.h): no pkg-config, which would link it; its
        // headers are in /usr/include.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        // System audio (Docs/capture.md): the default output's monitor (app audio) and the default
        // input (mic) through libpulse on its own thread, stamped with capture time, in bounded
        // queues the media thread drains; a source that goes away is silence until it is back.
        .target(name: "SystemAudio", dependencies: ["CPulse", "Media"]),

        // RTP/RTCP packets, H.264, VP8, VP9 and Opus payloaders, clocks (RFC 3550, 6184, 7741, 9628,
        // 7587, 4585, 5104).
        // Pure bytes and numbers: depends on nothing.
        .target(name: "RTP"),
        // SRTP/SRTCP through libsrtp2 (RFC 3711, RFC 7714). Works on bytes; no media code.
        .target(name: "SRTP", dependencies: ["CSRTP", "CNettle"]),
        // SDP writer and parser (RFC 8866, RFC 4568 crypto) and the ICE attributes' grammar
        // (RFC 8839 candidates and credentials), which ICE and JSEP share. Depends on nothing.
        .target(name: "SDP"),
        // DTLS-SRTP (RFC 5763, 5764) through OpenSSL on datagrams in and out, no sockets: the
        // certificate and its fingerprint, the handshake, the SRTP keys for SRTP's sessions.
        .target(name: "DTLS", dependencies: ["COpenSSL", "SRTP"]),
        // WebRTC offer/answer (JSEP, RFC 8829) for a sendonly publisher: reads a subscriber's
        // offer (ICE, DTLS fingerprint and setup, BUNDLE, candidates, extmap) and writes our
        // answer. Pure values: no sockets, no ICE or DTLS code. Depends on SDP only.
        .target(name: "JSEP", dependencies: ["SDP"]),
        // ICE (RFC 8445, 7675 consent) through libnice on its own GLib thread: candidates in and out,
        // the selected pair and its socket, datagrams classed by RFC 7983. Knows no DTLS or SRTP.
        // Candidates and credentials are SDP's values (one parser and writer for `a=candidate`).
        .target(name: "ICE", dependencies: ["CNice", "SDP"], swiftSettings: glibHeaders),
        // One WebRTC viewer's transport: ICE, then DTLS-SRTP over the selected pair, RFC 7983
        // demux; ends in the SRTP keys and the socket the publisher's destination sends on.
        .target(name: "WebRTC", dependencies: ["ICE", "DTLS", "JSEP", "Transport"], swiftSettings: glibHeaders),

        // UDP sockets for media datagrams (no allocation per packet). Depends on nothing.
        .target(name: "Transport"),

        // Send-side congestion control (draft-ietf-rmcat-gcc-02, Docs/congestion.md): the delay-
        // and loss-based estimates, probing, pacing decisions and the receivers' bitrate policy;
        // pure logic on times and sizes, no I/O. RTP for the feedback it reads.
        .target(name: "CongestionControl", dependencies: ["RTP"]),

        // WHIP (RFC 9725) over HTTP/1.1: POST the offer, redirects, Link ICE servers, PATCH, DELETE.
        .target(
            name: "WHIP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // Threads, locks and process settings the publisher's parts share: a condition lock and
        // `Locked`, blocking on async work from a thread, the media threads' runner, glibc's
        // picture mappings, decimal formatting without Foundation. Depends on nothing.
        .target(name: "ProcessSupport", dependencies: ["CLinux"]),

        // When a captured picture is encoded: change-driven encoding, refreshes until the quality
        // converges, idle repeats on a still screen (Docs/cadence.md). No dependencies.
        .target(name: "Cadence"),

        // The send engine: where encoded media becomes protected datagrams (payload once, copy,
        // protect and send per destination, RTCP reports, NACK/RTX, PLI/FIR, REMB, transport-wide
        // congestion control and the pacer, the SDP each receiver gets). Datagrams leave through
        // `DatagramSink`, so the whole path runs in memory in tests. No signaling, ICE or WHIP.
        .target(
            name: "SendEngine",
            dependencies: ["Media", "RTP", "SRTP", "SDP", "Transport", "CongestionControl", "ProcessSupport"]
        ),

        // The media pipeline: the media and sender threads, their queue and hand-offs, and the
        // inputs they run (files and the test source, the ingest socket, the X11 screen, system
        // audio) through one video path and one audio path into the send engine.
        .target(
            name: "MediaPipeline",
            dependencies: [
                "SendEngine", "Media", "RTP", "Ingest", "Capture", "SystemAudio", "ProcessSupport", "Cadence",
                "SDP", "VPX",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The publisher's sessions, in folders: the session that runs a publish (Session), its
        // presence in a room (Room), WebRTC viewers (WebRTC) and WHIP publishing (WHIP).
        .target(
            name: "Publisher",
            dependencies: [
                "MediaPipeline", "SendEngine", "ProcessSupport", "Media", "RTP", "SRTP", "SDP", "Transport",
                "SignalingClient", "SignalingProtocol", "Ingest", "Capture", "SystemAudio", "WebRTC", "JSEP", "DTLS",
                "ICE", "WHIP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: glibHeaders
        ),

        // rtc-publish's command line: the option groups, the types their values parse into, and
        // the validation that makes PublishOptions (pure but for the files it checks), so tests
        // run every bad argument in-process.
        .target(
            name: "PublishCommand",
            dependencies: [
                "Publisher", "SendEngine", "Media", "SRTP", "Transport", "Ingest", "ICE", "WHIP", "Capture",
                "SystemAudio", "SignalingProtocol", "Cadence", "SDP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // rtc-publish: parses and validates (PublishCommand), then runs Publisher's PublishSession.
        .executableTarget(
            name: "rtc-publish",
            dependencies: [
                "PublishCommand", "Publisher", "ProcessSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: glibHeaders,
            linkerSettings: leanExecutable + linkOrder
        ),

        // A viewer in a room: subscribe, write the answer SDP, optionally start a player.
        .target(
            name: "Viewer",
            dependencies: [
                "SignalingClient", "SignalingProtocol", "Transport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "rtc-subscribe",
            dependencies: [
                "Viewer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: leanExecutable
        ),

        // The capture process → host socket protocol (Docs/ingest.md): wire format, parser and
        // serializer, the host's server, and the reference capture client used by rtc-capture-sim.
        .target(
            name: "Ingest",
            dependencies: [
                "Media", "ProcessSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: pixelLoopsOptimized
        ),

        // `rtc-capture-sim`: plays the iOS broadcast extension against an ingest server.
        .executableTarget(
            name: "rtc-capture-sim",
            dependencies: [
                "Ingest",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: leanExecutable
        ),

        // `rtc-capture`: the X11 capture as a process of its own, a capture client of
        // `rtc-publish --ingest` (the source articles' two-process design).
        .executableTarget(
            name: "rtc-capture",
            dependencies: [
                "Capture", "SystemAudio", "Ingest", "Media", "ProcessSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: leanExecutable
        ),

        // Encodes a source to files (H.264 Annex B, Ogg Opus) so a stock decoder can check them.
        .executableTarget(
            name: "rtc-encode",
            dependencies: [
                "Media", "Transport", "VPX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: leanExecutable
        ),

        // Wire messages, validation, line framing and tokens, shared by the server and the client.
        .target(
            name: "SignalingProtocol",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio")
            ]
        ),

        // Join tokens (HMAC-SHA256): made by `rtc-signal token`, checked by the server. Apart from
        // the protocol so that clients, which only pass a token on, do not link swift-crypto (and
        // with it all of Foundation, which swift-crypto imports on Linux).
        .target(
            name: "SignalingAuth",
            dependencies: [
                "SignalingProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Signaling/SignalingAuth"
        ),

        // The room server as a library, so tests run it in-process on a free port.
        .target(
            name: "SignalingServer",
            dependencies: [
                "SignalingProtocol",
                "SignalingAuth",
                "ViewerPage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Signaling/SignalingServer"
        ),

        // The room's viewer page, Resources/viewer.html (with its CSS) and Resources/viewer.js,
        // embedded in the code as byte arrays: rtc-signal serves it from the binary alone, nothing
        // read from disk or fetched from outside.
        .target(
            name: "ViewerPage",
            path: "Signaling/ViewerPage",
            resources: [.embedInCode("Resources/viewer.html"), .embedInCode("Resources/viewer.js")]
        ),

        // `rtc-signal`: parses arguments, bootstraps logging, runs SignalingServer.
        .executableTarget(
            name: "rtc-signal",
            dependencies: [
                "SignalingServer",
                "SignalingProtocol",
                "SignalingAuth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Signaling/rtc-signal",
            linkerSettings: leanExecutable
        ),

        // What rtc-publish and rtc-subscribe use to talk to rtc-signal.
        .target(
            name: "SignalingClient",
            dependencies: [
                "SignalingProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .testTarget(
            name: "SignalingTests",
            dependencies: [
                "SignalingProtocol",
                "SignalingAuth",
                "SignalingServer",
                "SignalingClient",
                "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "MediaTests", dependencies: ["Media", "COpus"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport", "TestSupport"]),
        .testTarget(name: "RTPTests", dependencies: ["RTP"]),
        // libvpx's encoders through VPXEncoder, our RTP payload formats, and libvpx's decoders
        // reading back what came through them.
        .testTarget(name: "VPXTests", dependencies: ["VPX", "CVPX", "Media", "RTP"]),
        // The X11 capture against a private Xvfb with real X clients drawing on it.
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "Media", "CXCB", "TestSupport"]),
        // System audio against a private PulseAudio daemon with null sinks and real tones.
        .testTarget(name: "SystemAudioTests", dependencies: ["SystemAudio", "Media", "TestSupport"]),
        // A test X client: the synthetic screen (with its timecode strip) painted into an X window,
        // or a dark window that flashes white as it plays a click (libpulse), for the A/V sync test.
        .executableTarget(
            name: "rtc-testscreen",
            dependencies: [
                "CXCB", "CYUV", "CPulse", "Media",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Tools/rtc-testscreen",
            // A test tool: it calls libpulse directly and links it (the product loads it lazily).
            linkerSettings: [.linkedLibrary("pulse")]
        ),
        .testTarget(name: "CongestionControlTests", dependencies: ["CongestionControl", "RTP"]),
        .testTarget(
            name: "IngestTests",
            dependencies: [
                "Ingest", "rtc-capture-sim", "Media", "RTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The send engine in memory and against real receivers on loopback.
        .testTarget(
            name: "SendEngineTests",
            dependencies: [
                "SendEngine", "Media", "RTP", "SRTP", "SDP", "Transport", "CongestionControl", "TestSupport",
            ]
        ),
        // The media and sender threads, their queue and hand-offs, the ingest path.
        .testTarget(
            name: "MediaPipelineTests",
            dependencies: [
                "MediaPipeline", "SendEngine", "ProcessSupport", "Media", "RTP", "SRTP", "Transport", "Ingest",
                "Cadence", "VPX", "TestSupport",
            ]
        ),
        .testTarget(name: "ProcessSupportTests", dependencies: ["ProcessSupport"]),
        .testTarget(name: "CadenceTests", dependencies: ["Cadence"]),
        .testTarget(
            name: "PublisherTests",
            dependencies: ["Publisher", "MediaPipeline", "SendEngine", "ProcessSupport"],
            swiftSettings: glibHeaders
        ),
        // rtc-publish's arguments parsed and validated in-process: every bad argument's message.
        .testTarget(
            name: "PublishCommandTests",
            dependencies: [
                "PublishCommand", "Publisher", "Media", "Transport", "Ingest", "ICE", "WHIP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "SRTPTests", dependencies: ["SRTP", "CSRTP"], exclude: ["Reference"]),
        // DTLS against itself in memory and against the openssl CLI over loopback UDP.
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "SRTP", "COpenSSL", "TestSupport"]),
        // Two real libnice agents in one process over loopback: roles, prflx, consent, the fast path.
        .testTarget(name: "ICETests", dependencies: ["ICE", "JSEP", "SDP"], swiftSettings: glibHeaders),
        .testTarget(name: "WebRTCTests", dependencies: ["WebRTC", "TestSupport"], swiftSettings: glibHeaders),
        .testTarget(
            name: "WHIPTests",
            dependencies: [
                "WHIP", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(name: "SDPTests", dependencies: ["SDP", "SRTP", "TestSupport"], exclude: ["FuzzFindings"]),
        .testTarget(name: "JSEPTests", dependencies: ["JSEP", "SDP"]),
        // The executables as users run them, with a real ffmpeg on the SDP files they write.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Ingest", "Media", "SDP", "SRTP", "Transport", "TestSupport", "JSEP"]
        ),
        // What end-to-end tests share: a real ffmpeg run with its output captured, loopback ports.
        // RTCP feedback end to end in-process: MediaSender, a lossy relay, a receiver that NACKs.
        .testTarget(
            name: "FeedbackTests",
            dependencies: ["SendEngine", "Media", "RTP", "SRTP", "SDP", "Transport", "TestSupport"]
        ),
        // RTCP feedback with a real peer: GStreamer's rtpbin reports, NACKs and asks for key frames.
        .testTarget(
            name: "PeerFeedbackTests",
            dependencies: ["SendEngine", "Media", "RTP", "SRTP", "Transport", "TestSupport"]
        ),
        // Media: the timecode strip the WebRTC peers' pictures are read back with.
        .target(name: "TestSupport", dependencies: ["RTP", "SRTP", "Transport", "Media"], path: "Tests/TestSupport"),
    ],
    swiftLanguageModes: [.v6]
)

/// Release builds of our targets put each function in a section of its own. swiftc otherwise
/// emits most of a file's functions into one `.text` section, and the link order
/// (`linkOrder`) can only move whole sections: one function that runs then drags its file's
/// other functions along, and the code a job runs spreads over megabytes instead of packing.
for target in package.targets where [.regular, .executable].contains(target.type) {
    target.swiftSettings =
        (target.swiftSettings ?? [])
        + [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(platforms: [.linux], configuration: .release))]
}

/// Media and Ingest touch every pixel in Swift loops (the synthetic screen, the full-range
/// mapping, the capture simulator's NV12 writer). Unoptimised, those loops run 20–50 times
/// slower, and the debug binaries the tests run could no longer keep 30 fps at a phone's
/// 886x1920: the tests would then measure the build mode, not the product. So these two
/// modules are optimised in debug builds too (release builds are anyway).
var pixelLoopsOptimized: [SwiftSetting] { [.unsafeFlags(["-O"], .when(configuration: .debug))] }

/// GLib's two header folders, which the CNice module's headers include: what `pkg-config --cflags
/// nice` gives, less the folders of libraries libnice's headers do not include. Given here rather
/// than through CNice's `pkgConfig` because SwiftPM adds a pkg-config package's `Libs` to every
/// executable depending on it, and libnice and GLib must not be linked: the first ICE agent loads
/// them (Sources/CNice/shim.h), which keeps their 6 MB of resident pages out of every job without
/// one. Every target that loads the module, itself or through ICE, needs these (a missing one is
/// a "'glib.h' file not found" build error).
var glibHeaders: [SwiftSetting] {
    #if arch(arm64)
        let multiarch = "aarch64-linux-gnu"
    #else
        let multiarch = "x86_64-linux-gnu"
    #endif
    return [.unsafeFlags(["-Xcc", "-I/usr/include/glib-2.0", "-Xcc", "-I/usr/lib/\(multiarch)/glib-2.0/include"])]
}

/// How the executables are linked on Linux. Both choices cut what the loader maps and touches
/// at every start; together they take 3 MB off rtc-publish's peak resident memory
/// (Docs/benchmarks.md).
/// - `--no-export-dynamic` undoes the `-export-dynamic` in the static Swift runtime's link
///   arguments. Exporting every symbol put 22,000 names (1.3 MB of `.dynsym`, `.dynstr` and
///   hash table) into the loaded image and made each a root that `--gc-sections` had to keep.
///   Nothing looks our symbols up at run time: Swift finds types and conformances through its
///   metadata sections, and its backtracer reads the file's own symbol table.
/// - lld with `-z pack-relative-relocs` (DT_RELR; glibc 2.36 and later, which Debian 12 has).
///   A position-independent binary with the Swift runtime inside carries about 60,000 relative
///   relocations: 1.4 MB as RELA, read at every start, 12 KB as RELR. The toolchain's default
///   linker (gold) cannot write RELR; lld ships with the toolchain.
var leanExecutable: [LinkerSetting] {
    [
        .unsafeFlags(
            [
                "-use-ld=lld",
                "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                "-Xlinker", "--no-export-dynamic",
            ],
            .when(platforms: [.linux])
        )
    ]
}

/// rtc-publish's release link places the functions it runs (scripts/rtc-publish.order, written
/// by `make link-order` from callgrind runs of its usual jobs) side by side at the front of
/// `.text`. A fault on program text maps the 64 KB around it, so the same 2,500 functions spread
/// over 14 MB kept about 7.5 MB resident; packed, they take 2.5 MB less (Docs/benchmarks.md). A
/// stale list only loses that saving: names the binary no longer has are ignored.
var linkOrder: [LinkerSetting] {
    [
        .unsafeFlags(
            [
                "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/rtc-publish.order",
                "-Xlinker", "--no-warn-symbol-ordering",
            ],
            .when(platforms: [.linux], configuration: .release)
        )
    ]
}
