"""The fix delta: what changed between the last failing attempt and the one that worked."""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..detect.info import Info
from ..model import FixDelta, Step
from ..privacy import redact
from .tables import (
    EDIT_TOOLS,
    FALLBACK_ECHO,
    NOOP_OUTPUT_RE,
    PROBE,
    RESOLUTION_WINDOW,
    STATE_CHANGE_RES,
)
from .text import one_line, relativize, visible

_GUTTER = re.compile(r"^\s*\d+(?:→|\t|: ?)")
_CONFIG = re.compile(r"(?:^|/)(?:pyproject\.toml|package\.json|setup\.cfg|tox\.ini|"
                     r"tsconfig[\w.]*\.json|\.env[\w.]*|[\w.-]+\.(?:ini|cfg|toml|ya?ml|conf))$")
_VAGUE = "the file's line differs from the old text"
_GONE = "the file holds no line like this one any more"
_UNSPECIFIC = (_VAGUE, _GONE)
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


@dataclass
class Resolved:
    """The step that worked, and what came between it and the last failure."""

    last_fail: int
    step: int
    inserted: list[tuple[int, str]] = field(default_factory=list)
    """(step, kind) of each state-changing step in between."""
    between: list[int] = field(default_factory=list)
    """Every tool step in between."""
    chained: list[str] = field(default_factory=list)
    """State changes chained before the command in the step that worked (``pip install -e .
    && pytest``)."""
    later_fails: list[int] = field(default_factory=list)
    """Failures on the same target after the loop's last one (each became the last)."""
    tried: list[int] = field(default_factory=list)
    """Steps that did not help: state changes followed by the same failure, and steps that
    looked like the fix but were undone or not shown in place."""


def did_nothing(step: Step) -> bool:
    """True when a step's own output shows it changed nothing.

    ``git checkout f || echo "No original file"`` printing the fallback, "nothing to commit".
    """
    output = step.output or ""
    fallback = FALLBACK_ECHO.search(command_of(step))
    if fallback and fallback.group(2).strip() and fallback.group(2).strip() in output:
        return True
    return bool(NOOP_OUTPUT_RE.search(output))


