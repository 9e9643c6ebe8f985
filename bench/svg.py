"""Inline SVG charts for the self-contained HTML report (no scripts, no CDN)."""

from __future__ import annotations

from html import escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563")


def grouped_bars(
    groups: list[str],
    series: list[tuple[str, list[float]]],
    *,
    title: str,
    max_value: float = 1.0,
    percent: bool = True,
    width: int = 760,
) -> str:
    """Horizontal grouped bar chart: one block of bars per group, one bar per series."""
    label_w, bar_h, gap, pad_top = 150, 14, 10, 34
    legend_h = 22
    plot_w = width - label_w - 70
    block_h = bar_h * max(1, len(series)) + gap
    height = pad_top + legend_h + block_h * len(groups) + 10
    scale = plot_w / max_value if max_value > 0 else 0.0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
        'font-family="system-ui, sans-serif" font-size="12">',
        f'<text x="0" y="16" font-size="14" font-weight="600">{escape(title)}</text>',
    ]
    x = label_w
    for i, (name, _) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="24" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14}" y="33">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    for t in range(5):
        gx = label_w + plot_w * t / 4
        out.append(
            f'<line x1="{gx:.1f}" y1="{pad_top + legend_h - 4}" x2="{gx:.1f}" y2="{height - 8}" stroke="#e5e7eb"/>'
        )
    y0 = pad_top + legend_h
    for g, group in enumerate(groups):
        top = y0 + g * block_h
        mid = top + bar_h * len(series) / 2 + 4
        out.append(f'<text x="{label_w - 8}" y="{mid:.1f}" text-anchor="end">{escape(group)}</text>')
        for s, (_, values) in enumerate(series):
            v = values[g] if g < len(values) else 0.0
            w = max(0.0, min(v, max_value)) * scale
            y = top + s * bar_h
            color = PALETTE[s % len(PALETTE)]
            shown = f"{100 * v:.1f}%" if percent else f"{v:g}"
            out.append(
                f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="{color}">'
                f"<title>{escape(series[s][0])}: {shown}</title></rect>"
            )
            out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 4}">{shown}</text>')
    out.append("</svg>")
    return "\n".join(out)
