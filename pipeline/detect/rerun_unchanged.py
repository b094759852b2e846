"""Reruns without change: the same test/build/lint/script run again with no edit between.

Also the same failing run after only clearing its build output (``make`` then ``make clean &&
make``, ``rm -rf build && make``) that fails the same way: cleaning changed nothing that
mattered.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .classify_shell import is_cleanup, only_cleanup_before_run, run_tail
from .info import Info, is_action, shape
from .repeats import chains
from .unran import other_program

RUN_CLASSES = frozenset({"test", "build", "lint", "run"})


def _accept(info: Info) -> bool:
    return info.cls in RUN_CLASSES


@register("rerun_unchanged")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Same canonical command of a running class, no file/env change since its last run."""
    infos = infos_for(traj)
    steps = traj.steps
    found = chains(infos, _accept, lambda i, info: info.canon)
    for chain in (part for c in found for part in split_at_other_means(traj, infos, c)):
        first = infos[chain[0]]
        errs = [steps[i].error_signature for i in chain if steps[i].is_error]
        sig = errs[-1] if errs else None
        outcome = "failing" if sig or first.failed else "passing" if first.cls == "test" else ""
        yield make_finding(
            "rerun_unchanged", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "error": sig},
            summary=f"{first.cls} `{first.label[:80]}` rerun {len(chain) - 1}x with no change "
            f"in between{' (' + outcome + ')' if outcome else ''}",
            confidence=0.9, error_signature=sig,
        )


def split_at_other_means(traj: Trajectory, infos: list[Info],
                         chain: list[int]) -> list[list[int]]:
    """``chain`` cut where a failed run is sent again by other means that answer its error.

    ``python: command not found`` then the same script through ``python3`` (one canonical
    form), or a call the sandbox failed (no network) sent again asking for escalated
    permissions: the second run answers the error the first got (the labels' rule book).
    """
    parts: list[list[int]] = [[chain[0]]]
    for a, b in zip(chain, chain[1:], strict=False):
        if other_program(traj.steps[a], infos[b]) or (
                infos[a].failed and escalated(traj.steps[b]) and not escalated(traj.steps[a])):
            parts.append([b])
        else:
            parts[-1].append(b)
    return [p for p in parts if len(p) > 1]


def escalated(step: Step) -> bool:
    """The call asks to run outside the sandbox (Codex ``sandbox_permissions``)."""
    args = step.args if isinstance(step.args, dict) else {}
    return args.get("sandbox_permissions") == "require_escalated" or args.get(
        "with_escalated_permissions") in (True, "true")


def _changes(traj: Trajectory, infos: list[Info], i: int) -> bool:
    """Step ``i`` may change a later run's outcome (clearing build output does not)."""
    info = infos[i]
    if traj.steps[i].kind in ("user", "compaction"):
        return True
    moved = i + 1 < len(infos) and infos[i + 1].epoch != info.epoch
    if not moved:
        return False
    return not (info.shell and only_cleanup_before_run(info) and _last_is_cleanup(info))


def _last_is_cleanup(info: Info) -> bool:
    segs = info.runs()
    return not segs or is_cleanup(segs[-1].argv)


def cleaned_reruns(traj: Trajectory, infos: list[Info]) -> list[list[int]]:
    """Failing runs with one tail repeated, the same error, only clean-ups between."""
    steps = traj.steps
    open_chains: dict[str, list[int]] = {}
    done: list[list[int]] = []
    for i, info in enumerate(infos):
        # A call the harness cancelled (a sibling failed) ran nothing: no rerun of anything.
        tail = run_tail(info) if info.failed and info.shell and is_action(info) else ""
        if tail and only_cleanup_before_run(info):
            chain = open_chains.get(tail)
            sig = steps[i].error_signature
            if chain is not None and sig and steps[chain[-1]].error_signature == sig:
                chain.append(i)
            else:
                if chain is not None and len(chain) > 1:
                    done.append(chain)
                open_chains[tail] = [i]
            continue
        if _changes(traj, infos, i):
            done.extend(c for c in open_chains.values() if len(c) > 1)
            open_chains.clear()
    done.extend(c for c in open_chains.values() if len(c) > 1)
    return sorted(done, key=lambda c: c[0])


@register("rerun_cleaned")
def detect_cleaned(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """The same failing run after only clearing build output, failing the same way."""
    infos = infos_for(traj)
    for chain in cleaned_reruns(traj, infos):
        first = infos[chain[0]]
        sig = traj.steps[chain[-1]].error_signature
        yield make_finding(
            "rerun_unchanged", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "error": sig, "cleaned": True},
            summary=f"{first.cls} `{run_tail(first)[:80]}` rerun {len(chain) - 1}x after only "
            "clearing build output, failing the same way",
            confidence=0.8, error_signature=sig,
        )