def command_of(step: Step) -> str:
    """The shell command of a step, "" when it is not one."""
    args = step.args or {}
    for key in ("command", "cmd", "CommandLine"):
        value = args.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def path_of(step: Step, info: Info) -> str:
    """The file a file tool acts on (as the detector normalized it), "" when none."""
    if info.paths:
        return info.paths[0]
    args = step.args or {}
    for key in ("file_path", "path", "filePath", "TargetFile", "AbsolutePath", "filename"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def change_kind(step: Step, info: Info, target_path: str) -> str | None:
    """How a step between the failure and the fix changed state (None: it did not)."""
    if step.kind != "tool" or info.failed:
        return None
    if info.shell and did_nothing(step):
        return None
    if info.shell:
        command = command_of(step)
        if PROBE.search(command):
            return None
        kinds = [kind for segment in _SPLIT.split(command)
                 for kind, rx in STATE_CHANGE_RES if rx.search(segment.strip())]
        # ``cd x && git checkout f``: the checkout is what changed the state, not the cd.
        if kinds:
            return next((k for k in kinds if k != "cwd"), kinds[0])
    if (step.tool or "") in EDIT_TOOLS or info.cls in ("write", "edit"):
        path = path_of(step, info)
        if path and path == target_path:
            return "rewrite"
        return "config" if _CONFIG.search(path or "") else "edit"
    if info.cls == "read" and target_path and path_of(step, info) == target_path:
        return "reread"
    if info.cls == "install":
        return "install"
    return None


def _same_target(a: Info, sa: Step, b: Info, sb: Step) -> bool:
    """True when two steps act on the same thing: the same file, or the same program."""
    file_a = (sa.tool or "") in EDIT_TOOLS or a.cls in ("write", "edit")
    file_b = (sb.tool or "") in EDIT_TOOLS or b.cls in ("write", "edit")
    if file_a or file_b:
        if not (file_a and file_b):
            return False
        pa, pb = path_of(sa, a), path_of(sb, b)
        # SWE-agent edits the open file: no path on either side means the same file.
        return pa == pb
    if bool(a.program) and a.program == b.program and a.cls == b.cls:
        return True
    # ``pip install -e . && pytest -x`` after ``pytest -x`` failed: the same command, chained.
    failed = command_of(sa)
    return bool(failed) and failed in _SPLIT.split(command_of(sb))


def chained_before(failed: str, worked: str) -> list[str]:
    """The segments chained before the failed command inside the working one."""
    segments = _SPLIT.split(worked)
    if failed in segments:
        return [seg for seg in segments[: segments.index(failed)] if seg.strip()]
    return []


def find_resolution(steps: list[Step], infos: list[Info], failing: list[int],
                    target_path: str,
                    proven: Callable[[int, int], bool] | None = None,
                    other_error: Callable[[int], bool] | None = None) -> Resolved | None:
    """The first later step on the same target that did not fail, and what came between.

    A later failure on the same target becomes the last failing attempt (what was inserted
    before it did not help). A state change of another kind is an inserted step, not the fix.
    ``proven(step, last_fail)`` rejects a candidate the log does not show working (it joins
    ``tried`` and the search goes on). ``other_error(step)``: the step failed with another
    error than the loop's (``uv run --with ruff ruff check .`` reporting lint findings where
    ``uv run ruff`` could not start): the loop's error is gone there, so it is the candidate.
    """
    last = failing[-1]
    ref_info, ref_step = infos[last], steps[last]
    ref_kind = change_kind(ref_step, Info(cls=ref_info.cls, program=ref_info.program,
                                          paths=ref_info.paths), target_path)
    inserted: list[tuple[int, str]] = []
    between: list[int] = []
    later: list[int] = []
    tried: list[int] = []
    j = last
    end = min(len(steps), last + 1 + RESOLUTION_WINDOW)
    while j + 1 < end:
        j += 1
        step, info = steps[j], infos[j]
        if step.kind != "tool":
            continue
        if _same_target(ref_info, ref_step, info, step) and not PROBE.search(command_of(step)):
            failed = info.failed or step.is_error
            if failed and other_error is not None and other_error(j) and (
                    proven is None or proven(j, last)):
                return Resolved(last, j, inserted, between, [], later, tried)
            if failed:
                tried.extend(i for i, _kind in inserted)
                last, inserted, between = j, [], []
                later.append(j)
                end = min(len(steps), last + 1 + RESOLUTION_WINDOW)
                continue
            kind = change_kind(step, info, target_path)
            chained = chained_before(command_of(ref_step), command_of(step))
            if chained or kind in (None, "rewrite", "reread") or kind == ref_kind:
                if proven is not None and not proven(j, last):
                    tried.append(j)
                    continue
                return Resolved(last, j, inserted, between, chained, later, tried)
        kind = change_kind(step, info, target_path)
        between.append(j)
        if kind is not None:
            inserted.append((j, kind))
    return None


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def arg_diff(failed: str, worked: str) -> tuple[list[str], list[str]]:
    """Tokens the working command dropped and added (first line of each: the command)."""
    a = _tokens(failed.splitlines()[0] if failed else "")
    b = _tokens(worked.splitlines()[0] if worked else "")
    removed: list[str] = []
    added: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            removed.extend(a[i1:i2])
        if op in ("replace", "insert"):
            added.extend(b[j1:j2])
    return removed[:8], added[:8]


def _read_lines(steps: list[Step], infos: list[Info], path: str, before: int,
                after: int) -> list[str]:
    """File lines from a read of ``path``, gutters removed.

    The first read after the failure, else the last read before it.
    """
    order = [*range(before + 1, after), *range(before - 1, -1, -1)]
    for j in order:
        info, step = infos[j], steps[j]
        if info.cls == "read" and not info.failed and path_of(step, info) == path and step.output:
            return [_GUTTER.sub("", line) for line in step.output.splitlines()]
    return []


def _indent(line: str) -> str:
    lead = line[: len(line) - len(line.lstrip())]
    tabs, spaces = lead.count("\t"), lead.count(" ")
    return " and ".join(x for x in (f"{tabs} tab(s)" if tabs else "",
                                    f"{spaces} space(s)" if spaces else "") if x) or "none"


def edit_difference(old: str | None, steps: list[Step], infos: list[Info], path: str,
                    last_fail: int, resolved: int | None, output: str) -> tuple[
                        str | None, str | None, str | None]:
    """(line tried, closest line the file held, the difference in words) for a failed edit."""
    if not old:
        return None, None, None
    tried = [line for line in old.splitlines() if line.strip()]
    gutter = next((line for line in tried if _GUTTER.match(line)), None)
    if gutter is not None:
        mark = _GUTTER.match(gutter)
        assert mark is not None
        return (gutter, gutter[mark.end():], "the old text carries the line-number gutter "
                f"({mark.group(0).strip()!r} + tab) that the viewer prints but the file does "
                "not hold")
    if re.search(r"Multiple occurrences|Found \d+ matches", output or ""):
        return (tried[0] if tried else None, None, "the old text matches more than one place "
                "in the file; it needs neighbouring lines to be unique")
    held = _read_lines(steps, infos, path, last_fail, resolved if resolved is not None
                       else min(len(steps), last_fail + RESOLUTION_WINDOW))
    if not held:
        return (tried[0] if tried else None, None, None)
    present = set(held)
    for line in tried:
        if line in present:
            continue
        # The same text at another depth is an indentation difference, whatever is closer.
        same = [h for h in held if h.strip() == line.strip() and h.strip()]
        if same:
            return (line, same[0], f"indentation differs: the old text has {_indent(line)}, "
                    f"the file has {_indent(same[0])}")
        close = difflib.get_close_matches(line, held, n=1, cutoff=0.6)
        if not close:
            return line, None, _GONE
        found = close[0]
        if found.strip() == line.strip():
            return (line, found, f"indentation differs: the old text has {_indent(line)}, "
                    f"the file has {_indent(found)}")
        return line, found, _VAGUE
    return (None, None, None)


def build_delta(steps: list[Step], infos: list[Info], res: Resolved,
                edits: list[tuple[int, str | None]], path: str, is_edit_error: bool,
                roots: list[str], inserted: list[str], actions: tuple[str, str]) -> FixDelta:
    """The fix delta of a resolved loop (texts redacted and repo-relative).

    Args:
        steps: The session's steps.
        infos: Their analysis.
        res: The resolution found.
        edits: (step, replaced text) of each failing attempt, for edit-target errors.
        path: The target file ("" for commands).
        is_edit_error: The class is an edit-target mismatch.
        roots: Session roots to make paths relative.
        inserted: The inserted steps as actions (same order as ``res.inserted``).
        actions: (last failing action, resolving action) as a user would type them.
    """
    def clean(text: str, limit: int = 160) -> str:
        return one_line(relativize(redact(text), roots), limit)

    def clean_keep(text: str) -> str:
        return relativize(redact(text), roots)[:160]

    delta = FixDelta()
    for (_step, kind), action in zip(res.inserted, inserted, strict=True):
        if action and action not in delta.inserted:
            delta.inserted.append(action)
        if kind not in delta.kinds:
            delta.kinds.append(kind)
    for segment in res.chained:
        chained = next((k for k, rx in STATE_CHANGE_RES if rx.search(segment.strip())), None)
        if chained is not None:
            delta.inserted.append(clean(segment))
            if chained not in delta.kinds:
                delta.kinds.append(chained)
    failed, worked = actions
    if res.chained:
        pass  # the command itself is unchanged: what was chained before it is the fix
    elif not infos[res.step].shell and failed == worked:
        # Same tool call on the same file: the arguments it gained or lost are the fix.
        before, after = set(steps[res.last_fail].args or {}), set(steps[res.step].args or {})
        delta.removed = sorted(before - after)[:8]
        delta.added = sorted(after - before)[:8]
        if delta.removed or delta.added:
            delta.kinds.append("edit_args")
    elif failed and worked and failed != worked:
        removed, added = arg_diff(failed, worked)
        delta.removed = [clean(t, 60) for t in removed]
        delta.added = [clean(t, 60) for t in added]
        if "cd" in removed or "cd" in added:
            delta.kinds.append("cwd")
        elif removed or added:
            # ``python`` -> ``python3``: the program changed, not one of its flags.
            first = _tokens(failed)[:1]
            kind = "program" if first and first[0] in removed else "flag"
            delta.kinds.append(kind if infos[res.step].shell else "edit_args")
    if is_edit_error:
        # The latest attempt whose difference is specific leads (the one nearest the fix);
        # a vague one only when no attempt says more. Other attempts' notes are left out.
        found_notes = [(n, *edit_difference(old, steps, infos, path, index, res.step,
                                            steps[index].output))
                       for n, (index, old) in enumerate(edits, 1)]
        ranked = [n for n in reversed(found_notes) if n[3] and n[3] not in _UNSPECIFIC] + \
            [n for n in reversed(found_notes) if n[3]]
        if ranked:
            delta.edit_attempt, tried, found, note = ranked[0]
            delta.edit_note = note
            delta.edit_tried = visible(clean_keep(tried)) if tried else None
            delta.edit_found = visible(clean_keep(found)) if found else None
        if delta.edit_note or delta.edit_found:
            delta.kinds.append("edit_target")
    return delta


def edit_old_text(step: Step, info: Info) -> str | None:
    """The text a failed replacement edit tried to replace."""
    args: dict[str, Any] = step.args or {}
    for key in ("old_str", "old_string", "to_replace", "search"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value  # as the agent wrote it: the detector's copy is normalized
    return info.edit_old or None
