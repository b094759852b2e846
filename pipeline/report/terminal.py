"""Readable terminal report for ``orf analyze``."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable

from ..analyze import SessionReport
from ..model import Finding
from ..privacy import redact
from ..provenance import steps_label


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _cell(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


_LONG_PATH = re.compile(r"(?:/[^\s/`'\"]+){4,}")


def _short_paths(text: str) -> str:
    """``/Users/me/src/proj/pkg/mod/file.go`` -> ``…/pkg/mod/file.go``: the tail tells."""
    return _LONG_PATH.sub(lambda m: "…/" + "/".join(m.group(0).split("/")[-3:]), text)


PIPE_WIDTH = 160
"""Width of the report written to a file or a pipe when ``COLUMNS`` does not say."""


def report_width() -> int:
    """``COLUMNS`` when set, else the terminal's width, else ``PIPE_WIDTH`` (a log file)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    return PIPE_WIDTH


def _steps(f: Finding) -> str:
    return steps_label(f.steps, "#")


def findings_table(findings: list[Finding], width: int | None = None) -> list[str]:
    """Rows of the findings table (kind, steps, wasted, evidence, resolution).

    Evidence and resolution share what the terminal leaves after the fixed columns.
    """
    width = width or report_width()
    free = max(60, width - 4 - 16 - 1 - 24 - 1 - 6 - 2 - 1)
    ev_w = max(36, free * 3 // 5)
    res_w = max(24, free - ev_w - 1)
    rows = [f"    {'KIND':<16} {'STEPS':<24} {'WASTED':>6}  {'EVIDENCE':<{ev_w}} RESOLUTION"]
    for f in findings:
        evidence = _short_paths(f.summary or (f.evidence[0].quote if f.evidence else ""))
        if f.resolution:
            resolution = _short_paths(f"step #{f.resolution.step}: {f.resolution.change}")
        else:
            resolution = "-"
        rows.append(
            f"    {f.kind:<16} {_cell(_steps(f), 24):<24} {f.wasted_steps:>6}  "
            f"{_cell(evidence, ev_w):<{ev_w}} {_cell(resolution, res_w)}"
        )
    return rows


def session_lines(report: SessionReport, *, with_drafts: bool = False,
                  width: int | None = None) -> list[str]:
    """The text block for one session, its long lines cut to ``width`` (``report_width``)."""
    width = width or report_width()
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
        lines.append("  task: " + _cell(t.task, width - 8))
    if report.verdict:
        v = report.verdict
        head = f"  verdict: {v.outcome} ({v.decided_by}): "
        lines.append(head + _cell(v.reason, max(30, width - len(head))))
    if report.findings:
        lines.append(f"  findings: {len(report.findings)}, wasted steps: {report.wasted_steps}")
        lines.extend(findings_table(report.findings, width))
    else:
        lines.append("  findings: none")
    if with_drafts:
        for d in report.drafts:
            lines.append(f"  draft [{d.domain}] {d.title}")
            lines.append(f"    trap: {_cell(d.trap, width - 10)}")
            lines.append(f"    insight: {_cell(d.insight, width - 13)}")
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
