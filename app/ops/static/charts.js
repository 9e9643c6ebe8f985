// Hand-written SVG charts for the ops dashboard: a time-series line chart with
// threshold lines, and a horizontal bar chart. No dependencies; everything is built
// with DOM calls (the page's CSP allows no inline script or style).

const SVG_NS = "http://www.w3.org/2000/svg";
const PAD = { left: 52, right: 14, top: 18, bottom: 26 };

// Draw at the container's real width so that text keeps its size (no scaling).
function widthOf(container) {
  return Math.max(280, Math.round(container.clientWidth || 640));
}

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Round tick steps: 1, 2, 2.5, 5 x 10^n (whole numbers only for counts).
function niceStep(span, count, integer) {
  const raw = Math.max(integer ? 1 : 0, span / Math.max(1, count));
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const f of [1, 2, 2.5, 5, 10]) if (f * mag >= raw) return f * mag;
  return 10 * mag;
}

export function formatValue(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (unit === "ms") {
    if (v === 0) return "0 ms";
    if (v >= 10000) return `${(v / 1000).toFixed(1)} s`;
    if (v >= 100) return `${Math.round(v)} ms`;
    if (v >= 10) return `${v.toFixed(1)} ms`;
    if (v >= 1) return `${v.toFixed(2)} ms`;
    return `${v.toFixed(3)} ms`;
  }
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function formatTime(t) {
  const d = new Date(t * 1000);
  return d.toTimeString().slice(0, 8);
}

function legend(container, series) {
  const ul = document.createElement("ul");
  ul.className = "legend";
  for (const s of series) {
    const li = document.createElement("li");
    li.className = `key c${s.color}`;
    li.dataset.series = s.key;
    const last = [...s.points].reverse().find((p) => p[1] !== null);
    li.textContent = `${s.label}${last ? `: ${formatValue(last[1], s.unit)}` : ""}`;
    ul.append(li);
  }
  container.append(ul);
}

/**
 * Draw a time-series line chart into `container` (replacing what was there).
 * opts: {series: [{key, label, color (0-7), unit, points: [[t, v|null], ...]}],
 *        unit: "ms" | "" (a count), thresholds: [{value, label}], yMinMax: number,
 *        height: number, label: string}
 * Gaps (null values) break the line.
 */
export function lineChart(container, opts) {
  const W = widthOf(container);
  const H = opts.height || 200;
  container.replaceChildren();
  const series = opts.series.map((s) => ({ unit: opts.unit, ...s }));
  const all = series.flatMap((s) => s.points.filter((p) => p[1] !== null));
  const svg = el("svg", {
    viewBox: `0 0 ${W} ${H}`,
    class: "line-chart",
    role: "img",
    "aria-label": opts.label || "chart",
    "data-points": all.length,
  });
  const ts = series.flatMap((s) => s.points.map((p) => p[0]));
  let t1 = ts.length ? Math.max(...ts) : Date.now() / 1000;
  let t0 = ts.length ? Math.min(...ts) : t1 - 60;
  if (t1 - t0 < 60) t0 = t1 - 60;
  const thresholds = opts.thresholds || [];
  let yMax = Math.max(
    opts.yMinMax || 0,
    ...all.map((p) => p[1]),
    ...thresholds.map((th) => th.value * 1.15),
  );
  if (!(yMax > 0)) yMax = 1;
  const step = niceStep(yMax, 4, opts.unit !== "ms");
  yMax = Math.ceil((yMax * 1.05) / step) * step;
  const x = (t) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);

  const grid = el("g", { class: "grid" });
  for (let v = 0; v <= yMax + step / 2; v += step) {
    grid.append(el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }));
    grid.append(
      el("text", { x: PAD.left - 6, y: y(v) + 4, class: "tick y" }, formatValue(v, opts.unit).replace(" ms", "")),
    );
  }
  const xTicks = 4;
  for (let i = 0; i <= xTicks; i++) {
    const t = t0 + ((t1 - t0) * i) / xTicks;
    const anchor = i === 0 ? "start" : i === xTicks ? "end" : "middle";
    grid.append(el("text", { x: x(t), y: H - 8, class: "tick x", "text-anchor": anchor }, formatTime(t)));
  }
  if (opts.unit === "ms") grid.append(el("text", { x: 4, y: 11, class: "tick unit" }, "ms"));
  svg.append(grid);

  for (const th of thresholds) {
    const g = el("g", { class: "threshold", "data-value": th.value });
    g.append(el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(th.value), y2: y(th.value) }));
    g.append(el("text", { x: W - PAD.right - 4, y: y(th.value) - 5, "text-anchor": "end" }, th.label));
    svg.append(g);
  }

  for (const s of series) {
    let d = "";
    let pen = false;
    let n = 0;
    for (const [t, v] of s.points) {
      if (v === null) {
        pen = false;
        continue;
      }
      d += `${pen ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
      n += 1;
    }
    const g = el("g", { class: `series c${s.color}`, "data-series": s.key, "data-points": n });
    if (d) g.append(el("path", { d, class: "line" }));
    const dots = s.points.filter((p) => p[1] !== null);
    // Every point while they are few; only the newest once the line is dense.
    for (const [t, v] of dots.length <= 90 ? dots : dots.slice(-1)) {
      const c = el("circle", { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 2.6, class: "pt", "data-value": v });
      c.append(el("title", {}, `${s.label} ${formatTime(t)}: ${formatValue(v, s.unit)}`));
      g.append(c);
    }
    svg.append(g);
  }
  if (all.length === 0) {
    svg.setAttribute("data-empty", "true");
    svg.append(el("text", { x: W / 2, y: H / 2, class: "empty", "text-anchor": "middle" }, "no data yet"));
  }
  container.append(svg);
  legend(container, series);
}

/**
 * Horizontal bars: items [{label, value}], sorted by value, largest first.
 */
export function barChart(container, items, { empty = "none yet" } = {}) {
  const W = widthOf(container);
  container.replaceChildren();
  const rows = [...items].sort((a, b) => b.value - a.value);
  const rowH = 26;
  const h = Math.max(rowH * rows.length + 10, 50);
  const svg = el("svg", { viewBox: `0 0 ${W} ${h}`, class: "bar-chart", role: "img", "data-bars": rows.length });
  const max = Math.max(1, ...rows.map((r) => r.value));
  const left = 150;
  rows.forEach((r, i) => {
    const g = el("g", { class: `bar c${i % 8}`, "data-label": r.label, "data-value": r.value });
    const top = 5 + i * rowH;
    g.append(el("text", { x: left - 8, y: top + 16, "text-anchor": "end", class: "tick" }, r.label));
    const w = Math.max(2, ((W - left - 60) * r.value) / max);
    g.append(el("rect", { x: left, y: top + 3, width: w.toFixed(1), height: rowH - 8, rx: 3 }));
    g.append(el("text", { x: left + w + 6, y: top + 16, class: "count" }, String(r.value)));
    svg.append(g);
  });
  if (rows.length === 0) {
    svg.setAttribute("data-empty", "true");
    svg.append(el("text", { x: W / 2, y: 30, class: "empty", "text-anchor": "middle" }, empty));
  }
  container.replaceChildren(svg);
}
