// The owner console. Every request goes to the owner's /v1 API with the session cookie
// (same origin); writes carry X-CallAssist-Console. Text is put in the page with
// textContent only. Live events arrive over EventSource('/v1/events').
import { WORDS } from "/app/static/i18n.js";

const $ = (sel, root = document) => root.querySelector(sel);
const state = { lang: localStorage.getItem("ca-lang") || (navigator.language.startsWith("zh") ? "zh" : "en"),
  calls: [], selected: null, record: null, quick: [], leg: null, live: new Set(), seen: new Set(JSON.parse(localStorage.getItem("ca-seen") || "[]")) };
const t = (key) => (WORDS[state.lang] && WORDS[state.lang][key]) || WORDS.en[key] || key;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: { "X-CallAssist-Console": "1" } };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const r = await fetch(path, opts);
  if (r.status === 401) { location.href = "/app"; throw new Error("signed out"); }
  const data = r.status === 204 ? null : await r.json();
  if (!r.ok) throw new Error((data && data.error && data.error.message) || r.statusText);
  return data;
}

function translate() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  for (const n of document.querySelectorAll("[data-i18n]")) n.textContent = t(n.dataset.i18n);
  for (const n of document.querySelectorAll("[data-i18n-placeholder]")) n.placeholder = t(n.dataset.i18nPlaceholder);
  $("#lang").textContent = state.lang === "zh" ? "English" : "中文";
}

function flash(form, ok, message) {
  const s = $(".saved", form) || form;
  s.textContent = ok ? t("saved") : `${t("error")}: ${message}`;
  s.dataset.state = ok ? "ok" : "error";
}

// ---------------------------------------------------------------- calls ----

async function loadCalls() {
  state.calls = (await api("GET", "/v1/calls?limit=200")).calls;
  drawCalls();
}

function drawCalls() {
  const q = $("#search").value.trim().toLowerCase();
  const list = $("#calls");
  list.replaceChildren();
  const shown = state.calls.filter((c) => {
    if ($("#f-unread").checked && state.seen.has(c.call_id)) return false;
    if ($("#f-urgent").checked && !c.urgent) return false;
    if ($("#f-spam").checked && !c.spam) return false;
    const hay = [c.caller, c.caller_number, c.line, c.scene, c.call_id].filter(Boolean).join(" ").toLowerCase();
    return !q || hay.includes(q);
  });
  if (!shown.length) list.append(el("li", { class: "muted" }, t("calls.none")));
  for (const c of shown) {
    const live = !c.ended_at;
    const item = el("li", { class: "call", "data-call": c.call_id, "data-unread": String(!state.seen.has(c.call_id)) },
      el("b", {}, c.caller || c.caller_number || t("unknown")), " ",
      el("span", { class: "muted" }, new Date(c.started_at).toLocaleString(state.lang === "zh" ? "zh-CN" : "en")), " ",
      live ? el("span", { class: "pill live" }, t("calls.live")) : null,
      c.urgent ? el("span", { class: "pill urgent" }, t("calls.urgent")) : null,
      c.spam ? el("span", { class: "pill spam" }, t("calls.spam")) : null);
    item.addEventListener("click", () => openCall(c.call_id));
    list.append(item);
  }
}

async function openCall(callId) {
  state.selected = callId;
  state.seen.add(callId);
  localStorage.setItem("ca-seen", JSON.stringify([...state.seen].slice(-500)));
  state.record = await api("GET", `/v1/calls/${encodeURIComponent(callId)}`);
  drawDetail();
  drawCalls();
}

function drawDetail() {
  const r = state.record;
  const box = $("#detail");
  box.replaceChildren();
  if (!r) return;
  box.append(el("h2", {}, r.owner_record && r.owner_record.caller || r.caller_number || t("unknown"), " ",
    el("small", {}, `${r.channel} · ${r.ended_at ? t("calls.ended") : t("calls.live")}`)));
  if (r.summary) box.append(el("h3", {}, t("calls.summary")), el("p", { id: "summary" }, r.summary.text));
  if (r.screening) box.append(el("p", { class: "muted" }, `${r.screening.decision}: ${r.screening.reason}`));
  if (r.recording) box.append(el("h3", {}, t("calls.recording")),
    el("audio", { controls: "", src: `/v1/calls/${encodeURIComponent(r.call_id)}/recording` }));
  box.append(el("h3", {}, t("calls.transcript")));
  const ul = el("ul", { id: "transcript" });
  for (const e of r.transcript) ul.append(line(e.role, e.text));
  box.append(ul);
  if (!r.ended_at) box.append(takeover(r.call_id));
}

function line(role, text) {
  return el("li", { class: `turn ${role}`, "data-role": role }, el("b", {}, t(`role.${role}`)), " ", text === null ? "…" : text);
}

