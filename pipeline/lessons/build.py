"""Build the ``Lesson`` of one finding: symptom, class, fix delta, target, cost.

Built once per finding and used by both backends: the heuristic drafts are written from it,
and the Gemini view shows it. A finding that teaches nothing gets no lesson, with the reason
(the run summary counts them).
"""

from __future__ import annotations

import re

from ..detect.actions import Info, analyze
from ..hashing import value_hash
from ..model import Finding, Lesson, Step, Trajectory
from ..privacy import redact
from .delta import (
    build_delta,
    command_of,
    edit_old_text,
    find_resolution,
    path_of,
)
from .symptom import symptom
from .tables import CAUSE_HINT_RES, EDIT_TOOLS
from .text import bound, one_line, relativize, roots_of

NO_ERROR = "no failing step in the loop"
NO_SYMPTOM = "the error is only harness boilerplate"
NO_RESOLUTION = "no later step on the same target succeeded"
NO_CLASS = "no error class fits and nothing changed before the fix"
_VERIFY_CLASSES = ("test", "build", "lint")


def _failed(traj: Trajectory, infos: list[Info], i: int) -> bool:
    return traj.steps[i].kind == "tool" and (traj.steps[i].is_error or infos[i].failed)


def _failing(traj: Trajectory, infos: list[Info], finding: Finding) -> list[int]:
    return [i for i in finding.steps if 0 <= i < len(traj.steps) and _failed(traj, infos, i)]


def _earlier(traj: Trajectory, infos: list[Info], first: int, cls_id: str,
             roots: list[str]) -> list[int]:
    """Failed attempts right before the loop with the same error class.

    Other launchers of the same missing program, say: the first real error is often there.
    """
    out: list[int] = []
    j = first - 1
    while j >= 0 and len(out) < 4:
        step = traj.steps[j]
        if step.kind != "tool":
            j -= 1
            continue
        if not _failed(traj, infos, j):
            break
        _text, _line, cls = symptom(step, roots)
        if cls is None or cls.id != cls_id:
            break
        out.insert(0, j)
        j -= 1
    return out


_PREFIX = re.compile(r"^(?:(?:cd|pushd)\s+\S+\s*(?:&&|;)\s*|sudo\s+|timeout\s+\S+\s+|"
                     r"env\s+|[A-Z_][A-Z0-9_]*=\S*\s+)+")


def program_of(command: str) -> str:
    """The program a shell command runs (``node_modules/.bin/tsc`` -> ``tsc``).

    Past ``cd x &&``, ``sudo``, ``env``, variable assignments and ``python -m``.
    """
    # ``rm -rf build && cd x && make``: the last command of a chain is the one that ran.
    segments = [seg for seg in re.split(r"\s*(?:&&|;|\|\|)\s*", command.strip())
                if seg and not re.match(r"(?:cd|pushd|export)\s", seg)]
    words = _PREFIX.sub("", segments[-1] if segments else command.strip()).split()
    if len(words) >= 3 and words[0].startswith("python") and words[1] == "-m":
        return words[2]
    return words[0].rsplit("/", 1)[-1] if words else ""


_NOISE_TAIL = re.compile(r"(?:\s+2>&1)+(?=\s*(?:\||$))|\s*\|\s*(?:head|tail)(?:\s+-n?\s*\d+)?\s*$")
_SUBCOMMANDS = ("str_replace", "insert", "create", "view", "undo_edit", "append")


def _action(step: Step, info: Info, roots: list[str]) -> str:
    """The action as a user would type it: the shell command, else ``tool file``.

    With the editor's sub-command or line range: ``insert src/a.c (line 316)``,
    ``edit 287:296``.
    """
    command = command_of(step)
    if info.shell and command:
        # ``2>&1`` and ``| head``-style tails are how the agent read the output, not the fix.
        command = _NOISE_TAIL.sub("", command)
        # Spaces inside a command can be its argument (``sed 's/^/    /'``): keep them.
        return bound(re.sub(r"\s*\n\s*", " ", relativize(redact(command), roots)), 200)
    args = step.args or {}
    path = path_of(step, info)
    first = command.splitlines()[0].strip() if command else ""
    if first in _SUBCOMMANDS:
        verb = first
    elif first and first.split()[0] == (step.tool or ""):
        verb = first  # SWE-agent: ``edit 287:296`` (the open file)
    else:
        verb = step.tool if step.tool and step.tool != "other" else "tool call"
    line = args.get("insert_line")
    text = f"{verb} {path}".strip() + (f" (line {line})" if line is not None else "")
    return one_line(relativize(redact(text), roots), 200)


