#!/usr/bin/env python3
"""A real WebRTC subscriber on aiortc: joins an rtc-signal room, offers recvonly video + audio
(JSEP, BUNDLE, rtcp-mux, all candidates in the offer), applies the publisher's answer and records
every decoded picture and audio frame (see room.py for the files and summary.json).

Runs in the project's virtual environment (scripts/setup.sh makes it with a pinned aiortc):

    out/venv/bin/python Tests/Peers/aiortc_subscriber.py --signal 127.0.0.1:8443 --room 123456 \
        --uid bob --publisher alice_sub --seconds 10 --out out/bob

Loopback: aioice never gathers 127.0.0.1 (its host-address list skips it) and aiortc asks a
public STUN server by default. We give no ICE servers and replace aioice's host-address list with
the one --ice-address (default 127.0.0.1), so the offer carries exactly one host candidate there.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import asyncio  # noqa: E402
import importlib.metadata  # noqa: E402

import room  # noqa: E402

try:
    import aioice.ice
    import av
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    from aiortc.mediastreams import MediaStreamError
    from aiortc.rtcconfiguration import RTCBundlePolicy
    from aiortc.rtcrtpreceiver import RTCRtpReceiver
except ImportError as error:
    print(
        f"aiortc_subscriber: {error}: run it with out/venv/bin/python (scripts/setup.sh makes it)",
        file=sys.stderr,
    )
    sys.exit(2)


def starts_key_frame(payload):
    """True when an H.264 RTP payload (RFC 6184) begins an IDR picture: a single IDR NAL unit, a
    STAP-A holding one, or the first FU-A fragment of one."""
    if not payload:
        return False
    kind = payload[0] & 0x1F
    if kind == 5:
        return True
    if kind == 28:
        return len(payload) > 1 and payload[1] & 0x80 != 0 and payload[1] & 0x1F == 5
    if kind == 24:
        offset = 1
        while offset + 2 < len(payload):
            size = int.from_bytes(payload[offset : offset + 2], "big")
            if payload[offset + 2] & 0x1F == 5:
                return True
            offset += 2 + size
    return False


def starts_vp8_key_frame(payload):
    """True when a VP8 RTP payload (RFC 7741 section 4.2) begins a key frame: S=1 and PID=0 in
    the descriptor, then the frame's first byte with P (bit 0) clear (RFC 6386 section 9.1)."""
    if len(payload) < 1 or payload[0] & 0x10 == 0 or payload[0] & 0x07 != 0:
        return False
    offset = 1
    if payload[0] & 0x80:
        if len(payload) < 2:
            return False
        extension = payload[1]
        offset = 2
        if extension & 0x80:  # I: PictureID, 7 or 15 bits
            if len(payload) <= offset:
                return False
            offset += 2 if payload[offset] & 0x80 else 1
        if extension & 0x40:  # L: TL0PICIDX
            offset += 1
        if extension & 0x30:  # T or K: TID/Y/KEYIDX
            offset += 1
    return len(payload) > offset and payload[offset] & 0x01 == 0


def starts_vp9_key_frame(payload):
    """True when a VP9 RTP payload (RFC 9628 section 4.2) begins a key frame: B=1 and P=0."""
    return len(payload) >= 1 and payload[0] & 0x08 != 0 and payload[0] & 0x40 == 0


KEY_FRAME_STARTS = {
    "video/h264": starts_key_frame,
    "video/vp8": starts_vp8_key_frame,
    "video/vp9": starts_vp9_key_frame,
}


def watch_video_packets(peer):
    """Shows the peer's recorder every video RTP packet before aiortc uses it, by wrapping the
    receiver's packet entry point (aiortc 1.16, pinned in scripts/setup.sh): the sequence numbers
    that arrived as sent, the ones RTX brought back, and where key frames start; and every
    packet's payload size, video and audio (the viewer's received rate). Also tells the peer the
    video's media SSRC, which a PLI must name (aiortc's getStats reports one inbound stream per
    receiver, the RTX one once repairs arrived)."""
    recorder = peer.recorder
    handle = RTCRtpReceiver._handle_rtp_packet

    async def watched(receiver, packet, arrival_time_ms):
        codecs = getattr(receiver, "_RTCRtpReceiver__codecs", {})
        codec = codecs.get(packet.payload_type)
        mime = getattr(codec, "mimeType", "").lower()
        if mime.startswith(("video/", "audio/")):
            recorder.rtp_payload(mime.split("/")[0], len(packet.payload))
        if mime in KEY_FRAME_STARTS:
            peer.video_ssrc = packet.ssrc
            peer.video_mime = mime
            recorder.set("videoCodec", mime.split("/")[1].upper())
            recorder.video_packet(packet.sequence_number, False, KEY_FRAME_STARTS[mime](packet.payload))
        elif mime == "video/rtx" and len(packet.payload) >= 2:
            original = int.from_bytes(packet.payload[:2], "big")
            starts = KEY_FRAME_STARTS.get(peer.video_mime, starts_key_frame)
            recorder.video_packet(original, True, starts(packet.payload[2:]))
        await handle(receiver, packet, arrival_time_ms)

    RTCRtpReceiver._handle_rtp_packet = watched


