"""Tiny inline-SVG bar charts for the HTML reports (no JavaScript, no network, no dependency).

A chart is drawn once in Python as plain SVG elements, so a page opens anywhere offline,
prints, and survives e-mail attachments and strict Content-Security-Policies.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
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


CHAR_W = 7.0
"""Estimated width of one character of an 11 px label (DejaVu digits and capitals are ~7 px):
labels are spaced and stacked on this estimate, kept on the generous side."""
ROW_H = 14
"""Height of one row of stacked marker labels."""
MAX_STACK = 4
"""Markers at one position list at most this many labels (the last one says how many more)."""


def text_width(text: str) -> float:
    """Estimated width of ``text`` drawn as an 11 px label."""
    return len(text) * CHAR_W


def _label_every(labels: Sequence[str], step: float) -> int:
    """Show every n-th axis label, n the smallest that leaves a gap between neighbours."""
    widest = max((text_width(label) for label in labels), default=0) + 8
    return max(1, math.ceil(widest / max(step, 0.01)))


@dataclass
class _Label:
    text: str
    tip: str
    x: float
    anchor: str
    row: int = 0

    @property
    def span(self) -> tuple[float, float]:
        w = text_width(self.text)
        return (self.x, self.x + w) if self.anchor == "start" else (self.x - w, self.x)


def _stack(markers: Sequence[Marker], x_of: Callable[[float], float],
           width: int) -> list[tuple[float, int, list[_Label]]]:
    """Markers grouped by position, each group as ``(x, first row, labels)``.

    Labels are placed in rows so that no two overlap and none crosses another group's line.
    """
    groups: dict[float, list[str]] = {}
    for m in sorted(markers, key=lambda m: m.position):
        groups.setdefault(round(x_of(m.position), 1), []).append(m.label)
    placed: list[_Label] = []
    lines: list[tuple[float, int]] = []  # (x, first row) of each group's line
    out = []
    for x, texts in sorted(groups.items()):
        if len(texts) > MAX_STACK:
            rest = texts[MAX_STACK - 1:]
            texts = texts[:MAX_STACK - 1] + [f"+{len(rest)} more playbooks"]
            tips = [*texts[:-1], "; ".join(rest)]
        else:
            tips = list(texts)
        # The line starts below every label already drawn across it.
        first = max((lb.row + 1 for lb in placed if lb.span[0] - 3 <= x <= lb.span[1] + 3),
                    default=0)
        row, labels = first, []
        for text, tip in zip(texts, tips, strict=True):
            # Labels near the right edge go to the left of their line, so they are not cut.
            fits = x + 3 + text_width(text) <= width - 2
            label = _Label(text, tip, x + 3 if fits else x - 3, "start" if fits else "end")
            while True:
                label.row = row
                a, b = label.span
                clash = any(lb.row == row and lb.span[0] - 6 < b and a < lb.span[1] + 6
                            for lb in placed) or any(
                    r <= row and a - 3 <= lx <= b + 3 for lx, r in lines)
                if not clash:
                    break
                row += 1
            placed.append(label)
            labels.append(label)
            row += 1
        lines.append((x, first))
        out.append((x, first, labels))
    return out


def columns(title: str, labels: Sequence[str], values: Sequence[float], *,
            markers: Sequence[Marker] = (), width: int = 760, height: int = 220,
            chart_id: str = "") -> str:
    """A column chart, one column per label, with optional vertical markers.

    Axis labels are thinned so that no two overlap; marker labels are stacked in a band above
    the plot (markers at one position share a line), so none overlaps another or a column.
    """
    band, bottom, left = 20, 40, 48
    plot_w = width - left - 10
    step = plot_w / max(1, len(values))

    def x_of(position: float) -> float:
        return left + position * step

    stacked = _stack(markers, x_of, width)
    rows = max((lb.row + 1 for _x, _r, lbs in stacked for lb in lbs), default=0)
    top = band + rows * ROW_H + (6 if rows else 4)
    plot_h = height - band - 4 - bottom
    height = top + plot_h + bottom
    peak = max(values, default=0) or 1
    parts = [f'<text x="{left}" y="14" class="ct">{esc(title)}</text>',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" '
             'stroke="#999"/>',
             f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" class="ax">'
             f'{_fmt(peak)}</text>']
    every = _label_every(labels, step)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * value / peak
        x = left + i * step + step * 0.15
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{step * 0.7:.1f}" '
                     f'height="{max(h, 0.5):.1f}" fill="{PALETTE[0]}"><title>{esc(label)}: '
                     f'{_fmt(value)}</title></rect>')
        center = x + step * 0.35
        if i % every == 0 and center + text_width(label) / 2 <= width:
            parts.append(f'<text x="{center:.1f}" y="{top + plot_h + 14}" '
                         f'text-anchor="middle" class="ax">{esc(label)}</text>')
    for x, first, group in stacked:
        parts.append(f'<line x1="{x:.1f}" y1="{band + first * ROW_H}" x2="{x:.1f}" '
                     f'y2="{top + plot_h}" stroke="#e45756" stroke-dasharray="4 3" '
                     'class="marker"/>')
        parts += [f'<text x="{lb.x:.1f}" y="{band + lb.row * ROW_H + 10}" '
                  f'text-anchor="{lb.anchor}" class="mk"><title>{esc(lb.tip)}</title>'
                  f'{esc(lb.text)}</text>' for lb in group]
    return _svg(parts, width, height, chart_id)


def hbars(title: str, rows: Sequence[tuple[str, Sequence[float | None]]], *,
          series: Sequence[str], width: int = 760, chart_id: str = "", unit: str = "",
          empty: Sequence[str] = ()) -> str:
    """Horizontal bars: one group per row, one bar per series (e.g. before and after).

    A value of None has no data: instead of a bar, the series' ``empty`` text (e.g. "no
    sessions yet") says so.
    """
    bar, gap, label_w, top = 12, 10, 340, 24
    n = max(1, len(series))
    height = top + len(rows) * (n * bar + gap) + 28
    peak = max((v for _l, vals in rows for v in vals if v is not None), default=0) or 1
    plot_w = width - label_w - 70
    parts = [f'<text x="4" y="14" class="ct">{esc(title)}</text>']
    y = top
    for label, vals in rows:
        short = label if len(label) <= 44 else label[:43] + "…"
        parts.append(f'<text x="{label_w - 6}" y="{y + n * bar / 2 + 4:.1f}" '
                     f'text-anchor="end" class="lb"><title>{esc(label)}</title>'
                     f'{esc(short)}</text>')
        for k, value in enumerate(vals):
            name = series[k] if k < len(series) else ""
            if value is None:
                note = empty[k] if k < len(empty) else "no data"
                parts.append(f'<text x="{label_w + 2}" y="{y + k * bar + bar - 3}" '
                             f'class="ax empty">{esc(name)}: {esc(note)}</text>')
                continue
            w = plot_w * value / peak
            parts.append(f'<rect x="{label_w}" y="{y + k * bar}" width="{max(w, 0.5):.1f}" '
                         f'height="{bar - 2}" fill="{PALETTE[k % len(PALETTE)]}"><title>'
                         f'{esc(name)}: {_fmt(value)}{unit}</title></rect>'
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
svg .empty{font-style:italic;fill:#777}
"""


