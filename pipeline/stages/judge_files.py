"""Evaluation results written beside a trajectory, in the layouts the benchmark tools use.

SWE-bench's harness writes ``report.json`` (``{instance_id: {"resolved": bool}}``) per
instance, Multi-SWE-bench one ``results.json`` with ``resolved`` / ``unresolved_ids`` /
``empty_patch_ids`` lists, Harbor a trial folder with ``agent/trajectory.json`` next to
``verifier/reward.txt`` and ``result.json``. Only a fixed list of places is looked at (no tree
walk), and each file is read once per process.
"""

from __future__ import annotations

import glob
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..model import Trajectory

MAX_EVAL_BYTES = 64_000_000
"""Larger files are not evaluation results; they are not read."""

RESOLVED_LISTS = ("resolved", "resolved_ids")
UNRESOLVED_LISTS = ("unresolved_ids", "empty_patch_ids", "error_ids", "incomplete_ids")
"""Multi-SWE-bench ``results.json`` lists (an empty patch or an error counts as unresolved)."""


@lru_cache(maxsize=256)
def _load(path: str, mtime_ns: int) -> Any:
    """Parsed JSON (or text for ``.txt``), cached by path and mtime; None when unreadable."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_EVAL_BYTES:
            return None
        text = p.read_text(encoding="utf-8")
        return text if p.suffix == ".txt" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def read_eval(path: Path) -> Any:
    """The parsed content of an evaluation file, or None when absent or unreadable."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    return _load(str(path), mtime)


def instance_keys(session_id: str) -> list[str]:
    """Ids an evaluation may use for a session: the id, then its ``__``-separated suffixes.

    ``mswebench-java-gpt4o__fasterxml__jackson-core-566`` is ``fasterxml__jackson-core-566``
    in Multi-SWE-bench's results.
    """
    parts = session_id.split("__")
    return ["__".join(parts[i:]) for i in range(len(parts)) if "__".join(parts[i:])]


def resolved_in(data: Any, session_id: str, *, own: bool = False) -> bool | None:
    """What a report.json or results.json says about ``session_id`` (None: not in it).

    ``own``: the file belongs to this one run (named after it), so an unwrapped report
    (``{"resolved": false, "tests_status": ...}``) counts too.
    """
    if not isinstance(data, dict):
        return None
    if own and isinstance(data.get("resolved"), bool):
        return bool(data["resolved"])
    for key in instance_keys(session_id):
        entry = data.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("resolved"), bool):
            return bool(entry["resolved"])
        for name in RESOLVED_LISTS:
            if isinstance(data.get(name), list) and key in data[name]:
                return True
        for name in UNRESOLVED_LISTS:
            if isinstance(data.get(name), list) and key in data[name]:
                return False
    return None


def _harbor(trial: Path) -> tuple[bool, str] | None:
    """A Harbor trial's reward: ``verifier/reward.txt`` or ``result.json``."""
    text = read_eval(trial / "verifier" / "reward.txt")
    if isinstance(text, str):
        try:
            reward = float(text.strip())
        except ValueError:
            reward = None
        if reward is not None:
            return reward >= 1.0, str(trial / "verifier" / "reward.txt")
    result = read_eval(trial / "result.json")
    if isinstance(result, dict):
        rewards = (result.get("verifier_result") or {}).get("rewards")
        reward = rewards.get("reward") if isinstance(rewards, dict) else None
        if isinstance(reward, (int, float)) and not isinstance(reward, bool):
            return reward >= 1.0, str(trial / "result.json")
    return None


def candidates(path: Path, session_id: str) -> list[tuple[Path, bool]]:
    """Where an evaluation of the trajectory at ``path`` may be, nearest first.

    Each with whether the file belongs to this run alone (per-instance report) or to a batch.
    """
    here = path if path.is_dir() else path.parent
    name = path.name
    stem = name.split(".traj")[0] if ".traj" in name else path.stem
    own = [here / f"{stem}.report.json"]
    if here.name in (session_id, stem):
        own.append(here / "report.json")
    for key in dict.fromkeys([session_id, stem]):
        # SWE-agent / mini-swe-agent batch: <out>/<id>/<id>.traj, evaluation logs beside.
        for up in (here.parent, here.parent.parent):
            own.append(up / "logs" / key / "report.json")
            own += sorted(up.glob(f"eval_results/*/{glob.escape(key)}/report.json"))[:4]
        own.append(here / "eval_outputs" / key / "report.json")  # OpenHands eval
    prefix = stem.split("__")[0]
    batch = [here / "report.json", here / f"{prefix}__results.json", here / "results.json",
             here / "results" / "results.json", here.parent / "results" / "results.json"]
    return [(p, True) for p in own] + [(p, False) for p in batch]


def evaluation_beside(traj: Trajectory) -> tuple[bool, str] | None:
    """``(resolved, file)`` from an evaluation file beside the trajectory, or None."""
    path = Path(traj.source.path)
    if not traj.source.path or not (path.exists()):
        return None
    for cand, own in candidates(path, traj.id):
        found = resolved_in(read_eval(cand), traj.id, own=own)
        if found is not None:
            return found, str(cand)
    if path.parent.name == "agent":
        return _harbor(path.parent.parent)
    return None


__all__ = ["evaluation_beside", "instance_keys", "read_eval", "resolved_in"]
