// The ops dashboard: polls /ops/api/summary (the sampled series) and /ops/api/calls,
// draws the charts, and shows a call's transcript at #call/<id>.
// Every value from the API is put in the page with textContent, never as HTML:
// transcripts are untrusted text.

import { barChart, formatValue, lineChart } from "./charts.js";

const LATENCY = [
  ["voice_to_voice", [{ value: 1500, label: "p90 budget 1.5 s" }]],
  ["asr", []],
  ["decision", []],
  ["realizer_ttft", [{ value: 1000, label: "1000 ms" }]],
  ["tts_first_audio", []],
  ["safety_guard", []],
];
const state = { meta: null, series: [], lastT: null, capacity: 720, ready: { summary: false, calls: false } };

function $(sel) {
  return document.querySelector(sel);
}

function make(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (r.status === 401) {
    window.location.assign("/ops/login");
    throw new Error("unauthorized");
  }
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

function markReady(part) {
  state.ready[part] = true;
  if (state.ready.summary && state.ready.calls) document.body.dataset.ready = "1";
}

// ------------------------------------------------------------------ tiles ----

function setStat(name, value, unit) {
  const node = document.querySelector(`[data-stat="${name}"]`);
  node.dataset.value = value === null || value === undefined ? "" : String(value);
  node.textContent = formatValue(value, unit);
}

function renderTiles(cur) {
  setStat("active_calls", cur.active_calls);
  setStat("calls_started", cur.totals.calls_started);
  setStat("turns", cur.totals.turns);
  setStat("ttft_p50", cur.latency.realizer_ttft ? cur.latency.realizer_ttft.p50 : null, "ms");
  setStat("v2v_p90", cur.latency.voice_to_voice ? cur.latency.voice_to_voice.p90 : null, "ms");
  setStat("fallbacks", cur.totals.fallbacks);
  setStat("interventions", cur.totals.interventions);
  setStat("errors", cur.totals.errors);
  const ttft = cur.latency.realizer_ttft ? cur.latency.realizer_ttft.p50 : null;
  $('[data-stat="ttft_p50"]').closest(".tile").dataset.alert = ttft !== null && ttft > 1000 ? "1" : "0";
  const v2v = cur.latency.voice_to_voice ? cur.latency.voice_to_voice.p90 : null;
  $('[data-stat="v2v_p90"]').closest(".tile").dataset.alert = v2v !== null && v2v > 1500 ? "1" : "0";
  const redis = $("#redis-status");
  redis.dataset.state = cur.redis_up === null ? "unknown" : cur.redis_up ? "up" : "down";
  redis.textContent = cur.redis_up === null ? "Redis …" : cur.redis_up ? "Redis up" : "Redis DOWN";
}

// ----------------------------------------------------------------- charts ----

function points(get) {
  return state.series.map((p) => {
    const v = get(p);
    return [p.t, v === undefined ? null : v];
  });
}

function keysOf(field) {
  const keys = new Set();
  for (const p of state.series) for (const k of Object.keys(p[field] || {})) keys.add(k);
  return [...keys].sort();
}

function renderCharts(cur) {
  const ttftSeries = [
    { key: "all", label: "all realizers p50", color: 0, points: points((p) => p.latency.realizer_ttft?.p50) },
  ];
  keysOf("ttft_p50_by_realizer").forEach((r, i) => {
    ttftSeries.push({ key: `realizer:${r}`, label: `${r} p50`, color: 1 + i, points: points((p) => p.ttft_p50_by_realizer[r]) });
  });
  keysOf("endpoints").forEach((e, i) => {
    ttftSeries.push({
      key: `endpoint:${e}`,
      label: `${e} rolling median`,
      color: 4 + (i % 4),
      points: points((p) => p.endpoints[e]?.median_ttft_ms),
    });
  });
  lineChart($("#chart-ttft"), {
    label: "median TTFT",
    unit: "ms",
    height: 240,
    series: ttftSeries,
    thresholds: [{ value: state.meta.thresholds.ttft_median_ms, label: "1000 ms (CALLM median TTFT)" }],
  });
  lineChart($("#chart-active"), {
    label: "active calls",
    unit: "",
    yMinMax: 2,
    series: [{ key: "active", label: "active calls", color: 0, points: points((p) => p.active_calls) }],
  });
  lineChart($("#chart-events"), {
    label: "events per window",
    unit: "",
    yMinMax: 2,
    series: [
      { key: "fallbacks", label: "TTFT-guard fallbacks", color: 2, points: points((p) => p.window.fallbacks) },
      { key: "interventions", label: "safety interventions", color: 3, points: points((p) => p.window.interventions) },
      { key: "errors", label: "errors", color: 5, points: points((p) => p.window.errors) },
    ],
  });
  for (const [name, thresholds] of LATENCY) {
    lineChart($(`#chart-${name}`), {
      label: `${name} latency`,
      unit: "ms",
      thresholds,
      series: ["p50", "p90", "p99"].map((q, i) => ({
        key: q,
        label: q,
        color: i,
        points: points((p) => (p.latency[name] ? p.latency[name][q] : null)),
      })),
    });
  }
  const by = (field) => Object.entries(cur.by[field] || {}).map(([label, value]) => ({ label, value }));
  barChart($("#chart-constraints"), by("interventions"), { empty: "no interventions" });
  barChart($("#chart-fallbacks"), by("fallbacks"), { empty: "no fallbacks" });
}

async function refreshSummary() {
  const since = state.lastT === null ? "" : `?since=${state.lastT}`;
  const data = await getJSON(`/ops/api/summary${since}`);
  state.meta = data;
  state.capacity = Math.max(10, data.capacity || 720);
  state.series.push(...data.series);
  if (state.series.length > state.capacity) state.series.splice(0, state.series.length - state.capacity);
  if (state.series.length) state.lastT = state.series[state.series.length - 1].t;
  for (const w of document.querySelectorAll(".window")) w.textContent = `(last ${Math.round(data.window_s)} s)`;
  $("#realizer").textContent = `realizer: ${data.realizer}`;
  renderTiles(data.current);
  // Charts are sized from their containers, which have no size while hidden.
  if (!$("#dashboard").hidden) renderCharts(data.current);
  const updated = $("#updated");
  updated.dataset.state = "ok";
  updated.textContent = `updated ${new Date(data.now * 1000).toTimeString().slice(0, 8)}`;
  markReady("summary");
}

// ----------------------------------------------------------- recent calls ----

function fmtDate(iso) {
  return iso ? new Date(iso).toLocaleString() : "–";
}

async function refreshCalls() {
  const data = await getJSON("/ops/api/calls?limit=50");
  const body = $("#calls-body");
  body.replaceChildren();
  if (!data.calls.length) {
    const tr = make("tr");
    tr.append(make("td", "no calls yet", { colspan: 11, class: "muted" }));
    body.append(tr);
  }
  for (const c of data.calls) {
    const tr = make("tr", undefined, { "data-call": c.call_id });
    tr.append(
      make("td", fmtDate(c.started_at)),
      make("td", c.owner_id, { class: "mono" }),
      make("td", c.channel),
      make("td", c.lang),
      make("td", c.scene || "–"),
      make("td", c.turns, { class: "num" }),
      make("td", c.interventions, { class: c.interventions ? "num warn" : "num" }),
      make("td", c.fallbacks, { class: c.fallbacks ? "num warn" : "num" }),
      make("td", formatValue(c.median_ttft_ms, "ms"), { class: "num" }),
      make("td", c.ended_at ? c.end_reason : "in progress"),
    );
    const link = make("a", "transcript", { href: `#call/${encodeURIComponent(c.call_id)}` });
    const td = make("td");
    td.append(link);
    tr.append(td);
    body.append(tr);
  }
  markReady("calls");
}

// ------------------------------------------------------------- transcript ----

async function showCall(callId) {
  const section = $("#transcript");
  $("#dashboard").hidden = true;
  section.hidden = false;
  section.dataset.state = "loading";
  $("#t-call-id").textContent = callId;
  let rec;
  try {
    rec = await getJSON(`/ops/api/calls/${encodeURIComponent(callId)}`);
  } catch (err) {
    section.dataset.state = "error";
    $("#t-dialogue").replaceChildren(make("li", String(err.message), { class: "error" }));
    return;
  }
  const meta = $("#t-meta");
  meta.replaceChildren();
  const facts = [
    ["Owner", rec.owner_id],
    ["Channel", rec.channel],
    ["Line", rec.line || "–"],
    ["Language", rec.lang],
    ["Scene", rec.scene || "–"],
    ["Started", fmtDate(rec.started_at)],
    ["Ended", rec.ended_at ? `${fmtDate(rec.ended_at)} (${rec.end_reason})` : "in progress"],
    ["Median TTFT", formatValue(rec.summary.median_ttft_ms, "ms")],
  ];
  for (const [k, v] of facts) meta.append(make("dt", k), make("dd", v));
  const dialogue = $("#t-dialogue");
  dialogue.replaceChildren();
  for (const e of rec.transcript) {
    const li = make("li", undefined, { class: e.role, "data-turn": e.turn ?? "" });
    li.append(make("span", `${e.role} · ${e.t.toFixed(1)} s`, { class: "who" }));
    li.append(make("span", e.text === null ? "(silence)" : e.text, { class: "text" }));
    dialogue.append(li);
  }
  const turns = $("#t-turns");
  turns.replaceChildren();
  for (const t of rec.turns) {
    const tr = make("tr");
    tr.append(
      make("td", t.index, { class: "num" }),
      make("td", t.caller_act),
      make("td", t.relation),
      make("td", t.act),
      make("td", t.preset_conveyed || "–"),
      make("td", t.realizer, { class: t.realizer.includes(":") ? "warn" : "" }),
      make("td", formatValue(t.timings.decision_ms, "ms"), { class: "num" }),
      make("td", formatValue(t.timings.first_token_ms, "ms"), { class: "num" }),
      make("td", (t.input_flags || []).join(", ") || "–"),
    );
    turns.append(tr);
  }
  const iv = $("#t-interventions");
  iv.replaceChildren();
  if (!rec.interventions.length) iv.append(make("li", "none", { class: "muted" }));
  for (const i of rec.interventions) {
    iv.append(make("li", `turn ${i.turn}: ${i.constraint} (${i.rule}) — replaced: “${i.audit}”`, { "data-constraint": i.constraint }));
  }
  $("#t-owner-record").textContent = JSON.stringify(rec.owner_record, null, 2);
  section.dataset.state = "ok";
}

function route() {
  const m = window.location.hash.match(/^#call\/(.+)$/);
  if (m) {
    showCall(decodeURIComponent(m[1]));
  } else {
    $("#transcript").hidden = true;
    $("#dashboard").hidden = false;
    if (state.meta) renderCharts(state.meta.current);
  }
}

// ------------------------------------------------------------------ loops ----

function loop(fn, everyS) {
  const tick = async () => {
    try {
      await fn();
    } catch (err) {
      const updated = $("#updated");
      updated.dataset.state = "error";
      updated.textContent = `update failed: ${err.message}`;
    }
    setTimeout(tick, Math.max(1, everyS()) * 1000);
  };
  tick();
}

window.addEventListener("hashchange", route);
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => state.meta && renderCharts(state.meta.current), 150);
});
route();
loop(refreshSummary, () => (state.meta ? state.meta.interval_s : 5));
loop(refreshCalls, () => Math.max(5, state.meta ? state.meta.interval_s * 2 : 5));