def strip(title: str, cells: Sequence[tuple[str, str, str]], *, chart_id: str = "") -> str:
    """A one-row timeline spanning the page's width, one ``(color, tooltip, link)`` per step.

    Cells are placed in percent of the chart's width (no viewBox), so the strip fills its
    container at any window size while its text keeps its size. A cell with a link is an SVG
    ``<a>`` to that row, so the strip doubles as a minimap.
    """
    top, height = 22, 56
    cell = 100 / max(1, len(cells))
    fill = 0.92 if len(cells) <= 300 else 1.0  # a hairline between cells while they are wide
    ident = f' id="{esc(chart_id)}"' if chart_id else ""
    parts = [f'<svg class="chart"{ident} xmlns="http://www.w3.org/2000/svg" '
             f'width="100%" height="{height}" style="width:100%;height:{height}px" role="img">'
             f'<text x="0" y="14" class="ct">{esc(title)}</text>']
    for i, (color, tip, link) in enumerate(cells):
        rect = (f'<rect x="{i * cell:.4f}%" y="{top}" width="{cell * fill:.4f}%" '
                f'height="26" fill="{color}"><title>{esc(tip)}</title></rect>')
        parts.append(f'<a href="#{esc(link)}">{rect}</a>' if link else rect)
    parts.append(f'<text x="0" y="{height - 2}" class="ax">step #0</text>'
                 f'<text x="100%" y="{height - 2}" text-anchor="end" class="ax">'
                 f'step #{max(0, len(cells) - 1)}</text></svg>')
    return "".join(parts)
