"""Readable terminal report for ``orf analyze``."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable

from ..analyze import SessionReport
from ..model import Finding
from ..privacy import redact


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _cell(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


_LONG_PATH = re.compile(r"(?:/[^\s/`'\"]+){4,}")


def _short_paths(text: str) -> str:
    """``/Users/me/src/proj/pkg/mod/file.go`` -> ``…/pkg/mod/file.go``: the tail tells."""
    return _LONG_PATH.sub(lambda m: "…/" + "/".join(m.group(0).split("/")[-3:]), text)


def _steps(f: Finding) -> str:
    # Short log ids (numbers, step ids) read well; long ones (toolu_01...) do not: show the
    # step positions instead.
    if all(len(str(s)) <= 8 for s in f.source_ids):
        ids = [str(s) for s in f.source_ids]
    else:
        ids = [f"#{i}" for i in f.steps]
    if len(ids) > 6:
        ids = [*ids[:5], "…"]
    return ",".join(ids)


def findings_table(findings: list[Finding], width: int | None = None) -> list[str]:
    """Rows of the findings table (kind, steps, wasted, evidence, resolution).

    Evidence and resolution share what the terminal leaves after the fixed columns.
    """
    width = width or shutil.get_terminal_size((140, 24)).columns
    free = max(60, width - 4 - 16 - 1 - 24 - 1 - 6 - 2 - 1)
    ev_w = max(36, free * 3 // 5)
    res_w = max(24, free - ev_w - 1)
    rows = [f"    {'KIND':<16} {'STEPS':<24} {'WASTED':>6}  {'EVIDENCE':<{ev_w}} RESOLUTION"]
    for f in findings:
        evidence = _short_paths(f.summary or (f.evidence[0].quote if f.evidence else ""))
        if f.resolution:
            where = (f.resolution.source_id if len(f.resolution.source_id) <= 8
                     else f"#{f.resolution.step}")
            resolution = _short_paths(f"step {where}: {f.resolution.change}")
        else:
            resolution = "-"
        rows.append(
            f"    {f.kind:<16} {_cell(_steps(f), 24):<24} {f.wasted_steps:>6}  "
            f"{_cell(evidence, ev_w):<{ev_w}} {_cell(resolution, res_w)}"
        )
    return rows


def session_lines(report: SessionReport, *, with_drafts: bool = False) -> list[str]:
    """The text block for one session."""
    t = report.trajectory
    head = f"{t.source.format}  {t.id}"
    if t.parent_session_id:
        head += f"  (sub-agent of {t.parent_session_id})"
    lines = [head, f"  path: {t.source.path}"]
    meta = [
        f"agent {t.agent or '?'}{' ' + t.agent_version if t.agent_version else ''}",
        f"model {t.model or '?'}",
        f"{len(t.steps)} steps",
        f"{t.tool_calls} tool calls ({t.failed_calls} failed)",
        f"tokens {_n(t.tokens_in)} in / {_n(t.tokens_out)} out",
    ]
    lines.append("  " + " · ".join(meta))
    if t.task:
        lines.append("  task: " + _cell(t.task, 100))
    if report.verdict:
        v = report.verdict
        lines.append(f"  verdict: {v.outcome} ({v.decided_by}): {_cell(v.reason, 90)}")
    if report.findings:
        lines.append(f"  findings: {len(report.findings)}, wasted steps: {report.wasted_steps}")
        lines.extend(findings_table(report.findings))
    else:
        lines.append("  findings: none")
    if with_drafts:
        for d in report.drafts:
            lines.append(f"  draft [{d.domain}] {d.title}")
            lines.append(f"    trap: {_cell(d.trap, 100)}")
            lines.append(f"    insight: {_cell(d.insight, 100)}")
        for why in report.draft_failures:
            lines.append(f"  not drafted: {why}")
    return [redact(line) for line in lines]


def totals_lines(reports: Iterable[SessionReport], top: list[dict[str, object]]) -> list[str]:
    """Totals over several sessions and the top recurring signatures."""
    reports = list(reports)
    sessions = len(reports)
    findings = sum(len(r.findings) for r in reports)
    wasted = sum(r.wasted_steps for r in reports)
    steps = sum(len(r.trajectory.steps) for r in reports)
    lines = [
        f"Total: {sessions} sessions, {steps:,} steps, {findings} findings, "
        f"{wasted} wasted steps"
    ]
    if top:
        lines.append("Top recurring traps:")
        for row in top:
            lines.append(
                f"  {row.get('occurrences', 0)!s:>3}x in {row.get('sessions', 0)!s:>2} sessions "
                f"{row.get('kind', '')!s:<16} {_cell(str(row.get('summary', '')), 70)}"
            )
    return [redact(line) for line in lines]