function takeover(callId) {
  const wrap = el("div", { class: "takeover", id: "takeover" });
  for (const reply of state.quick) {
    wrap.append(el("button", { class: "quick", onclick: () => say(callId, reply) }, reply));
  }
  const input = el("input", { id: "say-text", placeholder: t("calls.saytext") });
  const form = el("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); if (input.value.trim()) say(callId, input.value.trim()); input.value = ""; } },
    input, el("button", {}, t("calls.say")));
  const joinButton = el("button", { id: "join", onclick: () => (state.leg ? leave(callId) : join(callId)) },
    state.leg ? t("calls.leave") : t("calls.join"));
  wrap.append(form, joinButton,
    el("button", { class: "danger", id: "end", onclick: () => api("POST", `/v1/calls/${encodeURIComponent(callId)}/end`, {}) }, t("calls.end")),
    ear());
  return wrap;
}

function ear() {
  const audio = el("audio", { id: "owner-ear", autoplay: "" });
  if (state.leg && state.leg.stream) audio.srcObject = state.leg.stream;
  return audio;
}

// The owner's own voice: a WebRTC leg into the live call (the assistant goes quiet).
async function join(callId) {
  const pc = new RTCPeerConnection({ iceServers: [] });
  const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
  for (const track of mic.getTracks()) pc.addTrack(track, mic);
  const leg = { pc, mic, callId, stream: null };
  pc.ontrack = (ev) => {
    leg.stream = ev.streams[0] || new MediaStream([ev.track]);
    const audio = $("#owner-ear");
    if (audio) audio.srcObject = leg.stream;
  };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((done) => {
    if (pc.iceGatheringState === "complete") return done();
    pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && done());
    setTimeout(done, 3000);
  });
  const answer = await api("POST", `/v1/calls/${encodeURIComponent(callId)}/join`, { sdp: pc.localDescription.sdp, type: "offer" });
  await pc.setRemoteDescription({ sdp: answer.sdp, type: answer.type });
  state.leg = leg;
  drawDetail();
}

async function leave(callId) {
  const leg = state.leg;
  state.leg = null;
  try { await api("POST", `/v1/calls/${encodeURIComponent(callId)}/leave`); } finally {
    if (leg) { leg.pc.close(); for (const track of leg.mic.getTracks()) track.stop(); }
    drawDetail();
  }
}

async function say(callId, text) {
  await api("POST", `/v1/calls/${encodeURIComponent(callId)}/say`, { text });
}

// --------------------------------------------------------------- events ----

function listen() {
  const source = new EventSource("/v1/events");
  const pill = $("#live");
  source.onopen = () => { pill.dataset.state = "up"; pill.textContent = t("live.on"); };
  source.onerror = () => { pill.dataset.state = "down"; pill.textContent = t("live.off"); };
  const onEvent = (ev) => {
    const e = JSON.parse(ev.data);
    if (e.type === "call.started" || e.type === "call.ended") loadCalls();
    if (!state.record || e.call_id !== state.record.call_id) return;
    const ul = $("#transcript");
    if (e.type === "turn.caller") ul.append(line("caller", e.data.text));
    if (e.type === "turn.assistant") ul.append(line("assistant", e.data.text));
    if (e.type === "turn.owner") ul.append(line("owner", e.data.text));
    if (e.type === "call.ended") openCall(e.call_id);
  };
  for (const type of ["call.started", "turn.caller", "turn.assistant", "turn.owner", "call.ended", "message.left", "call.urgent"]) {
    source.addEventListener(type, onEvent);
  }
}

// -------------------------------------------------------------- presets ----

async function loadPresets() {
  const pool = await api("GET", "/v1/presets");
  const box = $("#regular");
  box.replaceChildren();
  for (const scene of ["takeout", "delivery", "taxi"]) {
    const input = el("input", { name: scene, value: pool.regular[scene] ? pool.regular[scene].response : "", placeholder: t("presets.empty") });
    const form = el("form", { class: "row", "data-scene": scene }, el("label", {}, scene), input, el("button", {}, t("save")), el("span", { class: "saved" }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        if (input.value.trim()) await api("PUT", `/v1/presets/regular/${scene}`, { response: input.value.trim() });
        else await api("DELETE", `/v1/presets/regular/${scene}`);
        flash(form, true);
      } catch (err) { flash(form, false, err.message); }
    });
    box.append(form);
  }
  const ul = $("#emergent");
  ul.replaceChildren();
  for (const p of pool.emergent) {
    ul.append(el("li", {}, el("b", {}, p.trigger), " → ", p.response, " ",
      el("button", { class: "link", onclick: async () => { await api("DELETE", `/v1/presets/emergent/${p.id}`); loadPresets(); } }, t("remove"))));
  }
}

// ------------------------------------------------------- other settings ----

async function loadProfile() {
  const p = await api("GET", "/v1/profile");
  const f = $("#profile");
  f.display_name.value = p.display_name;
  f.languages.value = p.languages.join(", ");
  f.greeting.value = p.greeting || "";
  f.private_facts.value = p.private_facts.map((x) => `${x.label} = ${x.value}`).join("\n");
  const lines = (await api("GET", "/v1/lines")).lines;
  $("#lines").replaceChildren(...lines.map((l) => el("li", {}, l.line, " ",
    el("button", { class: "link", onclick: async () => { await api("DELETE", `/v1/lines/${encodeURIComponent(l.line)}`); loadProfile(); } }, t("remove")))));
  $("#owner-name").textContent = p.display_name;
}

