"""A self-contained HTML timeline of analysed sessions (``orf analyze --html``).

Each session opens with a summary (each finding with its cost in steps, tokens and seconds,
linked to its rows), a strip chart of its steps and a legend; each step is a row, long
arguments and outputs folded in ``<details>``. Several sessions get a table of contents
ordered by waste. No script, no network: inline CSS and SVG only. All text is HTML-escaped
and redacted.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

from ..analyze import SessionReport
from ..fsutil import atomic_write
from ..model import Finding, Step
from .steps_html import FOLD_AT, FOLD_LINES, action_cell, output_cell
from .steps_html import esc as _e
from .svg import CHART_CSS, strip

__all__ = ["FOLD_AT", "FOLD_LINES", "ROW_STYLES", "render_timeline", "write_timeline"]

# Row classes: CSS colour, strip colour and legend text, in the order the legend shows them.
ROW_STYLES: tuple[tuple[str, str, str], ...] = (
    ("wasted", "#e45756", "wasted step (a repeat a finding counts)"),
    ("first", "#f2b447", "first attempt of a loop"),
    ("resolve", "#54a24b", "the step that broke the loop"),
    ("repeat", "#b8c7e0", "legitimate repeat (something changed in between)"),
    ("err", "#9e3b3b", "step that failed (red output)"),
    ("plain", "#d9d9d9", "other step"),
)
_COLOR = {name: color for name, color, _text in ROW_STYLES}

_CSS = CHART_CSS + """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;width:100%}
td,th{padding:3px 6px;border-bottom:1px solid #eee;vertical-align:top;text-align:left}
tr.wasted{background:#fde2e1} tr.first{background:#fff4d6} tr.resolve{background:#dff5e1}
tr.repeat{background:#eef3fb} tr.err td.out{color:#a40000} tr:target{outline:2px solid #4c78a8}
code{white-space:pre-wrap;word-break:break-all;font-size:12px}
.tag{font-size:11px;padding:1px 5px;border-radius:3px;background:#eee;margin-right:3px}
details summary{cursor:pointer;color:#4c78a8} details summary code{color:#222}
td.i{white-space:nowrap;color:#555} code.act{display:block}
details.args summary{font-size:11px;margin-top:2px}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px}
ul.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
table.findings td.n,table.toc td.n{text-align:right} a.w{color:#c0392b;font-weight:bold}
"""


def _row_id(n: int, step: int) -> str:
    return f"s{n}-step{step}"


def _cost(f: Finding) -> str:
    tokens = "?" if f.wasted_tokens is None else f"{f.wasted_tokens:,}"
    seconds = "?" if f.wasted_seconds is None else f"{f.wasted_seconds:,.0f}"
    return (f'<td class="n">{f.wasted_steps}</td><td class="n">{tokens}</td>'
            f'<td class="n">{seconds}</td>')


def _findings_table(n: int, findings: list[Finding]) -> str:
    if not findings:
        return "<p>No wasted-step loop found.</p>"
    rows = []
    for k, f in enumerate(sorted(findings, key=lambda f: -f.wasted_steps), 1):
        wasted = set(f.wasted_source_ids)
        links = " ".join(
            f'<a href="#{_row_id(n, i)}"{" class=w" if sid in wasted else ""}>{i}</a>'
            for i, sid in zip(f.steps, f.source_ids, strict=False))
        rows.append(f'<tr><td>{k}</td><td>{_e(f.kind)}</td><td>{_e(f.summary)}</td>'
                    f'{_cost(f)}<td>{links}</td></tr>')
    return ('<table class="findings"><tr><th>#</th><th>finding</th><th>what</th>'
            '<th class="n">wasted steps</th><th class="n">tokens</th><th class="n">seconds</th>'
            f'<th>steps</th></tr>{"".join(rows)}</table>')


def _legend() -> str:
    items = "".join(f'<li><i style="background:{color}"></i>{html.escape(text)}</li>'
                    for _name, color, text in ROW_STYLES)
    return f'<ul class="legend">{items}</ul>'


_Classes = tuple[dict[int, list[str]], dict[int, list[str]], dict[int, str], dict[int, str]]
"""Per step index: kinds it is wasted in, kinds it first tried, change that resolved a loop,
source id of the earlier step it legitimately repeats."""


def _classes(report: SessionReport) -> _Classes:
    wasted: dict[int, list[str]] = {}
    first: dict[int, list[str]] = {}
    resolving: dict[int, str] = {}
    for f in report.findings:
        wasted_ids = set(f.wasted_source_ids)
        for idx, sid in zip(f.steps, f.source_ids, strict=False):
            (wasted if sid in wasted_ids else first).setdefault(idx, []).append(f.kind)
        if f.resolution:
            resolving[f.resolution.step] = f.resolution.change
    repeat_of = {r.step: r.repeat_of_source_id for r in report.repeats if not r.wasted}
    return wasted, first, resolving, repeat_of


def _row(n: int, s: Step, classes: _Classes, index_of: dict[str, int]) -> tuple[str, str]:
    """The step's table row and its main class."""
    wasted, first, resolving, repeat_of = classes
    cls: list[str] = []
    tags = ""
    if s.index in wasted:
        cls.append("wasted")
        tags += "".join(f'<span class="tag">wasted: {_e(k)}</span>' for k in wasted[s.index])
    elif s.index in first:
        cls.append("first")
        tags += "".join(f'<span class="tag">first: {_e(k)}</span>' for k in first[s.index])
    if s.index in repeat_of:
        cls.append("repeat")
        earlier = repeat_of[s.index]
        cited = f"#{index_of[earlier]}" if earlier in index_of else earlier
        tags += f'<span class="tag">repeats {_e(cited)}</span>'
    if s.index in resolving:
        cls.append("resolve")
        tags += f'<span class="tag">resolved: {_e(resolving[s.index])}</span>'
    if s.is_error:
        cls.append("err")
    main = next((c for c in ("wasted", "resolve", "first", "repeat", "err") if c in cls),
                "plain")
    # Steps are cited by index; the log's own id (a call id, a file and line) is a tooltip.
    row = (f'<tr id="{_row_id(n, s.index)}" class="{" ".join(cls)}">'
           f'<td class="i" title="{_e(s.source_id)}">#{s.index}</td><td>{_e(s.kind)}</td>'
           f'<td class="act">{tags}{action_cell(s)}</td><td class="out">{output_cell(s)}</td>'
           f"<td>{'' if s.exit_code is None else s.exit_code}</td></tr>")
    return row, main


def _says(longer: str, shorter: str) -> bool:
    return longer == shorter or longer.startswith(shorter + " ")


def _facts(report: SessionReport) -> str:
    """The meta line: who ran the session and what it cost, no value said twice."""
    t = report.trajectory
    agent = " ".join(x for x in (t.agent, t.agent_version) if x)
    who: list[str] = []
    for value in (t.source.format, agent):
        if value and not any(_says(w, value) for w in who):
            # ``codex`` then ``codex 0.110.0``: the longer one says both.
            who = [w for w in who if not _says(value, w)] + [value]
    verdict = report.verdict
    return (
        f"<p class=\"meta\">{' · '.join(_e(w) for w in who)} · model {_e(t.model or '?')} · "
        f"{len(t.steps)} steps · {t.tool_calls} tool calls ({t.failed_calls} failed) · "
        f"wasted steps {report.wasted_steps}"
        + (f" · verdict {_e(verdict.outcome)} ({_e(verdict.decided_by)})" if verdict else "")
        + "</p>")


def _session_html(n: int, report: SessionReport) -> str:
    t = report.trajectory
    classes = _classes(report)
    index_of: dict[str, int] = {}
    for s in t.steps:
        index_of.setdefault(s.source_id, s.index)
    rows, cells = [], []
    for s in t.steps:
        row, main = _row(n, s, classes, index_of)
        rows.append(row)
        cells.append((_COLOR[main], f"step #{s.index}: {main}",
                      _row_id(n, s.index) if main != "plain" else ""))
    chart = strip(f"Steps of this session ({report.wasted_steps} wasted)", cells,
                  chart_id=f"s{n}-strip") if cells else ""
    return (
        f'<section id="s{n}"><h2>{_e(t.id)}</h2><p><code>{_e(t.source.path)}</code></p>'
        f"{_facts(report)}<p><b>Task:</b> {_e((t.task or '')[:500])}</p>"
        f"<h3>Summary</h3>{_findings_table(n, report.findings)}{chart}{_legend()}"
        "<table class=\"steps\"><tr><th>#</th><th>kind</th><th>action</th>"
        f"<th>output</th><th>exit</th></tr>{''.join(rows)}</table></section>")


def _toc(reports: list[SessionReport]) -> str:
    order = sorted(range(len(reports)), key=lambda i: (-reports[i].wasted_steps, i))
    rows = []
    for i in order:
        r = reports[i]
        tokens = sum(f.wasted_tokens or 0 for f in r.findings)
        rows.append(f'<tr><td><a href="#s{i}">{_e(r.trajectory.id)}</a></td>'
                    f"<td>{_e(r.trajectory.agent or '?')}</td>"
                    f'<td class="n">{len(r.trajectory.steps)}</td>'
                    f'<td class="n">{len(r.findings)}</td>'
                    f'<td class="n">{r.wasted_steps}</td><td class="n">{tokens:,}</td></tr>')
    return ('<h2 id="contents">Sessions by waste</h2><table class="toc"><tr><th>session</th>'
            '<th>agent</th><th class="n">steps</th><th class="n">findings</th>'
            '<th class="n">wasted steps</th><th class="n">wasted tokens</th></tr>'
            + "".join(rows) + "</table>")


def render_timeline(reports: Iterable[SessionReport]) -> str:
    """The whole HTML page."""
    items = list(reports)
    toc = _toc(items) if len(items) > 1 else ""
    body = "".join(_session_html(n, r) for n, r in enumerate(items))
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset='utf-8'>"
        f"<title>orf timeline</title><style>{_CSS}</style></head><body>"
        f"<h1>Session timeline</h1>{toc}{body}</body></html>\n")


def write_timeline(path: Path, reports: Iterable[SessionReport]) -> None:
    """Write the timeline atomically."""
    atomic_write(path, render_timeline(reports))
