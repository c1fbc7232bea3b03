#!/usr/bin/python3
"""A real WebRTC subscriber on GStreamer's webrtcbin (1.22, libnice): joins an rtc-signal room,
offers recvonly video (H.264) + audio (Opus) with max-bundle and rtcp-mux, every candidate in the
offer, applies the publisher's answer, decodes with avdec_h264 / opusdec into appsinks and records
what it got (see room.py for the files and summary.json).

Runs in the system Python, which has python3-gi (not the venv):

    /usr/bin/python3 Tests/Peers/webrtcbin_subscriber.py --signal 127.0.0.1:8443 --room 123456 \
        --uid carol --publisher alice_sub --seconds 10 --out out/carol

Loopback: libnice gathers nothing on a loopback interface unless the address is added to the
agent by hand (nice_agent_add_local_address), and once any address is added it gathers on those
only. webrtcbin's ICE object (GstWebRTCNice) exposes its NiceAgent as the property `agent`, so
we add --ice-address (default 127.0.0.1) there before the offer is made, and turn ICE-TCP off:
the offer then carries exactly one UDP host candidate on that address. No STUN or TURN server
is set, so nothing is sent anywhere else.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import asyncio  # noqa: E402
import threading  # noqa: E402

import room  # noqa: E402

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstWebRTC", "1.0")
    gi.require_version("GstSdp", "1.0")
    gi.require_version("GstRtp", "1.0")
    gi.require_version("GstVideo", "1.0")
    gi.require_version("Nice", "0.1")
    from gi.repository import Gst, GstRtp, GstSdp, GstVideo, GstWebRTC, Nice
except (ImportError, ValueError) as error:
    print(
        f"webrtcbin_subscriber: {error}: needs /usr/bin/python3 with python3-gst-1.0, "
        "gir1.2-gst-plugins-bad-1.0 and gir1.2-nice-0.1 (scripts/setup.sh installs them)",
        file=sys.stderr,
    )
    sys.exit(2)

# What we offer to receive: the codecs the publisher sends, with the feedback webrtcbin's
# rtpbin acts on. Payload numbers are ours to choose; the answer uses the offer's numbers.
VIDEO_CAPS = (
    "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
    "packetization-mode=(string)1,profile-level-id=(string)42e01f,level-asymmetry-allowed=(string)1,"
    "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true"
)
AUDIO_CAPS = "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2"

VIDEO_BRANCH = (
    "queue name=vqueue ! rtph264depay name=depay ! h264parse ! avdec_h264 ! videoconvert ! "
    "video/x-raw,format=GRAY8 ! appsink name=sink emit-signals=true sync=false max-buffers=64"
)
AUDIO_BRANCH = (
    "queue ! rtpopusdepay ! opusdec ! audioconvert ! audio/x-raw,format=S16LE,layout=interleaved ! "
    "appsink name=sink emit-signals=true sync=false max-buffers=64"
)


def enum_name(value):
    """'connected' for GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED and the like."""
    return value.value_nick if hasattr(value, "value_nick") else str(value)


class WebrtcbinPeer(room.Peer):
    name = "webrtcbin_subscriber"

    def __init__(self, args, recorder):
        Gst.init(None)
        self.args = args
        self.recorder = recorder
        self.loop = None
        self.pipeline = Gst.Pipeline.new("subscriber")
        self.webrtc = Gst.ElementFactory.make("webrtcbin", "webrtc")
        self.pipeline.add(self.webrtc)
        # One transport for everything (RFC 8843), as the publisher requires.
        self.webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        # webrtcbin 1.22 hands out its ICE object still floating: PyGObject sinks it and so owns
        # the only reference. Keep it as long as the process lives (we end with os._exit), or the
        # object is freed under webrtcbin when the wrapper goes.
        self.ice = self.webrtc.get_property("ice-agent")
        self.ice.set_property("ice-tcp", False)
        self.nice_agent = self.ice.get_property("agent")
        address = Nice.Address.new()
        if not address.set_from_string(args.ice_address) or not self.nice_agent.add_local_address(address):
            raise room.Failure(f"libnice does not take --ice-address '{args.ice_address}'")
        self.candidates = []  # (m-line index, "candidate:..."), as gathered
        self.gathered = threading.Event()
        self.video_depay_times = {}  # buffer PTS -> RTP timestamp, from the depayloader's input
        self.dtls = None
        self.video_depay = None
        self.ssrc_kinds = {}  # SSRC -> "video" or "audio", from the pads webrtcbin adds
        self.webrtc.connect("on-ice-candidate", self._on_candidate)
        self.webrtc.connect("notify::ice-gathering-state", self._on_state, "gathering", "ice-gathering-state")
        self.webrtc.connect("notify::ice-connection-state", self._on_state, "ice", "ice-connection-state")
        self.webrtc.connect("notify::connection-state", self._on_state, "connection", "connection-state")
        self.webrtc.connect("notify::signaling-state", self._on_state, "signaling", "signaling-state")
        self.webrtc.connect("pad-added", self._on_pad)
        # Load the depayloaders' and decoders' plugins now (0.1 s), not on the streaming thread
        # when the first packet arrives: that would count as the publisher's start-up delay.
        for description in (VIDEO_BRANCH, AUDIO_BRANCH):
            Gst.parse_bin_from_description(description, True)

    def versions(self):
        return {"gstreamer": Gst.version_string(), "python": sys.version.split()[0]}

    # GStreamer calls these on its own threads.

    def _on_candidate(self, _element, mline, candidate):
        self.candidates.append((mline, candidate))

    def _on_state(self, element, _spec, what, prop):
        state = enum_name(element.get_property(prop))
        self.recorder.state(what, state)
        if what == "gathering" and state == "complete":
            self.gathered.set()

    def _on_dtls_state(self, transport, _spec):
        self.recorder.state("dtls", enum_name(transport.get_property("state")))

    def _on_pad(self, _element, pad):
        if pad.get_direction() != Gst.PadDirection.SRC:
            return
        caps = pad.get_current_caps() or pad.query_caps(None)
        structure = caps.get_structure(0)
        media = structure.get_value("media")
        if media not in ("video", "audio"):
            return
        if structure.has_field("ssrc"):
            self.ssrc_kinds[structure.get_value("ssrc")] = media
        branch = Gst.parse_bin_from_description(VIDEO_BRANCH if media == "video" else AUDIO_BRANCH, True)
        self.pipeline.add(branch)
        branch.sync_state_with_parent()
        sink = branch.get_by_name("sink")
        if media == "video":
            self.video_depay = branch.get_by_name("depay")
            self.video_depay.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self._on_rtp)
            sink.connect("new-sample", self._on_video)
        else:
            sink.connect("new-sample", self._on_audio)
        pad.link(branch.get_static_pad("sink"))
        self.recorder.state(f"track-{media}", "added")

    def _on_rtp(self, _pad, info):
        """Remembers each RTP packet's timestamp under its buffer PTS, which the depayloader,
        parser and decoder carry through to the decoded picture."""
        buffer = info.get_buffer()
        ok, rtp = GstRtp.RTPBuffer.map(buffer, Gst.MapFlags.READ)
        if ok:
            self.video_depay_times[buffer.pts] = rtp.get_timestamp()
            rtp.unmap()
            if len(self.video_depay_times) > 2048:  # keep a few seconds' worth
                for pts in sorted(self.video_depay_times)[:1024]:
                    del self.video_depay_times[pts]
        return Gst.PadProbeReturn.OK

    def _on_video(self, sink):
        sample = sink.emit("pull-sample")
        info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
        buffer = sample.get_buffer()
        ok, mapped = buffer.map(Gst.MapFlags.READ)
        if not ok:
            return Gst.FlowReturn.ERROR
        try:
            width, height, stride = info.width, info.height, info.stride[0]
            data, offset = mapped.data, info.offset[0]
            if stride == width:
                luma = bytes(data[offset : offset + width * height])
            else:  # GStreamer pads GRAY8 rows to 4 bytes
                luma = b"".join(
                    bytes(data[offset + row * stride : offset + row * stride + width]) for row in range(height)
                )
        finally:
            buffer.unmap(mapped)
        rtp = self.video_depay_times.get(buffer.pts)
        if rtp is not None:
            self.recorder.video_frame(width, height, luma, rtp, "rtp")
        else:  # no packet had this PTS: fall back to the PTS in 90 kHz ticks
            self.recorder.video_frame(width, height, luma, (buffer.pts * 9 // 100_000) % (1 << 32), "pts")
        return Gst.FlowReturn.OK

    def _on_audio(self, sink):
        sample = sink.emit("pull-sample")
        structure = sample.get_caps().get_structure(0)
        rate, channels = structure.get_value("rate"), structure.get_value("channels")
        self.recorder.audio_frame(sample.get_buffer().get_size() // (2 * channels), rate, channels)
        return Gst.FlowReturn.OK

    # The run calls these on the asyncio loop; blocking GStreamer calls go to a worker thread.

    async def _promise(self, signal, *arguments):
        """Emits an action signal that answers through a GstPromise and waits for it."""
        promise = Gst.Promise.new()
        self.webrtc.emit(signal, *arguments, promise)
        result = await asyncio.get_running_loop().run_in_executor(None, promise.wait)
        if result != Gst.PromiseResult.REPLIED:
            raise room.Failure(f"webrtcbin {signal}: {enum_name(result)}")
        reply = promise.get_reply()
        if reply is not None and reply.has_field("error"):
            raise room.Failure(f"webrtcbin {signal}: {reply.get_value('error')}")
        return reply

    async def make_offer(self):
        self.loop = asyncio.get_running_loop()
        if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            raise room.Failure("the pipeline does not start")
        direction = GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY
        self.webrtc.emit("add-transceiver", direction, Gst.Caps.from_string(VIDEO_CAPS))
        self.webrtc.emit("add-transceiver", direction, Gst.Caps.from_string(AUDIO_CAPS))
        reply = await self._promise("create-offer", None)
        offer = reply.get_value("offer")
        await self._promise("set-local-description", offer)
        await self.loop.run_in_executor(None, self.gathered.wait, room.GATHER_TIMEOUT)
        if not self.gathered.is_set():
            raise room.Failure(f"ICE gathering did not complete in {room.GATHER_TIMEOUT} s")
        sdp = self.webrtc.get_property("local-description").sdp.as_text()
        return self._complete(sdp)

    def _complete(self, sdp):
        """The offer with every gathered candidate and a=end-of-candidates in its first (bundled)
        m-section, and without a=ice-options:trickle: webrtcbin 1.22 adds gathered candidates to
        its local description, but not end-of-candidates, and always announces trickle, which
        this peer never does (the offer is complete when it is sent)."""
        lines = [line for line in sdp.replace("\r\n", "\n").rstrip("\n").split("\n") if line != "a=ice-options:trickle"]
        sections = [i for i, line in enumerate(lines) if line.startswith("m=")]
        if not sections:
            raise room.Failure("webrtcbin made an offer without m-sections")
        end = sections[1] if len(sections) > 1 else len(lines)
        first = lines[sections[0] : end]
        missing = [f"a={c}" for m, c in self.candidates if m == 0 and f"a={c}" not in first]
        extra = missing + ([] if "a=end-of-candidates" in first else ["a=end-of-candidates"])
        lines[end:end] = extra
        return "\r\n".join(lines) + "\r\n"

    async def apply_answer(self, sdp):
        result, message = GstSdp.SDPMessage.new_from_text(sdp)
        if result != GstSdp.SDPResult.OK:
            raise room.Failure(f"the answer does not parse as SDP ({enum_name(result)})")
        answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
        await self._promise("set-remote-description", answer)
        # The DTLS transport of the bundle exists once both descriptions are set.
        transceiver = self.webrtc.emit("get-transceiver", 0)
        if transceiver is not None:
            transport = transceiver.get_property("receiver").get_property("transport")
            if transport is not None:
                self.dtls = transport
                self._on_dtls_state(transport, None)
                transport.connect("notify::state", self._on_dtls_state)

    def connected(self):
        return self.webrtc.get_property("connection-state") == GstWebRTC.WebRTCPeerConnectionState.CONNECTED

    def failure(self):
        if self.webrtc.get_property("ice-connection-state") == GstWebRTC.WebRTCICEConnectionState.FAILED:
            return "ICE failed"
        state = self.webrtc.get_property("connection-state")
        if state in (GstWebRTC.WebRTCPeerConnectionState.FAILED, GstWebRTC.WebRTCPeerConnectionState.CLOSED):
            return f"the peer connection is {enum_name(state)} (DTLS {self.recorder.last_state('dtls')})"
        if self.dtls is not None and self.dtls.get_property("state") == GstWebRTC.WebRTCDTLSTransportState.FAILED:
            return "DTLS failed"
        return self._bus_error()

    def _bus_error(self):
        """An error a GStreamer element posted (a decoder, the DTLS element, ...). Nothing
        watches the bus, so every message is taken off it here, the others unread."""
        bus = self.pipeline.get_bus()
        while True:
            message = bus.pop()
            if message is None:
                return None
            if message.type == Gst.MessageType.ERROR:
                error, debug = message.parse_error()
                return f"GStreamer error from {message.src.get_name()}: {error.message} ({debug})"

    def states(self):
        get = self.webrtc.get_property
        return (
            f"ice {enum_name(get('ice-connection-state'))} dtls {self.recorder.last_state('dtls')} "
            f"connection {enum_name(get('connection-state'))}"
        )

    async def update_stats(self):
        if self.loop is None:
            return
        reply = await self._promise("get-stats", None)
        totals = {}  # kind -> [received, lost]

        def visit(_field, stats):
            # One structure per stats object; inbound-rtp ones per received SSRC. (webrtcbin 1.22
            # calls every bundled stream's kind "video", so the kind comes from the pad's caps.)
            if isinstance(stats, Gst.Structure) and stats.has_field("ssrc") and stats.has_field("type"):
                kind = self.ssrc_kinds.get(stats.get_value("ssrc"))
                if kind and enum_name(stats.get_value("type")) == "inbound-rtp":
                    counts = totals.setdefault(kind, [0, 0])
                    counts[0] += stats.get_value("packets-received") if stats.has_field("packets-received") else 0
                    counts[1] += stats.get_value("packets-lost") if stats.has_field("packets-lost") else 0
            return True

        reply.foreach(visit)
        for kind, (received, lost) in totals.items():
            self.recorder.packets(kind, received, lost)

    async def send_pli(self):
        if self.video_depay is None:
            return False, "no video stream yet"
        # An upstream force-key-unit event reaches webrtcbin's rtpbin, whose session sends it to
        # the sender as RTCP PLI (the stream's caps say nack pli).
        event = GstVideo.video_event_new_upstream_force_key_unit(Gst.CLOCK_TIME_NONE, True, 0)
        sent = self.video_depay.get_static_pad("sink").push_event(event)
        return sent, "upstream force-key-unit from the depayloader (rtpbin sends it as PLI)"

    async def close(self):
        if self.loop is None:
            self.pipeline.set_state(Gst.State.NULL)
            return
        await self.loop.run_in_executor(None, self.pipeline.set_state, Gst.State.NULL)


if __name__ == "__main__":
    room.main(WebrtcbinPeer.name, WebrtcbinPeer)