async function loadScreening() {
  const s = await api("GET", "/v1/screening");
  const f = $("#screening");
  f.block.value = s.block.join("\n");
  f.allow.value = s.allow.join("\n");
  f.contacts.value = s.contacts.map((c) => `${c.name}, ${c.number}`).join("\n");
  f.alert.value = s.alert;
}

async function loadQuick() {
  state.quick = (await api("GET", "/v1/quick-replies")).replies;
  $("#quick").replies.value = state.quick.join("\n");
}

async function loadWebhooks() {
  const hooks = (await api("GET", "/v1/webhooks")).webhooks;
  $("#webhooks").replaceChildren(...hooks.map((h) => el("li", {}, el("code", {}, h.url), ` (${h.events.join(", ")}) `,
    el("button", { class: "link", onclick: () => showDeliveries(h.id) }, t("webhooks.deliveries")), " ",
    el("button", { class: "link", onclick: async () => { await api("DELETE", `/v1/webhooks/${h.id}`); loadWebhooks(); } }, t("remove")))));
}

async function showDeliveries(id) {
  const ds = (await api("GET", `/v1/webhooks/${id}/deliveries`)).deliveries;
  $("#deliveries").replaceChildren(el("h3", {}, t("webhooks.deliveries")), el("ul", {}, ...ds.map((d) => el("li", {},
    `${d.event_type} · ${d.state} · ${d.attempts.length}× `,
    d.state === "dead" ? el("button", { class: "link", onclick: async () => { await api("POST", `/v1/webhooks/${id}/deliveries/${d.id}/replay`); showDeliveries(id); } }, t("replay")) : null))));
}

const splitLines = (v) => v.split("\n").map((x) => x.trim()).filter(Boolean);

function wireForms() {
  const submit = (sel, fn) => $(sel).addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { await fn(ev.target); flash(ev.target, true); } catch (err) { flash(ev.target, false, err.message); }
  });
  submit("#profile", (f) => api("PUT", "/v1/profile", {
    display_name: f.display_name.value.trim(), languages: f.languages.value.split(",").map((x) => x.trim()).filter(Boolean),
    greeting: f.greeting.value.trim() || null,
    private_facts: splitLines(f.private_facts.value).map((x) => { const [label, ...rest] = x.split("="); return { label: label.trim(), value: rest.join("=").trim() }; }),
  }));
  submit("#line-add", async (f) => { await api("PUT", `/v1/lines/${encodeURIComponent(f.line.value.trim())}`); f.reset(); loadProfile(); });
  submit("#screening", (f) => api("PUT", "/v1/screening", {
    block: splitLines(f.block.value), allow: splitLines(f.allow.value), alert: f.alert.value,
    contacts: splitLines(f.contacts.value).map((x) => { const i = x.lastIndexOf(","); return { name: x.slice(0, i).trim(), number: x.slice(i + 1).trim() }; }),
  }));
  submit("#quick", async (f) => { state.quick = (await api("PUT", "/v1/quick-replies", { replies: splitLines(f.replies.value) })).replies; });
  submit("#emergent-add", async (f) => { await api("POST", "/v1/presets/emergent", { trigger: f.trigger.value.trim(), response: f.response.value.trim() }); f.reset(); loadPresets(); });
  submit("#webhook-add", async (f) => {
    const h = await api("POST", "/v1/webhooks", { url: f.url.value.trim(), events: f.events.value.split(",").map((x) => x.trim()).filter(Boolean) });
    $("#webhook-secret").textContent = `${t("webhooks.secret")}: ${h.secret}`;
    loadWebhooks();
  });
  submit("#preview", async (f) => {
    const p = await api("POST", "/v1/presets/preview", { text: f.text.value.trim() });
    const out = $("#preview-out");
    out.dataset.preset = p.preset || "";
    out.textContent = (p.preset ? `${t("presets.would")}: ${p.preset}` : t("presets.nothing")) +
      `\n${p.scene || "-"} · ${p.act}${p.match ? ` · ${p.match.reason}` : ""}\n→ ${p.reply}`;
  });
}

function showTab(name) {
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== `tab-${name}`;
  for (const b of document.querySelectorAll("#tabs button")) b.dataset.active = String(b.dataset.tab === name);
  ({ presets: loadPresets, profile: loadProfile, screening: loadScreening, quick: loadQuick, webhooks: loadWebhooks }[name] || (() => {}))();
}

async function main() {
  translate();
  $("#lang").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("ca-lang", state.lang);
    translate(); drawCalls(); drawDetail();
  });
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  for (const id of ["#search", "#f-unread", "#f-urgent", "#f-spam"]) $(id).addEventListener("input", drawCalls);
  wireForms();
  showTab("calls");
  await Promise.all([loadCalls(), loadQuick(), loadProfile()]);
  listen();
  document.body.dataset.ready = "1";
}

main();