def _verify(steps: list[Step], infos: list[Info], start: int, roots: list[str]) -> str:
    """The first passing test/build/run command from the fix on (the one that now passes)."""
    for j in range(start, min(len(steps), start + 15)):
        if steps[j].kind == "tool" and infos[j].shell and not infos[j].failed \
                and not steps[j].is_error and infos[j].cls in _VERIFY_CLASSES:
            return _action(steps[j], infos[j], roots)
    return ""


def _rerun(steps: list[Step], infos: list[Info], start: int, failed: str,
           roots: list[str]) -> str:
    """The failing command itself passing from the fix on (the proof the fix worked)."""
    if not failed:
        return ""
    for j in range(start, min(len(steps), start + 10)):
        if infos[j].shell and not infos[j].failed and not steps[j].is_error \
                and failed in command_of(steps[j]):
            return _action(steps[j], infos[j], roots)
    return ""


def build_lesson(traj: Trajectory, finding: Finding, infos: list[Info] | None = None,
                 outcome: str = "unknown") -> tuple[Lesson | None, str]:
    """The lesson of ``finding``, or (None, why there is none).

    Args:
        traj: The session.
        finding: One of its findings.
        infos: ``actions.analyze(traj)`` when the caller has it already.
        outcome: How the run ended (kept on the lesson).

    Returns:
        ``(lesson, "")`` or ``(None, reason)``.
    """
    infos = infos if infos is not None else analyze(traj)
    roots = roots_of(traj.extra.get("cwd"))
    failing = _failing(traj, infos, finding)
    if not failing:
        return None, NO_ERROR
    steps = traj.steps
    # The first real error of the loop is the symptom; boilerplate-only steps are skipped.
    text = line = ""
    cls = None
    for i in failing:
        text, line, cls = symptom(steps[i], roots)
        if text:
            break
    if not text and (cls is None or cls.id != "user_refused"):
        return None, NO_SYMPTOM
    if cls is not None:
        before = _earlier(traj, infos, failing[0], cls.id, roots)
        if before:
            failing = before + failing
            text, line, cls = symptom(steps[before[0]], roots)
    last = steps[failing[-1]]
    last_info = infos[failing[-1]]
    is_file = (last.tool or "") in EDIT_TOOLS or last_info.cls in ("write", "edit")
    target_path = path_of(last, last_info) if is_file else ""
    res = find_resolution(steps, infos, failing, target_path)
    if res is None:
        return None, NO_RESOLUTION
    edit_error = cls is not None and cls.id == "edit_not_found"
    edits = [(i, edit_old_text(steps[i], infos[i])) for i in failing if i <= res.last_fail]
    delta = build_delta(steps, infos, res, edits, target_path, edit_error, roots,
                        [_action(steps[j], infos[j], roots) for j, _kind in res.inserted],
                        (_action(steps[res.last_fail], infos[res.last_fail], roots),
                         _action(steps[res.step], infos[res.step], roots)))
    if cls is None and delta.empty():
        return None, NO_CLASS
    if cls is None:
        return None, "no error class fits the error"
    program = program_of(command_of(last)) if last_info.shell else (last.tool or "")
    target = one_line(relativize(redact(target_path), roots), 120) if target_path else program
    resolving = _action(steps[res.step], infos[res.step], roots)
    verify = _rerun(steps, infos, res.step, command_of(steps[res.last_fail]), roots) or (
        resolving if infos[res.step].shell else _verify(steps, infos, res.step + 1, roots))
    harness = cls.harness
    signature = value_hash({"lesson": cls.id, "agent": traj.agent} if harness else
                           {"lesson": cls.id, "program": program,
                            "target": target if is_file else ""})
    attempts = len([i for i in failing if i <= res.last_fail]) + \
        (1 if res.last_fail not in failing else 0)
    cause = next((hint for cid, rx, hint in CAUSE_HINT_RES
                  if cid == cls.id and rx.search(text or line)), "")
    return Lesson(
        error_class=cls.id, cause=cause, class_label=cls.label, harness=harness, agent=traj.agent,
        symptom=text or line, symptom_line=line or text.splitlines()[0],
        tool=last.tool or "", program=program, target=target,
        failing_action=_action(steps[res.last_fail], infos[res.last_fail], roots),
        attempts=attempts, fix=delta, resolving_action=resolving, resolving_step=res.step,
        between=[_action(steps[j], infos[j], roots) for j in res.between[:8]],
        verify=verify, wasted_steps=finding.wasted_steps, wasted_tokens=finding.wasted_tokens,
        wasted_seconds=finding.wasted_seconds, outcome=outcome, signature=signature,
    ), ""
