"""A self-contained HTML timeline of analysed sessions (``orf analyze --html``).

Each step is a row; wasted steps are highlighted with the finding that flagged them, the
resolving step is marked. All text is HTML-escaped and redacted.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

from ..analyze import SessionReport
from ..fsutil import atomic_write
from ..privacy import redact

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;width:100%}
td,th{padding:3px 6px;border-bottom:1px solid #eee;vertical-align:top;text-align:left}
tr.wasted{background:#fde2e1} tr.first{background:#fff4d6} tr.resolve{background:#dff5e1}
tr.err td.out{color:#a40000} code{white-space:pre-wrap;word-break:break-all;font-size:12px}
.tag{font-size:11px;padding:1px 5px;border-radius:3px;background:#eee;margin-right:3px}
"""


def _e(text: object) -> str:
    return html.escape(redact(str(text)))


def _session_html(report: SessionReport) -> str:
    t = report.trajectory
    wasted: dict[int, list[str]] = {}
    first: dict[int, list[str]] = {}
    resolving: dict[int, str] = {}
    for f in report.findings:
        wasted_ids = set(f.wasted_source_ids)
        for idx, sid in zip(f.steps, f.source_ids, strict=False):
            (wasted if sid in wasted_ids else first).setdefault(idx, []).append(f.kind)
        if f.resolution:
            resolving[f.resolution.step] = f.resolution.change
    from ..detect import annotate_repeats

    repeat_of = {r.step: r.repeat_of_source_id
                 for r in annotate_repeats(t, findings=report.findings) if not r.wasted}
    rows = []
    for s in t.steps:
        cls = []
        tags = ""
        if s.index in wasted:
            cls.append("wasted")
            tags += "".join(f'<span class="tag">wasted: {_e(k)}</span>' for k in wasted[s.index])
        elif s.index in first:
            cls.append("first")
            tags += "".join(f'<span class="tag">first: {_e(k)}</span>' for k in first[s.index])
        if s.index in repeat_of:
            tags += f'<span class="tag">repeats {_e(repeat_of[s.index])}</span>'
        if s.index in resolving:
            cls.append("resolve")
            tags += f'<span class="tag">resolved: {_e(resolving[s.index])}</span>'
        if s.is_error:
            cls.append("err")
        action = s.action_key if s.kind == "tool" else s.text or s.output
        rows.append(
            f'<tr class="{" ".join(cls)}"><td>{s.index}</td><td>{_e(s.source_id)[:24]}</td>'
            f"<td>{_e(s.kind)}</td><td>{tags}<code>{_e(action[:600])}</code></td>"
            f'<td class="out"><code>{_e(s.output[:400])}</code></td>'
            f"<td>{'' if s.exit_code is None else s.exit_code}</td></tr>"
        )
    verdict = report.verdict
    summary = (
        f"<p>{_e(t.source.format)} · {_e(t.agent or '?')} · model {_e(t.model or '?')} · "
        f"{len(t.steps)} steps · {t.tool_calls} tool calls ({t.failed_calls} failed) · "
        f"wasted steps {report.wasted_steps}"
        + (f" · verdict {_e(verdict.outcome)} ({_e(verdict.decided_by)})" if verdict else "")
        + "</p>"
    )
    return (
        f"<h2>{_e(t.id)}</h2><p><code>{_e(t.source.path)}</code></p>{summary}"
        f"<p><b>Task:</b> {_e((t.task or '')[:500])}</p>"
        "<table><tr><th>#</th><th>id</th><th>kind</th><th>action</th><th>output</th>"
        f"<th>exit</th></tr>{''.join(rows)}</table>"
    )


def render_timeline(reports: Iterable[SessionReport]) -> str:
    """The whole HTML page."""
    body = "".join(_session_html(r) for r in reports)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>orf timeline</title>"
        f"<style>{_CSS}</style></head><body><h1>Session timeline</h1>{body}</body></html>"
    )


def write_timeline(path: Path, reports: Iterable[SessionReport]) -> None:
    """Write the timeline atomically."""
    atomic_write(path, render_timeline(reports))