class AiortcPeer(room.Peer):
    name = "aiortc_subscriber"

    def __init__(self, args, recorder):
        self.recorder = recorder
        # Host candidates only on --ice-address. aioice looks this function up in its module on
        # every gathering, so replacing it is enough (aioice 0.13; pinned in scripts/setup.sh).
        address = args.ice_address
        aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [address]
        watch_video_packets(self)
        self.pc = None
        self.tasks = []
        self.video_receiver = None
        self.video_ssrc = None
        self.video_mime = None
        # Janus's subscriber script builds its own arguments, without this option.
        self.video_codec = getattr(args, "video_codec", None)

    def versions(self):
        return {name: importlib.metadata.version(name) for name in ("aiortc", "aioice", "av", "pylibsrtp")} | {
            "python": sys.version.split()[0]
        }

    def _watch(self):
        pc = self.pc
        self.recorder.state("signaling", pc.signalingState)

        @pc.on("iceconnectionstatechange")
        def _ice():
            self.recorder.state("ice", pc.iceConnectionState)

        @pc.on("icegatheringstatechange")
        def _gathering():
            self.recorder.state("gathering", pc.iceGatheringState)

        @pc.on("connectionstatechange")
        def _connection():
            self.recorder.state("connection", pc.connectionState)

        @pc.on("signalingstatechange")
        def _signaling():
            self.recorder.state("signaling", pc.signalingState)

        @pc.on("track")
        def _track(track):
            self.recorder.state(f"track-{track.kind}", "added")
            self.tasks.append(asyncio.ensure_future(self._consume(track)))

    async def make_offer(self):
        # No ICE servers: no STUN to the outside, host candidates only. max-bundle: one transport.
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[], bundlePolicy=RTCBundlePolicy.MAX_BUNDLE))
        self._watch()
        video = self.pc.addTransceiver("video", direction="recvonly")
        if self.video_codec:
            # Only this codec and the RTX that repairs it, as a browser without H.264 offers.
            wanted = f"video/{self.video_codec}"
            codecs = RTCRtpReceiver.getCapabilities("video").codecs
            chosen = [c for c in codecs if c.mimeType.lower() == wanted]
            chosen += [c for c in codecs if c.mimeType.lower() == "video/rtx"]
            video.setCodecPreferences(chosen)
        self.pc.addTransceiver("audio", direction="recvonly")
        self.video_receiver = video.receiver
        # setLocalDescription gathers every candidate before it returns (aiortc does not trickle),
        # so the offer is complete: candidates and a=end-of-candidates.
        await self.pc.setLocalDescription(await self.pc.createOffer())
        dtls = video.receiver.transport
        self.recorder.state("dtls", dtls.state)
        dtls.on("statechange", lambda: self.recorder.state("dtls", dtls.state))
        return self.pc.localDescription.sdp

    async def apply_answer(self, sdp):
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))

    def connected(self):
        return self.pc is not None and self.pc.connectionState == "connected"

    def failure(self):
        if self.pc is None:
            return None
        if self.pc.iceConnectionState == "failed":
            return "ICE failed"
        if self.pc.connectionState in ("failed", "closed"):
            return (
                f"the peer connection is {self.pc.connectionState} "
                f"(ICE {self.pc.iceConnectionState}, DTLS {self.recorder.last_state('dtls')})"
            )
        return None

    def states(self):
        if self.pc is None:
            return "no peer connection"
        return (
            f"ice {self.pc.iceConnectionState} dtls {self.recorder.last_state('dtls')} "
            f"connection {self.pc.connectionState}"
        )

    async def _consume(self, track):
        """Decoded frames of one track, until it ends."""
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                self.recorder.state(f"track-{track.kind}", "ended")
                return
            if isinstance(frame, av.VideoFrame):
                self._video(frame)
            elif isinstance(frame, av.AudioFrame):
                self.recorder.audio_frame(frame.samples, frame.sample_rate, len(frame.layout.channels))

    def _video(self, frame):
        if frame.format.name not in ("yuv420p", "yuvj420p", "nv12", "gray"):
            frame = frame.reformat(format="gray")
        plane = frame.planes[0]
        width, height, stride = frame.width, frame.height, plane.line_size
        data = memoryview(plane)
        if stride == width:
            luma = bytes(data[: width * height])
        else:
            luma = b"".join(bytes(data[row * stride : row * stride + width]) for row in range(height))
        # aiortc's receiver maps RTP time to pts: 90 kHz ticks counted from the first frame.
        self.recorder.video_frame(width, height, luma, frame.pts, "rtp")

    async def update_stats(self):
        if self.pc is None:
            return
        report = await self.pc.getStats()
        # One inbound-rtp per receiver, its last stream's: the RTX one once repairs arrived,
        # whose counts are not the video's (kept from before then).
        for stats in report.values():
            if getattr(stats, "type", None) == "inbound-rtp":
                if stats.kind == "video" and stats.ssrc != self.video_ssrc:
                    continue
                self.recorder.packets(stats.kind, stats.packetsReceived, stats.packetsLost)

    async def drop_media(self):
        # aioice's sockets, closed under it: no DTLS close_notify, no RTCP BYE, no consent answers.
        connection = self.video_receiver.transport.transport._connection
        for protocol in list(connection._protocols):
            protocol.transport.close()

    async def send_pli(self):
        if self.video_ssrc is None:
            await self.update_stats()
        if self.video_ssrc is None or self.video_receiver is None:
            return False, "no video SSRC received yet"
        # aiortc has no public call for a PLI; its receiver's own (the one it uses after a
        # decoding error) writes an RTCP PSFB PLI for the media SSRC.
        await self.video_receiver._send_rtcp_pli(self.video_ssrc)
        return True, f"PLI for SSRC {self.video_ssrc}"

    async def close(self):
        for task in self.tasks:
            task.cancel()
        if self.pc is not None:
            await self.pc.close()


if __name__ == "__main__":
    room.main(AiortcPeer.name, AiortcPeer)
