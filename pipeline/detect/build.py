"""Turn a group of step indices into a fully filled ``Finding``.

Every family calls ``make_finding``: it fills source ids, wasted counts, tokens, seconds,
severity, signature, evidence and resolution the same way, so families only decide *which*
steps form a pattern and which of them are wasted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..config import DetectSettings
from ..hashing import value_hash
from ..model import Evidence, Finding, Resolution, Step, Trajectory
from .info import Info

RESOLUTION_WINDOW = 200
"""How far after a loop the resolving step is looked for (keeps the scan linear)."""


def severity(repeats: int, settings: DetectSettings) -> str:
    """Grade a loop of ``repeats`` occurrences (first attempt included)."""
    if repeats >= settings.high_repeats:
        return "high"
    if repeats >= settings.warn_repeats:
        return "warn"
    return "info"


def _ts(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def step_seconds(steps: list[Step], idx: int) -> float | None:
    """Wall time of step ``idx``: from its timestamp to the next step's, when both are known."""
    if idx + 1 >= len(steps):
        return None
    a, b = _ts(steps[idx].timestamp), _ts(steps[idx + 1].timestamp)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    delta = (b - a).total_seconds()
    return delta if delta >= 0 else None


def brief(traj: Trajectory, info: Info, limit: int = 70) -> str:
    """A step's command for a summary: the session folder left out, cut at ``limit``."""
    from . import shell  # the parser, only when a summary is written

    text = info.label
    root = shell.session_root_of(traj.extra.get("cwd"))
    if root:
        text = text.replace(root + "/", "").replace(root, ".")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def quote(step: Step, info: Info | None, limit: int = 160) -> str:
    """A short one-line description of a step for evidence and summaries."""
    head = info.label if info is not None and info.label else (step.tool or step.kind)
    if step.kind in ("message", "reasoning") and step.text:
        head = step.text
    elif step.kind in ("message", "reasoning", "compaction", "user", "system") and step.output:
        head = step.output
    head = " ".join(head.split())
    tail = ""
    if step.error_signature and step.kind == "tool":
        tail = f" -> {step.error_signature}"
    elif step.exit_code not in (None, 0):
        tail = f" -> exit {step.exit_code}"
    text = head[: max(40, limit - len(tail))] + tail
    return text[:limit]


def evidence_for(
    traj: Trajectory, infos: list[Info], idxs: list[int], limit: int = 4
) -> list[Evidence]:
    """2-4 quotes: the first attempt and the last repeats."""
    pick = idxs if len(idxs) <= limit else [idxs[0], *idxs[-(limit - 1):]]
    out = []
    for i in pick:
        step = traj.steps[i]
        out.append(
            Evidence(
                step=i,
                source_id=step.source_id,
                quote=quote(step, infos[i]),
                raw_ref=str(step.raw_ref) if step.raw_ref is not None else None,
            )
        )
    return out


def find_resolution(traj: Trajectory, infos: list[Info], idxs: list[int]) -> Resolution | None:
    """First step after an error loop that ran the same kind of action and did not fail."""
    last = idxs[-1]
    looped = infos[last]
    if not traj.steps[last].is_error and not looped.failed:
        return None
    progs = {infos[i].program for i in idxs}
    classes = {infos[i].cls for i in idxs}
    changed: list[str] = []
    stop = min(len(infos), last + 1 + RESOLUTION_WINDOW)
    for j in range(last + 1, stop):
        info = infos[j]
        if info.cls in ("write", "edit", "install", "vcs", "env") and not info.failed:
            what = info.label or info.cls
            if what not in changed:
                changed.append(what)
        if info.cls not in classes or info.program not in progs or info.failed:
            continue
        if info.canon != looped.canon:
            change = f"command changed: {looped.label[:70]} -> {info.label[:70]}"
        else:
            change = "same command after: " + "; ".join(c[:60] for c in changed[-3:])
        if info.canon == looped.canon and not changed:
            continue
        return Resolution(step=j, source_id=traj.steps[j].source_id, change=change,
                          action=info.label[:300])
    return None


def make_finding(
    kind: str,
    traj: Trajectory,
    infos: list[Info],
    steps: list[int],
    wasted: list[int],
    settings: DetectSettings,
    *,
    shape: dict[str, Any],
    summary: str,
    confidence: float,
    error_signature: str | None = None,
    resolve: bool = True,
) -> Finding:
    """Assemble a ``Finding`` with every field filled.

    Args:
        kind: Family name.
        traj: The trajectory.
        infos: Its analysis (``actions.analyze``).
        steps: All step indices in the pattern.
        wasted: The indices judged wasted (a subset of ``steps``).
        settings: Thresholds for severity.
        shape: Session-independent description hashed into the signature.
        summary: One readable line.
        confidence: 0..1.
        error_signature: The shared error signature, for error-driven loops.
        resolve: Look for the step that broke the loop.

    Returns:
        The finding.
    """
    all_steps = sorted(set(steps) | set(wasted))
    wasted = sorted(set(wasted))
    tokens = [traj.steps[i].tokens for i in wasted]
    known_tokens = [t for t in tokens if t is not None]
    secs = [step_seconds(traj.steps, i) for i in wasted]
    known_secs = [s for s in secs if s is not None]
    return Finding(
        kind=kind,
        steps=all_steps,
        source_ids=[traj.steps[i].source_id for i in all_steps],
        wasted_source_ids=[traj.steps[i].source_id for i in wasted],
        wasted_steps=len(wasted),
        signature=value_hash({"family": kind, **shape}),
        wasted_tokens=sum(known_tokens) if known_tokens else None,
        wasted_seconds=round(sum(known_secs), 3) if known_secs else None,
        evidence=evidence_for(traj, infos, all_steps),
        resolution=find_resolution(traj, infos, all_steps) if resolve else None,
        confidence=round(confidence, 2),
        severity=severity(len(wasted) + 1, settings),  # type: ignore[arg-type]
        summary=summary,
        error_signature=error_signature,
    )


def retrim(
    finding: Finding, traj: Trajectory, keep: list[int], settings: DetectSettings
) -> Finding:
    """A copy of ``finding`` with only ``keep`` left as wasted (used by the merge step)."""
    keep = sorted(keep)
    tokens = [t for t in (traj.steps[i].tokens for i in keep) if t is not None]
    secs = [s for s in (step_seconds(traj.steps, i) for i in keep) if s is not None]
    finding.wasted_source_ids = [traj.steps[i].source_id for i in keep]
    finding.wasted_steps = len(keep)
    finding.wasted_tokens = sum(tokens) if tokens else None
    finding.wasted_seconds = round(sum(secs), 3) if secs else None
    finding.severity = severity(len(keep) + 1, settings)  # type: ignore[assignment]
    return finding
