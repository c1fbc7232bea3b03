// rtc-signal viewer: joins the room named in the address, plays one of its screen shares over
// WebRTC and shows what arrives. Protocol: Docs/signaling.md (one JSON message per WebSocket
// text frame). Timecode: Sources/Media/Sources/TimecodeStrip.swift. State for tests: window.viewer.
"use strict";
(() => {
  const KEEP = 3000; // frames kept in the timecode, glass-to-glass and frame-time lists
  const NAME = /^[A-Za-z0-9_-]{1,64}$/;

  // --- Timecode strip: 66 blocks (sync white, sync black, 24-bit frame, 32-bit ms, CRC-8) ---

  const BLOCKS = 66;
  const blockSize = (width) => Math.max(2, Math.floor(width / 80) & ~1);

  function crc8(bytes) {
    let crc = 0;
    for (const byte of bytes) {
      crc ^= byte;
      for (let i = 0; i < 8; i++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
    }
    return crc;
  }

  // Reads the strip from RGBA pixels (`stride` pixels a row) whose blocks are `pitch` pixels apart;
  // like the Swift decoder it averages each block's centre. Returns {frame, timeMs} or null.
  function decodeTimecode(rgba, width, height, stride, pitch) {
    const b = Math.floor(pitch);
    if (b < 2 || BLOCKS * pitch > width || b > height) return null;
    const bits = [];
    for (let i = 0; i < BLOCKS; i++) {
      const left = Math.ceil(i * pitch);
      let sum = 0, n = 0;
      for (let row = b >> 2; row < b - (b >> 2); row++) {
        for (let col = left + (b >> 2); col < left + b - (b >> 2); col++) {
          const p = (row * stride + col) * 4;
          sum += 0.299 * rgba[p] + 0.587 * rgba[p + 1] + 0.114 * rgba[p + 2];
          n++;
        }
      }
      bits.push(sum / Math.max(n, 1) > 127.5);
    }
    if (!bits[0] || bits[1]) return null;
    const bytes = [];
    for (let k = 0; k < 8; k++) {
      let byte = 0;
      for (let j = 0; j < 8; j++) if (bits[2 + k * 8 + j]) byte |= 1 << (7 - j);
      bytes.push(byte);
    }
    if (crc8(bytes.slice(0, 7)) !== bytes[7]) return null;
    return {
      frame: (bytes[0] << 16) | (bytes[1] << 8) | bytes[2],
      timeMs: ((bytes[3] << 24) >>> 0) + (bytes[4] << 16) + (bytes[5] << 8) + bytes[6],
    };
  }

  // Milliseconds from capture (mod 2^32) to `nowMs` on the same clock, as a signed difference.
  function sinceCapture(nowMs, captureMs) {
    let d = (nowMs - captureMs) % 4294967296;
    if (d < 0) d += 4294967296;
    return d >= 2147483648 ? d - 4294967296 : d;
  }

  if (typeof document === "undefined") {
    module.exports = { blockSize, crc8, decodeTimecode, sinceCapture }; // node, for tests
    return;
  }

  // --- Page state ---

  const $ = (id) => document.getElementById(id);
  const video = $("video");
  const params = new URLSearchParams(location.search);
  const roomMatch = /^\/rooms\/([A-Za-z0-9_-]{1,64})\/?$/.exec(location.pathname);
  const room = roomMatch ? roomMatch[1] : null;
  const randomUid = () =>
    "web_" + Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0")).join("");
  const uid = NAME.test(params.get("uid") || "") ? params.get("uid") : randomUid();
  const token = params.get("token");
  const pinned = NAME.test(params.get("publisher") || "") ? params.get("publisher") : null;

  const viewer = (window.viewer = {
    state: "connecting", status: "", room, uid, publisher: pinned, streams: [],
    framesShown: 0, timecodes: [], glassToGlassMs: [], frameTimes: [], rttMs: [], firstFrameMs: null, answeredMs: null,
    width: 0, height: 0, stats: {}, clockOffsetMs: null, events: [], states: [], layer: null,
    // totals, for slicing the lists above; `freezes`: gaps over 500 ms while playing (never while still)
    counts: { frames: 0, timecodes: 0, glassToGlass: 0, rtt: 0, misreads: 0, shownAgain: 0, stillRepeats: 0, freezes: 0 },
    playbackBase: { totalVideoFrames: 0, droppedVideoFrames: 0, currentTime: 0 }, // from earlier sources
  });

  function log(text) {
    viewer.events.push(`${(performance.now() / 1000).toFixed(3)} ${text}`);
    if (viewer.events.length > 300) viewer.events.shift();
    console.log("[viewer]", text);
  }
  const NOTICES = { ended: "the stream ended", error: "error", "waiting for a screen share": "waiting for a screen share" };
  function setState(state, detail) {
    const status = detail ? `${state}: ${detail}` : state;
    if (status !== viewer.status) log(`state ${status}`);
    if (state !== viewer.state || !viewer.states.length) {
      viewer.states.push({ t: Math.round(performance.now()), state });
      if (viewer.states.length > 300) viewer.states.shift();
    }
    viewer.state = state;
    viewer.status = $("status").textContent = status;
    const notice = NOTICES[state];
    $("notice").textContent = notice ? (detail ? `${notice}: ${detail}` : notice) : "";
    $("notice").hidden = !notice;
  }
  function keepLast(name, value) {
    viewer[name].push(value);
    if (viewer[name].length > KEEP) viewer[name].shift();
  }

  // --- A still screen: the publisher stops encoding an unchanged picture and repeats it about
  // once a second (stream-state, Docs/cadence.md). While its stream is still the page says
  // "still", not "playing", and a gap between pictures is not a freeze. ---

  let lastStillAt = null; // performance.now() when the played stream was last known still
  function playedIsStill() {
    const played = session && viewer.streams.find((s) => s.uid === session.publisher);
    return Boolean(played && played.state === "still");
  }
  function showMotion() {
    const still = playedIsStill();
    if (still) lastStillAt = performance.now();
    if (viewer.state === "playing" || viewer.state === "still") setState(still ? "still" : "playing", session.publisher);
  }

  // --- Clock: map performance.now() onto the server's CLOCK_MONOTONIC (GET /clock) ---

  async function syncClock() {
    let best = null;
    for (let i = 0; i < 5; i++) {
      try {
        const t0 = performance.now();
        const reply = await fetch("/clock", { cache: "no-store" });
        const body = await reply.json();
        const t1 = performance.now();
        if (typeof body.monotonicMs === "number" && (!best || t1 - t0 < best.rtt))
          best = { rtt: t1 - t0, offset: body.monotonicMs - (t0 + t1) / 2 };
      } catch (e) {
        break;
      }
    }
    if (best) {
      viewer.clockOffsetMs = best.offset;
      log(`clock offset ${best.offset.toFixed(1)} ms (round trip ${best.rtt.toFixed(1)} ms)`);
    } else if (viewer.clockOffsetMs === null) log("no /clock: glass-to-glass delay unavailable");
  }

  // --- Signaling over WebSocket ---

  let ws = null, joined = false, resume = null, nextId = 1, backoffMs = 200, pingTimer = null, stopped = false;
  const pending = new Map();

  function request(message, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      if (!ws || ws.readyState !== WebSocket.OPEN) return reject(new Error("not connected"));
      const id = nextId++;
      const timer = setTimeout(() => { pending.delete(id); reject(new Error(`no reply to ${message.type}`)); }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ ...message, id }));
    });
  }

  function connect() {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    setState(resume ? "reconnecting" : "connecting", url);
    const socket = (ws = new WebSocket(url));
    socket.onopen = () => join(socket);
    socket.onmessage = (e) => {
      let message;
      try { message = JSON.parse(e.data); } catch { return log("bad JSON from server"); }
      onMessage(message);
    };
    socket.onclose = () => {
      if (socket !== ws) return;
      ws = null; joined = false;
      clearInterval(pingTimer);
      for (const { reject, timer } of pending.values()) { clearTimeout(timer); reject(new Error("disconnected")); }
      pending.clear();
      if (session) session.resubscribe = true; // the server may have forgotten the subscription
      if (stopped) return;
      const delay = backoffMs * (0.75 + Math.random() / 2);
      backoffMs = Math.min(backoffMs * 2, 5000);
      log(`signaling closed; reconnecting in ${Math.round(delay)} ms`);
      setState("reconnecting", session && !session.dead ? "signaling lost; media continues" : "signaling lost");
      setTimeout(connect, delay);
    };
  }

  async function join(socket) {
    const message = { type: "join", version: 1, room, uid, role: "subscriber" };
    if (token) message.token = token;
    if (resume) message.resume = resume;
    let reply;
    try {
      reply = await request(message);
    } catch (e) {
      log(`join failed: ${e.message}`);
      if (["unauthorized", "version-mismatch", "invalid-room", "invalid-uid", "invalid-field"].includes(e.code)) {
        stopped = true;
        setState("error", e.message);
      }
      return socket.close();
    }
    joined = true; backoffMs = 200; resume = reply.resume;
    viewer.streams = (reply.streams || []).filter((s) => s.kind === "screen");
    log(`joined room ${room} as ${uid}; ${viewer.streams.length} screen share(s)`);
    if (viewer.streams.some((s) => s.state === "still")) log("a share is still");
    const every = Math.max(1, (reply.idleTimeout || 30) / 3) * 1000;
    pingTimer = setInterval(() => request({ type: "ping" }, every).catch(() => socket === ws && socket.close()), every);
    setState("joined");
    renderShares();
    syncClock();
    ensurePlaying();
  }

  function onMessage(m) {
    const waiting = m.id !== undefined && pending.get(m.id);
    if (waiting) {
      pending.delete(m.id);
      clearTimeout(waiting.timer);
      if (m.type === "error") waiting.reject(Object.assign(new Error(`${m.code}: ${m.message}`), { code: m.code }));
      else waiting.resolve(m);
      return;
    }
    switch (m.type) {
      case "stream-published":
        if (m.stream.kind !== "screen") return;
        log(`stream published by ${m.stream.uid}`);
        viewer.streams = viewer.streams.filter((s) => s.uid !== m.stream.uid).concat([m.stream]);
        renderShares();
        showMotion();
        return ensurePlaying();
      case "stream-state":
        if (m.kind !== "screen") return;
        log(`stream of ${m.uid} is ${m.state}`);
        viewer.streams = viewer.streams.map((s) => (s.uid === m.uid ? { ...s, state: m.state } : s));
        return showMotion();
      case "stream-unpublished":
        if (m.kind !== "screen") return;
        log(`stream unpublished by ${m.uid}`);
        viewer.streams = viewer.streams.filter((s) => s.uid !== m.uid);
        renderShares();
        if (session && session.publisher === m.uid) endSession("the publisher stopped sharing");
        return;
      case "unsubscribed":
        log(`unsubscribed from ${m.publisher} (${m.reason})`);
        if (session && session.publisher === m.publisher) endSession(m.reason);
        return;
      case "signal":
        // With simulcast the publisher says which layer this viewer watches (Docs/simulcast.md).
        if (m.payload && m.payload.event === "layer" && typeof m.payload.rid === "string") {
          if (session && session.publisher === m.from) {
            viewer.layer = { rid: m.payload.rid.slice(0, 16), index: m.payload.index, layers: m.payload.layers };
            log(`now on simulcast layer ${viewer.layer.rid}`);
          }
          return;
        }
        if (m.payload && m.payload.event === "webrtc-ended") {
          log(`${m.from} ended a WebRTC session: ${m.payload.reason}`);
          // Before our answer came, it can only be about an older session.
          if (session && session.publisher === m.from && session.answered) endSession(m.payload.reason);
        }
        return;
      case "member-joined":
        return log(`member joined: ${m.member.uid} (${m.member.role})`);
      case "member-left":
        return log(`member left: ${m.uid} (${m.reason})`);
      case "goodbye":
        log(`server says goodbye: ${m.reason} ${m.message || ""}`);
        if (m.reason === "replaced") (stopped = true), setState("error", "another connection took this uid over");
        return;
      case "error":
        return log(`server error ${m.code}: ${m.message}`);
    }
  }

  // --- Choosing a share ---

  function renderShares() {
    const select = $("shares");
    select.replaceChildren(...viewer.streams.map((s) => {
      const option = new Option(s.owner ? `${s.owner} (${s.uid})` : s.uid, s.uid);
      option.selected = s.uid === viewer.publisher;
      return option;
    }));
    select.disabled = viewer.streams.length === 0;
  }

  // Plays the chosen share when nothing (alive) plays: on join, on a new stream, on "Play".
  function ensurePlaying(force) {
    if (!joined) return;
    const listed = (u) => viewer.streams.some((s) => s.uid === u);
    if (session && !session.dead && !session.resubscribe && !force) return;
    let target = viewer.publisher; // ?publisher=, the one picked, or the one that played last
    if (!pinned && !listed(target) && (!session || session.dead)) target = viewer.streams[0] && viewer.streams[0].uid;
    if (target && listed(target)) return subscribe(target);
    if (!session || session.dead) {
      if (viewer.state !== "ended") setState("waiting for a screen share", pinned ? `from ${pinned}` : "");
    } else setState("joined", `waiting for ${session.publisher} to publish again; media continues`);
  }

  // --- Media ---

  let session = null; // {publisher, pc, stream, dead, answered, resubscribe, frames}

  function close(which) {
    if (which && !which.dead) { which.dead = true; which.pc.close(); }
  }

  function endSession(reason) {
    viewer.layer = null;
    close(session);
    setState("ended", reason);
  }

  function gatheringComplete(pc, timeoutMs) {
    return new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      const timer = setTimeout(resolve, timeoutMs);
      pc.addEventListener("icegatheringstatechange", () => {
        if (pc.iceGatheringState === "complete") { clearTimeout(timer); resolve(); }
      });
      pc.addEventListener("icecandidate", (e) => { if (!e.candidate) { clearTimeout(timer); resolve(); } });
    });
  }

  // A complete offer: every candidate, and a=end-of-candidates in each m= section.
  const completeOffer = (sdp) =>
    sdp.replace(/\r\n$/, "").split("\r\nm=")
      .map((part, i) => (i === 0 || part.includes("a=end-of-candidates") ? part : part + "\r\na=end-of-candidates"))
      .join("\r\nm=") + "\r\n";

  // A new session replaces the current one. For the same publisher (a resubscribe after the
  // server restarted) the old one plays on until the new answer is in; closing it earlier would
  // make the publisher end the new session for the old one's DTLS close.
  async function subscribe(publisher) {
    let old = session;
    if (old && !old.dead && old.publisher !== publisher) {
      if (joined) request({ type: "unsubscribe", publisher: old.publisher, kind: "screen" }).catch(() => {});
      close(old);
    }
    viewer.publisher = publisher;
    lastFrameAt = null;
    renderShares();
    const pc = new RTCPeerConnection({ iceServers: [], bundlePolicy: "max-bundle" });
    const me = (session = { publisher, pc, stream: new MediaStream(), dead: false, answered: false, resubscribe: false, frames: 0 });
    pc.ontrack = (e) => {
      me.stream.addTrack(e.track);
      if (video.srcObject !== me.stream) showStream(me.stream);
    };
    pc.onconnectionstatechange = () => {
      if (me.dead) return;
      log(`media connection ${pc.connectionState}`);
      if (pc.connectionState === "failed" && me === session) endSession("media connection failed");
    };
    setState("connecting media", publisher);
    try {
      pc.addTransceiver("video", { direction: "recvonly" });
      pc.addTransceiver("audio", { direction: "recvonly" });
      await pc.setLocalDescription(await pc.createOffer());
      await gatheringComplete(pc, 5000);
      if (me.dead) return;
      const offer = completeOffer(pc.localDescription.sdp);
      const reply = await request({ type: "subscribe", publisher, kind: "screen", receive: { offer } }, 20000);
      if (me.dead) return;
      me.answered = true;
      viewer.answeredMs = performance.now();
      log(`subscribed to ${publisher}`);
      await pc.setRemoteDescription({ type: "answer", sdp: reply.sdp });
    } catch (e) {
      if (me.dead) return;
      log(`subscribe to ${publisher} failed: ${e.message}`);
      close(me);
      setState(joined ? "error" : "reconnecting", e.message);
    } finally {
      if (old !== me) close(old);
    }
  }

  // A new source restarts the <video>'s counters: keep what the old one counted (for tests).
  function showStream(stream) {
    if (video.srcObject) {
      const q = video.getVideoPlaybackQuality(), base = viewer.playbackBase;
      base.totalVideoFrames += q.totalVideoFrames;
      base.droppedVideoFrames += q.droppedVideoFrames;
      base.currentTime += video.currentTime;
    }
    video.srcObject = stream;
    startPlayback();
  }

  function startPlayback() {
    video.play().catch((e) => {
      if (e.name !== "NotAllowedError") return log(`play(): ${e.message}`);
      log("autoplay with sound refused: playing muted");
      video.muted = true;
      $("unmute").hidden = false;
      video.play().catch((e2) => log(`play() muted: ${e2.message}`));
    });
  }

  // --- Frames: timecode and glass-to-glass, one requestVideoFrameCallback per shown frame ---

  const band = document.createElement("canvas");
  const bandContext = band.getContext("2d", { willReadFrequently: true });
  let lastFrameAt = null;
  const presented = { base: 0, last: 0 };
  const lastRead = { rtp: null, frame: null };

  function onFrame(now, meta) {
    video.requestVideoFrameCallback(onFrame);
    const shownAt = meta.expectedDisplayTime || meta.presentationTime || now;
    if (meta.presentedFrames < presented.last) presented.base += presented.last; // a new source counts from 0
    presented.last = meta.presentedFrames || 0;
    viewer.framesShown = presented.base + presented.last;
    viewer.width = meta.width || video.videoWidth;
    viewer.height = meta.height || video.videoHeight;
    keepLast("frameTimes", Math.round(now * 10) / 10);
    viewer.counts.frames++;
    if (viewer.firstFrameMs === null) { viewer.firstFrameMs = now; log(`first frame ${viewer.width}x${viewer.height}`); }
    const still = playedIsStill();
    if (still) lastStillAt = now;
    // A freeze: no frame for 500 ms while playing; a gap the stream was still in is its pace.
    const gapWasStill = lastStillAt !== null && lastFrameAt !== null && lastStillAt >= lastFrameAt;
    if (lastFrameAt !== null && now - lastFrameAt > 500 && viewer.state === "playing" && !gapWasStill) {
      viewer.counts.freezes++;
      log(`no frame for ${Math.round(now - lastFrameAt)} ms`);
    }
    lastFrameAt = now;
    if (session && !session.dead && video.srcObject === session.stream && session.frames++ === 0)
      setState(still ? "still" : "playing", session.publisher);
    const w = viewer.width, edge = blockSize(w);
    if (!w || edge > viewer.height) return;
    if (band.width !== w || band.height !== edge) { band.width = w; band.height = edge; }
    bandContext.drawImage(video, 0, 0, w, edge, 0, 0, w, edge);
    const pixels = bandContext.getImageData(0, 0, w, edge).data;
    // Blocks drawn at this width, or (the picture scaled since) about width/80 apart.
    const code = decodeTimecode(pixels, w, edge, w, edge) || (w / 80 !== edge && decodeTimecode(pixels, w, edge, w, w / 80));
    if (!code) return;
    // The still picture sent again (an idle repeat: new RTP time, same painted frame) is neither
    // a new frame of the stream nor a misread.
    if (still && code.frame === lastRead.frame) return void viewer.counts.stillRepeats++;
    if (!readsThisFrame(meta, code)) return;
    // A callback for the frame read last (same RTP time, same picture) is that frame shown
    // again, not a new one of the stream: counted apart, not as a repeat.
    if (meta.rtpTimestamp !== undefined && meta.rtpTimestamp === lastRead.rtp && code.frame === lastRead.frame) {
      viewer.counts.shownAgain++;
      return;
    }
    lastRead.rtp = meta.rtpTimestamp;
    lastRead.frame = code.frame;
    keepLast("timecodes", code.frame);
    viewer.counts.timecodes++;
    if (viewer.clockOffsetMs === null) return;
    keepLast("glassToGlassMs", Math.round(sinceCapture(shownAt + viewer.clockOffsetMs, code.timeMs) * 10) / 10);
    viewer.counts.glassToGlass++;
  }

  // drawImage draws the newest frame, which may already be the next one. rtc-publish derives RTP
  // time from capture time, so (rtpTimestamp - 90 * captureMs) is the same for every frame: a read
  // where it is more than 5 ms off is another frame's, and is dropped. The value is relearnt after
  // 5 agreeing misses (a new sender); after 30 misses in a row the check is given up.
  const rtpCheck = { base: null, candidate: null, agreeing: 0, inRow: 0, off: false };
  function readsThisFrame(meta, code) {
    if (rtpCheck.off || meta.rtpTimestamp === undefined) return true;
    const k = (((meta.rtpTimestamp - code.timeMs * 90) % 4294967296) + 4294967296) % 4294967296;
    const near = (a) => a !== null && Math.abs(sinceCapture(k, a)) <= 450;
    if (!near(rtpCheck.base)) {
      rtpCheck.agreeing = near(rtpCheck.candidate) ? rtpCheck.agreeing + 1 : 1;
      rtpCheck.candidate = k;
      if (rtpCheck.base !== null && rtpCheck.agreeing < 5) {
        viewer.counts.misreads++;
        if (++rtpCheck.inRow >= 30) (rtpCheck.off = true), log("RTP time does not follow capture time: frame check off");
        return false;
      }
      rtpCheck.base = k;
    }
    rtpCheck.inRow = 0;
    return true;
  }

  // --- Statistics overlay, once a second ---

  let previous = null;
  const percentile = (sorted, p) => (sorted.length ?
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null);

  async function updateStats() {
    const s = { ...viewer.stats };
    if (session && !session.dead) {
      const report = await session.pc.getStats();
      let pair = null;
      report.forEach((r) => {
        if (r.type === "inbound-rtp" && r.kind === "video") {
          const codec = r.codecId && report.get(r.codecId); // the negotiated codec, e.g. "video/H264"
          Object.assign(s, {
            videoCodec: codec && codec.mimeType ? codec.mimeType : null,
            fps: r.framesPerSecond ?? null, videoBytes: r.bytesReceived,
            packetsLost: r.packetsLost, packetsReceived: r.packetsReceived,
            framesDecoded: r.framesDecoded, framesDropped: r.framesDropped,
            freezes: r.freezeCount ?? null, freezeSeconds: r.totalFreezesDuration ?? null,
            jitterBufferMs: r.jitterBufferEmittedCount ? Math.round((1000 * r.jitterBufferDelay) / r.jitterBufferEmittedCount) : null,
          });
        } else if (r.type === "inbound-rtp" && r.kind === "audio") {
          Object.assign(s, {
            audioBytes: r.bytesReceived, audioPacketsReceived: r.packetsReceived, audioSamples: r.totalSamplesReceived ?? null,
            audioLevel: r.audioLevel ?? null, concealedSamples: r.concealedSamples ?? null,
          });
        } else if (r.type === "transport" && r.selectedCandidatePairId) pair = report.get(r.selectedCandidatePairId);
        else if (r.type === "candidate-pair" && r.nominated && r.state === "succeeded" && !pair) pair = r;
      });
      s.rttMs = pair && pair.currentRoundTripTime !== undefined ? Math.round(pair.currentRoundTripTime * 10000) / 10 : null;
      if (s.rttMs !== null) (keepLast("rttMs", s.rttMs), viewer.counts.rtt++);
      const now = performance.now(), bytes = (s.videoBytes || 0) + (s.audioBytes || 0);
      if (previous && previous.session === session && now > previous.at)
        s.kbps = Math.round((8 * (bytes - previous.bytes)) / (now - previous.at));
      previous = { session, at: now, bytes };
      const total = (s.packetsLost || 0) + (s.packetsReceived || 0);
      s.lossPercent = total ? Math.round((10000 * (s.packetsLost || 0)) / total) / 100 : 0;
    }
    const g2g = [...viewer.glassToGlassMs].sort((a, b) => a - b);
    Object.assign(s, { width: viewer.width, height: viewer.height, lastTimecode: viewer.timecodes.at(-1) ?? null });
    Object.assign(s, { g2gP50: percentile(g2g, 50), g2gP95: percentile(g2g, 95) });
    viewer.stats = s;
    const show = (v, unit = "") => (v === null || v === undefined ? "–" : `${v}${unit}`);
    const pace = viewer.state === "still" ? "still" : show(s.fps, " fps");
    const codec = s.videoCodec ? `${s.videoCodec.replace(/^video\//, "")}  ` : "";
    const layer = viewer.layer ? `  layer ${viewer.layer.rid} (${viewer.layer.layers - viewer.layer.index} of ${viewer.layer.layers})` : "";
    s.layer = viewer.layer ? viewer.layer.rid : null;
    $("overlay").textContent = [
      `${s.width}×${s.height}  ${codec}${pace}  ${show(s.kbps, " kbit/s")}${layer}`,
      `rtt ${show(s.rttMs, " ms")}  loss ${show(s.packetsLost)} (${show(s.lossPercent, " %")})  freezes ${viewer.counts.freezes}`,
      `glass-to-glass p50 ${show(s.g2gP50, " ms")}  p95 ${show(s.g2gP95, " ms")}  frame #${show(s.lastTimecode)}`,
    ].join("\n");
  }

  // --- Start ---

  $("shares").onchange = (e) => { viewer.publisher = e.target.value; ensurePlaying(true); };
  $("play").onclick = () => ensurePlaying(true);
  $("fullscreen").onclick = () =>
    (document.fullscreenElement ? document.exitFullscreen() : $("stage").requestFullscreen()).catch(() => {});
  $("unmute").onclick = () => { video.muted = false; $("unmute").hidden = true; };
  $("room").textContent = room ? `room ${room}` : "no room";
  if ("requestVideoFrameCallback" in HTMLVideoElement.prototype) video.requestVideoFrameCallback(onFrame);
  else log("this browser has no requestVideoFrameCallback: no timecode");
  setInterval(() => updateStats().catch((e) => log(`stats: ${e.message}`)), 1000);
  setInterval(() => joined && syncClock(), 60000);
  addEventListener("pagehide", () => { stopped = true; close(session); });
  if (!room) setState("error", "the address names no room (/rooms/ROOM)");
  else connect();
})();