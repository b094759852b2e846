"""Whether the log shows a step worked: the change in place, or the failing command passing.

A tool's own "edited successfully" is not enough when the step is another kind of edit than
the one that failed (an ``insert`` where ``str_replace`` failed): the text can land in the
wrong place. An edit later undone, an edit adding only comments, and a step followed at once
by the loop's own failure again are not the fix. A session whose agent ends by saying it
could not do the task has no fix at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..detect.info import Info
from ..model import Step
from .delta import command_of, did_nothing, path_of
from .tables import (
    COMMENT_LINE,
    EDIT_TOOLS,
    GIVE_UP_ARGS,
    GIVE_UP_RE,
    LAST_WORDS_KEYS,
    RESOLUTION_WINDOW,
    VERIFY_WINDOW,
)

NEW_KEYS = ("new_str", "new_string", "content", "file_text", "code_edit", "replacement")
OLD_KEYS = ("old_str", "old_string", "to_replace", "search")
_SPLIT = re.compile(r"\s*(?:&&|\|\||;)\s*")
_AGAIN = 3
"""Tool steps after a candidate in which the loop's failure coming back rejects it."""


def edit_text(step: Step, keys: tuple[str, ...]) -> str:
    """The first non-empty string argument of ``step`` under ``keys`` (an edit's text)."""
    args = step.args or {}
    return next((v for k in keys if isinstance(v := args.get(k), str) and v), "")


def key_line(text: str) -> str:
    """The first line of ``text`` that is not blank and not only punctuation."""
    return next((ln.strip() for ln in text.splitlines() if re.search(r"\w", ln)), "")


def _is_file(step: Step, info: Info) -> bool:
    return (step.tool or "") in EDIT_TOOLS or info.cls in ("write", "edit")


def _verb(step: Step) -> str:
    """The editor's sub-command (``str_replace``, ``insert``), else the tool name."""
    first = command_of(step).split("\n", 1)[0].split()
    return first[0] if first else (step.tool or "")


def comment_only(step: Step) -> bool:
    """True when the lines an edit adds are only comments (no behaviour changes)."""
    old = {ln.strip() for ln in edit_text(step, OLD_KEYS).splitlines()}
    lines = [ln for ln in edit_text(step, NEW_KEYS).splitlines()
             if ln.strip() and ln.strip() not in old]
    return bool(lines) and all(COMMENT_LINE.match(ln) for ln in lines)


def _undone(steps: list[Step], infos: list[Info], j: int, path: str) -> bool:
    """True when a later successful edit of ``path`` takes the new text of step ``j`` out."""
    key = key_line(edit_text(steps[j], NEW_KEYS))
    if not key:
        return False
    for k in range(j + 1, min(len(steps), j + 1 + RESOLUTION_WINDOW)):
        s, i = steps[k], infos[k]
        if s.kind != "tool" or i.failed or s.is_error or not _is_file(s, i):
            continue
        if path_of(s, i) == path and key in edit_text(s, OLD_KEYS) and \
                edit_text(s, NEW_KEYS).count(key) < edit_text(s, OLD_KEYS).count(key):
            return True
    return False


def _shown(steps: list[Step], infos: list[Info], j: int, path: str) -> bool:
    """True when a later read of ``path`` shows the new text of step ``j``."""
    key = key_line(edit_text(steps[j], NEW_KEYS))
    for k in range(j + 1, min(len(steps), j + 1 + RESOLUTION_WINDOW)):
        s, i = steps[k], infos[k]
        if s.kind == "tool" and i.cls == "read" and not i.failed and \
                path_of(s, i) == path and key and key in (s.output or ""):
            return True
    return False


def failed_before(steps: list[Step], infos: list[Info], first: int) -> list[str]:
    """Shell commands that failed in the steps right before the loop."""
    out: list[str] = []
    for k in range(max(0, first - VERIFY_WINDOW), first):
        if steps[k].kind == "tool" and infos[k].shell and (infos[k].failed or steps[k].is_error):
            out.append(command_of(steps[k]))
    return [c for c in out if c]


def passes_later(steps: list[Step], infos: list[Info], j: int, commands: list[str]) -> int | None:
    """The first step after ``j`` where one of ``commands`` (or a chain holding it) passes."""
    for k in range(j + 1, min(len(steps), j + 1 + RESOLUTION_WINDOW)):
        s, i = steps[k], infos[k]
        if s.kind != "tool" or not i.shell or i.failed or s.is_error:
            continue
        segments = _SPLIT.split(command_of(s))
        if any(c == command_of(s) or c in segments for c in commands):
            return k
    return None


def _fails_again(steps: list[Step], infos: list[Info], j: int, ref: int) -> bool:
    """True when the loop's failure on the same target is back within a few tool steps."""
    seen = 0
    for k in range(j + 1, len(steps)):
        s, i = steps[k], infos[k]
        if s.kind != "tool":
            continue
        seen += 1
        if seen > _AGAIN:
            return False
        same = path_of(s, i) == path_of(steps[ref], infos[ref]) if _is_file(s, i) else (
            i.shell and command_of(s) == command_of(steps[ref]))
        if same and (i.failed or s.is_error) and _is_file(s, i) == _is_file(steps[ref],
                                                                          infos[ref]):
            return True
    return False


def make_proven(steps: list[Step], infos: list[Info], first: int) -> Callable[[int, int], bool]:
    """``proven(step, last_fail)`` for :func:`pipeline.lessons.delta.find_resolution`."""
    before = failed_before(steps, infos, first)

    def proven(j: int, last: int) -> bool:
        step, info = steps[j], infos[j]
        if _fails_again(steps, infos, j, last):
            return False
        if info.shell:
            return not did_nothing(step)
        if not _is_file(step, info):
            return True
        path = path_of(step, info)
        if comment_only(step) or _undone(steps, infos, j, path):
            return False
        if _verb(step) == _verb(steps[last]):
            return True  # the call that failed now passes: the old text matched, exactly
        return _shown(steps, infos, j, path) or passes_later(steps, infos, j, before) is not None

    return proven


def gave_up(steps: list[Step]) -> str:
    """The agent's last words when they say the task was not done, else ""."""
    for step in reversed(steps[-6:]):
        args = step.args or {}
        words = [str(args.get(k) or "") for k in LAST_WORDS_KEYS] + [step.text or ""]
        if step.kind == "message":
            words.append(step.output or "")  # a message step keeps its text as the output
        said = next((w for w in words if GIVE_UP_RE.search(w)), "")
        if said:
            return " ".join(said.split())[:160]
        if any(re.match(rx, str(args.get(k, "")), re.IGNORECASE)
               for k, rx in GIVE_UP_ARGS.items()):
            return "the agent finished with the task not completed"
    return ""
