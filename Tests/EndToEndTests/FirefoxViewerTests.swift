import Foundation
import TestSupport
import Testing

/// The room in Debian's headless Firefox ESR (Tests/Peers/firefox_viewer.py): the viewer page
/// joins, offers and plays, or is refused. Firefox, rtc-signal and rtc-publish run in a network
/// namespace made for the test, with only loopback: nothing the browser does can leave it.
extension PublishEndToEndTests {
    /// Firefox as Debian's users have it offers VP8, VP9 and AV1 and no H.264. In the same room at
    /// the same time, headless Chromium gets H.264 and Firefox VP8 from a second encoder: both
    /// play (≥ 27 fps, no freeze, timecodes in order, audio), the publisher runs two encoders
    /// while Firefox watches, and the VP8 one stops when Firefox leaves.
    @Test func stockFirefoxGetsVP8BesideChromiumOnH264() throws {
        let namespace = try NetworkNamespace(purpose: "firefox")
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 90, launcher: namespace.launcher)
        let url = "http://127.0.0.1:\(port)/rooms/123456"
        let chromium = try ChromiumViewer(
            url: url,
            options: .init(seconds: 26, deadline: 100),
            directory: directory,
            launcher: namespace.launcher
        )
        let firefox = try FirefoxViewer(
            url: url,
            options: .init(seconds: 10, preferences: .stock, deadline: 100),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(firefox.process.waitForExit(deadlineSeconds: 110), "\(firefox.output)")
        #expect(chromium.process.waitForExit(deadlineSeconds: 110), "\(chromium.output)")
        // A second after Chromium left: the last statistics record comes after both.
        Thread.sleep(forTimeInterval: 1.5)
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.output)")
        signal.interrupt()
        let fox = try firefox.summary()
        let chrome = try chromium.summary()
        #expect(fox.ok, "\(fox.error ?? "")\n\(firefox.output)\n\(publish.output)")
        #expect(chrome.ok, "\(chrome.error ?? "")\n\(chromium.output)\n\(publish.output)")
        let foxTab = try #require(fox.tabs.first, "\(firefox.output)")
        let chromeTab = try #require(chrome.tabs.first, "\(chromium.output)")
        #expect(foxTab.videoCodec == "video/VP8", "\(foxTab.videoCodec ?? "no codec"): \(foxTab.overlay ?? "")")
        #expect(chromeTab.videoCodec == "video/H264", "\(chromeTab.videoCodec ?? "no codec")")
        // Firefox's frames are the page's frame callbacks (its playback quality stays 0).
        #expect((foxTab.frames.fps ?? 0) >= 27, "\(foxTab.frames)")
        #expect(foxTab.frames.freezes == 0, "\(foxTab.frames)")
        #expect(foxTab.audio.arriving, "\(foxTab.audio)")
        #expect(Double(foxTab.timecodes.count) >= 0.8 * 30 * 10, "\(foxTab.timecodes)")
        #expect(foxTab.timecodes.inOrder, "\(foxTab.timecodes)")
        #expect((chromeTab.playbackQuality.fps ?? 0) >= 27, "\(chromeTab.playbackQuality)")
        #expect(chromeTab.frames.freezes == 0, "\(chromeTab.frames)")
        #expect(chromeTab.timecodes.inOrder, "\(chromeTab.timecodes)")
        // Two encoders: x264 throughout, and one VP8, opened for Firefox and closed after it.
        let encoders = try Self.lastEncoders(directory)
        try #require(encoders.count == 1, "\(encoders)")
        #expect(encoders[0]["codec"] as? String == "VP8", "\(encoders)")
        #expect(encoders[0]["opened"] as? Int == 1, "\(encoders)")
        #expect(encoders[0]["running"] as? Bool == false, "\(encoders)")
        #expect((encoders[0]["frames"] as? Int ?? 0) >= 300, "\(encoders)")
        let status = publish.output.split(separator: "\n").last { $0.contains("VP8 ") && $0.contains("viewer") } ?? ""
        print(
            "firefox \(fox.browser ?? "?") (stock) beside chromium: firefox \(foxTab.videoCodec ?? "?") "
                + "\(foxTab.frames.fps ?? 0) fps, \(foxTab.frames.freezes) freezes (max gap \(foxTab.frames.maxGapMs ?? -1) ms), "
                + "timecodes \(foxTab.timecodes.count) in order \(foxTab.timecodes.inOrder), first frame "
                + "\(foxTab.firstFrameMs ?? -1) ms; chromium \(chromeTab.videoCodec ?? "?") \(chromeTab.playbackQuality.fps ?? 0) fps, "
                + "\(chromeTab.frames.freezes) freezes; encoder \(encoders[0]); status: \(status)"
        )
    }

    /// `--codecs vp9,vp8`: stock Firefox, which offers VP8 first, gets VP9 (profile 0, RFC 9628
    /// non-flexible mode) and plays it: ≥ 27 fps, no freeze, timecodes in order.
    @Test func stockFirefoxGetsVP9WhenThePublisherPrefersIt() throws {
        let namespace = try NetworkNamespace(purpose: "firefox")
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 90,
            arguments: ["--codecs", "vp9,vp8"],
            launcher: namespace.launcher
        )
        let browser = try FirefoxViewer(
            url: "http://127.0.0.1:\(port)/rooms/123456",
            options: .init(seconds: 8, preferences: .stock, deadline: 100),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(browser.process.waitForExit(deadlineSeconds: 110), "\(browser.output)")
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.output)")
        signal.interrupt()
        let summary = try browser.summary()
        #expect(summary.ok, "\(summary.error ?? "")\n\(browser.output)\n\(publish.output)")
        let tab = try #require(summary.tabs.first, "\(browser.output)")
        #expect(tab.videoCodec == "video/VP9", "\(tab.videoCodec ?? "no codec"): \(tab.overlay ?? "")")
        #expect((tab.frames.fps ?? 0) >= 27, "\(tab.frames)")
        #expect(tab.frames.freezes == 0, "\(tab.frames)")
        #expect(Double(tab.timecodes.count) >= 0.8 * 30 * 8, "\(tab.timecodes)")
        #expect(tab.timecodes.inOrder, "\(tab.timecodes)")
        let encoders = try Self.lastEncoders(directory)
        #expect(encoders.first?["codec"] as? String == "VP9", "\(encoders)")
        let frames = encoders.first?["frames"] as? Int ?? 0
        let nanoseconds = encoders.first?["encodeNanoseconds"] as? Int ?? 0
        print(
            "firefox (stock, --codecs vp9,vp8): \(tab.videoCodec ?? "?") \(tab.frames.fps ?? 0) fps, "
                + "\(tab.frames.freezes) freezes (max gap \(tab.frames.maxGapMs ?? -1) ms), timecodes "
                + "\(tab.timecodes.count) in order \(tab.timecodes.inOrder); VP9 encoder \(frames) frames, "
                + "\(String(format: "%.2f", Double(nanoseconds) / Double(max(frames, 1)) / 1e6)) ms each"
        )
    }

    /// A publisher that sends only H.264 (`--codecs h264`) refuses stock Firefox, and the page
    /// shows why, naming what Firefox offered and what we send.
    @Test func stockFirefoxIsRefusedWithAReasonWhenOnlyH264IsSent() throws {
        let namespace = try NetworkNamespace(purpose: "firefox")
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 90,
            arguments: ["--codecs", "h264"],
            launcher: namespace.launcher
        )
        let browser = try FirefoxViewer(
            url: "http://127.0.0.1:\(port)/rooms/123456",
            options: .init(seconds: 10, preferences: .stock, deadline: 100),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(browser.process.waitForExit(deadlineSeconds: 110), "\(browser.output)")
        let summary = try browser.summary()
        // No video: the run ends at the page's error, with the page's own words.
        #expect(!summary.ok && summary.tabs.isEmpty, "\(browser.output)")
        let error = summary.error ?? ""
        let page = try #require(summary.pages?.first, "\(browser.output)")
        let status = page.status ?? ""
        #expect(page.state == "error", "\(page)")
        #expect(error.contains("the page stopped before its first frame"), "\(error)")
        #expect(status.contains("subscribe-rejected") && status.contains("offer refused"), "\(status)")
        for codec in ["VP8", "VP9", "AV1"] {
            #expect(status.contains(codec), "the refusal does not name Firefox's \(codec): \(status)")
        }
        // The publisher said the same on its side.
        let refusal = publish.output.split(separator: "\n").first { $0.contains("offer refused") }
        #expect(refusal?.contains("VP8") == true, "\(publish.output)")
        publish.interrupt()
        signal.interrupt()
        print(
            "firefox \(summary.browser ?? "?") (stock, --codecs h264), started in \(summary.startSeconds ?? -1) s: \(status)"
        )
    }

    /// With the preferences that make it offer H.264, Firefox plays the room page for 10 s:
    /// ≥ 27 frames a second shown, no freeze, the timecodes in order, audio arriving, H.264.
    @Test func firefoxWithH264EnabledPlaysTheRoomPage() throws {
        let namespace = try NetworkNamespace(purpose: "firefox")
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 90, launcher: namespace.launcher)
        let browser = try FirefoxViewer(
            url: "http://127.0.0.1:\(port)/rooms/123456",
            options: .init(seconds: 10, preferences: .h264, deadline: 100),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(browser.process.waitForExit(deadlineSeconds: 110), "\(browser.output)")
        let summary = try browser.summary()
        #expect(summary.ok, "\(summary.error ?? "")\n\(browser.output)\n\(publish.output)")
        let tab = try #require(summary.tabs.first, "\(browser.output)")
        #expect(tab.videoCodec == "video/H264", "\(tab.videoCodec ?? "no codec"): \(tab.overlay ?? "")")
        // Firefox's frames are the page's frame callbacks (its playback quality stays 0).
        #expect((tab.frames.fps ?? 0) >= 27, "\(tab.frames)")
        #expect(tab.frames.freezes == 0, "\(tab.frames)")
        #expect(tab.audio.arriving, "\(tab.audio)")
        #expect(Double(tab.timecodes.count) >= 0.8 * 30 * 10, "\(tab.timecodes)")
        #expect(tab.timecodes.inOrder, "\(tab.timecodes)")
        publish.interrupt()
        signal.interrupt()
        print(
            "firefox \(summary.browser ?? "?") (h264), started in \(summary.startSeconds ?? -1) s: \(tab.videoCodec ?? "?") "
                + "\(tab.width)x\(tab.height) \(tab.frames.fps ?? 0) fps (\(tab.frames.callbacks) frames), "
                + "\(tab.frames.freezes) freezes (max gap \(tab.frames.maxGapMs ?? -1) ms), timecodes "
                + "\(tab.timecodes.count) in order \(tab.timecodes.inOrder) (\(tab.timecodes.skipped) skipped), "
                + "audio \(tab.audio.arriving), first frame \(tab.firstFrameMs ?? -1) ms (after the answer "
                + "\(tab.firstFrameAfterAnswerMs ?? -1) ms), glass-to-glass p50 \(tab.glassToGlassMs.p50 ?? -1) "
                + "p95 \(tab.glassToGlassMs.p95 ?? -1) ms; overlay: \(tab.overlay ?? "")"
        )
    }
}
