"""Tiny inline-SVG bar charts for the HTML reports (no JavaScript, no network, no dependency).

A chart is drawn once in Python as plain SVG elements, so a page opens anywhere offline,
prints, and survives e-mail attachments and strict Content-Security-Policies.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2")


def esc(text: object) -> str:
    """HTML/SVG-escape ``text``."""
    return html.escape(str(text), quote=True)


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:.1f}"


@dataclass(frozen=True)
class Marker:
    """A vertical line across a column chart (e.g. a playbook's arrival)."""

    position: float
    """Column index (fractions fall between columns)."""
    label: str


def columns(title: str, labels: Sequence[str], values: Sequence[float], *,
            markers: Sequence[Marker] = (), width: int = 760, height: int = 220,
            chart_id: str = "") -> str:
    """A column chart, one column per label, with optional vertical markers."""
    top, bottom, left = 24, 40, 48
    plot_w, plot_h = width - left - 10, height - top - bottom
    peak = max(values, default=0) or 1
    step = plot_w / max(1, len(values))
    parts = [f'<text x="{left}" y="14" class="ct">{esc(title)}</text>',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" '
             'stroke="#999"/>',
             f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" class="ax">'
             f'{_fmt(peak)}</text>']
    every = max(1, len(labels) // 12)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * value / peak
        x = left + i * step + step * 0.15
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{step * 0.7:.1f}" '
                     f'height="{max(h, 0.5):.1f}" fill="{PALETTE[0]}"><title>{esc(label)}: '
                     f'{_fmt(value)}</title></rect>')
        if i % every == 0:
            parts.append(f'<text x="{x + step * 0.35:.1f}" y="{top + plot_h + 14}" '
                         f'text-anchor="middle" class="ax">{esc(label)}</text>')
    for n, m in enumerate(markers):
        x = left + m.position * step
        y = top + 10 + 12 * (n % 3)
        # Labels near the right edge go to the left of their line, so they are not cut.
        anchor, dx = ("end", -3) if x > width - 220 else ("start", 3)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" '
                     'stroke="#e45756" stroke-dasharray="4 3" class="marker"/>'
                     f'<text x="{x + dx:.1f}" y="{y}" text-anchor="{anchor}" class="mk">'
                     f'{esc(m.label)}</text>')
    return _svg(parts, width, height, chart_id)


def hbars(title: str, rows: Sequence[tuple[str, Sequence[float]]], *, series: Sequence[str],
          width: int = 760, chart_id: str = "", unit: str = "") -> str:
    """Horizontal bars: one group per row, one bar per series (e.g. before and after)."""
    bar, gap, label_w, top = 12, 10, 340, 24
    n = max(1, len(series))
    height = top + len(rows) * (n * bar + gap) + 28
    peak = max((v for _l, vals in rows for v in vals), default=0) or 1
    plot_w = width - label_w - 70
    parts = [f'<text x="4" y="14" class="ct">{esc(title)}</text>']
    y = top
    for label, vals in rows:
        short = label if len(label) <= 44 else label[:43] + "…"
        parts.append(f'<text x="{label_w - 6}" y="{y + n * bar / 2 + 4:.1f}" '
                     f'text-anchor="end" class="lb"><title>{esc(label)}</title>'
                     f'{esc(short)}</text>')
        for k, value in enumerate(vals):
            w = plot_w * value / peak
            parts.append(f'<rect x="{label_w}" y="{y + k * bar}" width="{max(w, 0.5):.1f}" '
                         f'height="{bar - 2}" fill="{PALETTE[k % len(PALETTE)]}"><title>'
                         f'{esc(series[k] if k < len(series) else "")}: {_fmt(value)}{unit}'
                         '</title></rect>'
                         f'<text x="{label_w + w + 4:.1f}" y="{y + k * bar + bar - 3}" '
                         f'class="ax">{_fmt(value)}{esc(unit)}</text>')
        y += n * bar + gap
    if len(series) > 1:
        for k, name in enumerate(series):
            x = label_w + k * 110
            parts.append(f'<rect x="{x}" y="{height - 16}" width="10" height="10" '
                         f'fill="{PALETTE[k]}"/><text x="{x + 14}" y="{height - 7}" '
                         f'class="ax">{esc(name)}</text>')
    return _svg(parts, width, height, chart_id)


def _svg(parts: list[str], width: int, height: int, chart_id: str) -> str:
    ident = f' id="{esc(chart_id)}"' if chart_id else ""
    return (f'<svg class="chart"{ident} xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img">'
            + "".join(parts) + "</svg>")


CHART_CSS = """
svg.chart{display:block;margin:8px 0 18px;max-width:100%;height:auto}
svg .ct{font:bold 13px system-ui,sans-serif} svg .ax{font:11px system-ui,sans-serif;fill:#555}
svg .lb{font:12px system-ui,sans-serif} svg .mk{font:11px system-ui,sans-serif;fill:#c0392b}
"""


def strip(title: str, cells: Sequence[tuple[str, str, str]], *, width: int = 760,
          chart_id: str = "") -> str:
    """A one-row timeline: one cell per step, ``(color, tooltip, link)`` each.

    A cell with a link is an SVG ``<a>`` to that row, so the strip doubles as a minimap.
    """
    top, height, left = 22, 56, 4
    cell = (width - 2 * left) / max(1, len(cells))
    parts = [f'<text x="{left}" y="14" class="ct">{esc(title)}</text>']
    for i, (color, tip, link) in enumerate(cells):
        rect = (f'<rect x="{left + i * cell:.2f}" y="{top}" width="{max(cell - 0.3, 0.6):.2f}" '
                f'height="26" fill="{color}"><title>{esc(tip)}</title></rect>')
        parts.append(f'<a href="#{esc(link)}">{rect}</a>' if link else rect)
    parts.append(f'<text x="{left}" y="{height - 2}" class="ax">step 0</text>'
                 f'<text x="{width - left}" y="{height - 2}" text-anchor="end" class="ax">'
                 f'step {max(0, len(cells) - 1)}</text>')
    return _svg(parts, width, height, chart_id)
