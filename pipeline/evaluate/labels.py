"""Outcome labels for ``orf eval judge``: a JSONL file, or benchmark reports in a folder.

A JSONL line is ``{"session_id": ..., "outcome": "success" | "failure"}`` or ``{"path": ...,
"outcome": ...}`` (a path relative to the labels file, or absolute); other keys are ignored.
``--swebench-reports DIR`` adds every SWE-bench ``report.json`` (``{instance_id: {"resolved":
bool}}``) and Multi-SWE-bench ``results.json`` (``resolved`` / ``unresolved_ids`` /
``empty_patch_ids`` lists) under DIR. A bad line is reported (``file:line: why``) and skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..model import Trajectory
from ..stages.judge_files import RESOLVED_LISTS, UNRESOLVED_LISTS, instance_keys

Truth = Literal["success", "failure"]


@dataclass(frozen=True, slots=True)
class OutcomeLabel:
    """The true outcome of one session."""

    outcome: Truth
    """``success`` or ``failure``."""
    where: str
    """``file:line`` (or the report file) the label came from."""
    session_id: str | None = None
    """The session's id (or a benchmark instance id), when labelled by id."""
    path: Path | None = None
    """The session's log, when labelled by path (resolved)."""


def load_outcome_labels(path: Path, issues: list[str]) -> list[OutcomeLabel]:
    """Labels of a JSONL file; bad lines go to ``issues`` as ``file:line: why``."""
    out: list[OutcomeLabel] = []
    base = path.parent
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            data = json.loads(line)
        except ValueError as exc:
            issues.append(f"{where}: not JSON ({exc})")
            continue
        outcome = data.get("outcome") if isinstance(data, dict) else None
        if outcome not in ("success", "failure"):
            issues.append(f"{where}: 'outcome' must be \"success\" or \"failure\"")
            continue
        sid, raw = data.get("session_id"), data.get("path")
        if not isinstance(sid, str) and not isinstance(raw, str):
            issues.append(f"{where}: needs a 'session_id' or a 'path'")
            continue
        log = None
        if isinstance(raw, str):
            p = Path(raw)
            log = (p if p.is_absolute() else base / p).resolve()
        out.append(OutcomeLabel(outcome, where, sid if isinstance(sid, str) else None, log))
    return out


def _report_labels(path: Path, issues: list[str]) -> list[OutcomeLabel]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        issues.append(f"{path}: unreadable report ({exc})")
        return []
    if not isinstance(data, dict):
        issues.append(f"{path}: not a report (expected a JSON object)")
        return []
    out: list[OutcomeLabel] = []
    if isinstance(data.get("resolved"), bool):
        # An unwrapped per-instance report: the instance is its folder or its name's stem.
        name = path.name[: -len(".report.json")] if path.name.endswith(".report.json") \
            else path.parent.name
        return [OutcomeLabel("success" if data["resolved"] else "failure", str(path),
                             session_id=name)]
    for key, entry in data.items():
        if isinstance(entry, dict) and isinstance(entry.get("resolved"), bool):
            out.append(OutcomeLabel("success" if entry["resolved"] else "failure", str(path),
                                    session_id=key))
    resolved: set[str] = set()
    for name in RESOLVED_LISTS:
        if isinstance(data.get(name), list):
            resolved |= {i for i in data[name] if isinstance(i, str)}
    out += [OutcomeLabel("success", str(path), session_id=i) for i in sorted(resolved)]
    for name in UNRESOLVED_LISTS:
        if isinstance(data.get(name), list):
            out += [OutcomeLabel("failure", str(path), session_id=i) for i in data[name]
                    if isinstance(i, str) and i not in resolved]
    if not out:
        issues.append(f"{path}: no resolved/unresolved instance in this report")
    return out


def load_report_labels(folder: Path, issues: list[str]) -> list[OutcomeLabel]:
    """Labels from every ``*report.json`` / ``*results.json`` under ``folder``."""
    out: list[OutcomeLabel] = []
    for path in sorted(folder.rglob("*.json")):
        if path.name.endswith(("report.json", "results.json")):
            out += _report_labels(path, issues)
    return out


class LabelIndex:
    """Finds the label of a trajectory: by path first, then by id (or instance id suffix)."""

    def __init__(self, labels: list[OutcomeLabel]) -> None:
        self.labels = labels
        self.by_path = {lab.path: lab for lab in labels if lab.path is not None}
        self.by_id: dict[str, OutcomeLabel] = {}
        for lab in labels:
            if lab.session_id is not None:
                # A JSONL label beats a report entry for the same id: it came first.
                self.by_id.setdefault(lab.session_id, lab)
        self.used: set[OutcomeLabel] = set()

    def match(self, traj: Trajectory) -> OutcomeLabel | None:
        """The label of ``traj`` (recorded as used), or None."""
        found = self.by_path.get(Path(traj.source.path).resolve()) if traj.source.path else None
        if found is None:
            found = next((self.by_id[k] for k in instance_keys(traj.id) if k in self.by_id),
                         None)
        if found is not None:
            self.used.add(found)
        return found

    def unused(self) -> list[OutcomeLabel]:
        """Labels no judged session matched."""
        return [lab for lab in self.labels if lab not in self.used]

    def label_paths(self) -> list[Path]:
        """The logs named by path labels (what to judge when no PATHS are given)."""
        return list(dict.fromkeys(lab.path for lab in self.labels if lab.path is not None))


__all__ = ["LabelIndex", "OutcomeLabel", "load_outcome_labels", "load_report_labels"]
