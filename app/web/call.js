// CallAssist call page: one WebRTC call to the assistant with the browser's own
// RTCPeerConnection (no libraries). Signalling is pipecat's SmallWebRTC protocol:
// POST the offer to /webrtc/offer with requestData.line, PATCH trickled candidates with
// the answer's pc_id, and keep the data channel alive with "ping" messages. The server
// sends the transcript over that data channel.
"use strict";

(function () {
  const cfg = JSON.parse(document.getElementById("config").textContent);
  const $ = (id) => document.getElementById(id);
  const body = document.body;

  const TEXT = {
    en: {
      calling: "You are calling", call: "Call", hangup: "Hang up", transcript: "Transcript",
      ready: "Press Call and allow the microphone.", connecting: "Connecting…",
      incall: "Connected. Speak after the greeting.", ended: "Call ended.",
      notfound: "This link is not in service.", busy: "All lines are busy. Please try again shortly.",
      disabled: "Calls are not available right now.", micdenied: "The microphone is not available.",
      failed: "The call could not be connected.", you: "You", assistant: "Assistant", silence: "(silence)",
      note: "An automated assistant answers on the owner's behalf and passes your message on.",
      other: "中文",
    },
    zh: {
      calling: "您正在呼叫", call: "呼叫", hangup: "挂断", transcript: "通话记录",
      ready: "点击“呼叫”并允许使用麦克风。", connecting: "正在连接…",
      incall: "已接通，请在问候语之后讲话。", ended: "通话已结束。",
      notfound: "此链接暂时无法接通。", busy: "线路繁忙，请稍后再试。",
      disabled: "暂时无法通话。", micdenied: "无法使用麦克风。",
      failed: "无法接通。", you: "您", assistant: "助理", silence: "（无声）",
      note: "由自动助理代为接听，并转达您的留言。",
      other: "English",
    },
  };

  let lang = localStorage.getItem("callassist.lang") ||
    ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  let statusKey = cfg.available ? "ready" : (cfg.voice ? "notfound" : "disabled");
  let pc = null, dc = null, stream = null, pcId = null, pinger = null, meterTimer = null, audioCtx = null;
  let pending = [];
  const t = (key) => (TEXT[lang] && TEXT[lang][key]) || TEXT.en[key] || key;

  function render() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
    $("lang").textContent = t("other");
    $("status").textContent = t(statusKey);
    const active = body.dataset.state === "connecting" || body.dataset.state === "in-call";
    $("call").textContent = active ? t("hangup") : t("call");
    $("call").disabled = !cfg.available;
    document.querySelectorAll("#transcript .who").forEach((el) => { el.textContent = t(el.dataset.role); });
    document.querySelectorAll("#transcript .silent").forEach((el) => { el.textContent = t("silence"); });
  }

  function setState(state, key) {
    body.dataset.state = state;
    if (key) statusKey = key;
    render();
  }

  function addEntry(role, text) {
    const li = document.createElement("li");
    li.className = role === "caller" ? "caller" : "assistant";
    const who = document.createElement("span");
    who.className = "who";
    who.dataset.role = role === "caller" ? "you" : "assistant";
    who.textContent = t(who.dataset.role);
    const said = document.createElement("span");
    if (text) { said.textContent = text; } else { said.className = "silent"; said.textContent = t("silence"); }
    li.append(who, said);
    $("transcript").append(li);
    li.scrollIntoView({ block: "nearest" });
  }

  function onMessage(event) {
    let msg;
    try { msg = JSON.parse(event.data); } catch (e) { return; }
    if (msg.type === "transcript") addEntry(msg.role, msg.text);
    else if (msg.type === "call" && msg.state === "connected") setState("in-call", "incall");
    else if (msg.type === "ended") hangUp("ended");
    else if (msg.type === "signalling" && msg.message && msg.message.type === "peerLeft") hangUp("ended");
  }

  async function patchCandidates() {
    if (!pcId || pending.length === 0) return;
    const candidates = pending;
    pending = [];
    try {
      await fetch(cfg.offerUrl, {
        method: "PATCH", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ pc_id: pcId, candidates }),
      });
    } catch (e) { /* the connection may still succeed on the candidates already sent */ }
  }

  function startMeter() {
    try {
      audioCtx = new AudioContext();
      const analyser = audioCtx.createAnalyser();
      analyser.fftSize = 512;
      audioCtx.createMediaStreamSource(stream).connect(analyser);
      const data = new Uint8Array(analyser.fftSize);
      meterTimer = setInterval(() => {
        analyser.getByteTimeDomainData(data);
        let peak = 0;
        for (const v of data) peak = Math.max(peak, Math.abs(v - 128));
        $("level").style.width = Math.min(100, peak * 1.5) + "%";
      }, 100);
    } catch (e) { /* the level meter is optional */ }
  }

  async function startCall() {
    setState("connecting", "connecting");
    $("transcript").textContent = "";
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
    } catch (e) {
      setState("error", "micdenied");
      return;
    }
    startMeter();
    pc = new RTCPeerConnection({ iceServers: cfg.iceServers || [] });
    // The server reads the caller's audio from the first transceiver.
    pc.addTransceiver(stream.getAudioTracks()[0], { direction: "sendrecv", streams: [stream] });
    dc = pc.createDataChannel("chat", { ordered: true });
    dc.onopen = () => {
      pinger = setInterval(() => { if (dc && dc.readyState === "open") dc.send("ping: " + Date.now()); }, 1000);
    };
    dc.onmessage = onMessage;
    pc.ontrack = (e) => {
      const audio = $("remote");
      audio.srcObject = (e.streams && e.streams[0]) || new MediaStream([e.track]);
      audio.play().catch(() => {});
    };
    pc.onicecandidate = (e) => {
      if (!e.candidate || !e.candidate.candidate) return;
      pending.push({ candidate: e.candidate.candidate, sdp_mid: e.candidate.sdpMid,
                     sdp_mline_index: e.candidate.sdpMLineIndex });
      patchCandidates();
    };
    pc.onconnectionstatechange = () => {
      if (pc && pc.connectionState === "failed") hangUp("failed", "error");
    };
    try {
      await pc.setLocalDescription(await pc.createOffer());
      const res = await fetch(cfg.offerUrl, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ sdp: pc.localDescription.sdp, type: "offer", requestData: { line: cfg.line } }),
      });
      if (!res.ok) {
        hangUp(res.status === 404 ? "notfound" : res.status === 503 ? "busy" : "failed", "error");
        return;
      }
      const answer = await res.json();
      pcId = answer.pc_id;
      await pc.setRemoteDescription({ type: answer.type, sdp: answer.sdp });
      patchCandidates();
    } catch (e) {
      hangUp("failed", "error");
    }
  }

  function hangUp(key, state) {
    if (pinger) clearInterval(pinger);
    if (meterTimer) clearInterval(meterTimer);
    pinger = meterTimer = null;
    $("level").style.width = "0";
    if (dc) { try { dc.close(); } catch (e) { /* closing */ } }
    if (pc) { try { pc.close(); } catch (e) { /* closing */ } }
    if (stream) stream.getTracks().forEach((track) => track.stop());
    if (audioCtx) audioCtx.close().catch(() => {});
    pc = dc = stream = pcId = audioCtx = null;
    pending = [];
    setState(state || "ended", key || "ended");
  }

  $("call").addEventListener("click", () => {
    const active = body.dataset.state === "connecting" || body.dataset.state === "in-call";
    if (active) hangUp("ended"); else startCall();
  });
  $("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    localStorage.setItem("callassist.lang", lang);
    render();
  });
  window.addEventListener("pagehide", () => { if (pc) hangUp("ended"); });
  render();
})();
