"""What the fix was, in the log's own text: edit before/after, stated reason, probe.

The edit's before/after, the agent's stated reason, and the diagnostic step whose output
showed the cause.

A "code fixed" lesson that only says ``edit src/date.js`` teaches nothing; the replaced and
the new line do. The agent's sentence before the fix is quoted as its words, never as a
proven cause. A read or listing of the fix's target that failed or printed nothing, right
before the fix, is the log's evidence for the cause.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from ..detect.info import Info
from ..model import Step
from ..privacy import redact
from .delta import Resolved, command_of, path_of
from .tables import EDIT_TOOLS
from .text import bound, one_line, relativize

_OLD_KEYS = ("old_str", "old_string", "to_replace", "search", "TargetContent")
_NEW_KEYS = ("new_str", "new_string", "replacement", "ReplacementContent", "code_edit")
_SIDE = 80
"""Characters of each side of the edit shown (one line, cut at a word with ``…``)."""
_FIX_KINDS = ("edit", "config", "rewrite")
_PROBE_PROGRAMS = frozenset({"ls", "cat", "stat", "test", "file", "readlink", "realpath",
                             "which", "type", "head", "tail", "find", "du"})
"""Programs that only look at a path: a probe, never a fix."""
_PROBE_CLASSES = ("read", "list", "search", "inspect")
_MISSING = re.compile(r"No such file or directory|cannot access|not found|does not exist|"
                      r"cannot open|no matches found", re.IGNORECASE)
_EXIT_HEAD = re.compile(r"^(?:Exit code \d+|Process exited with code \d+)\s*$")
_SEGMENTS = re.compile(r"\s*(?:&&|\|\||;)\s*")
_PIPE_TAIL = re.compile(r"\s*(?:2>&1|2>/dev/null)|\s*\|.*$")
_WORD = re.compile(r"[A-Za-z_][\w.-]{2,}")
_COMMON = frozenset({"src", "lib", "the", "and", "run", "bin", "test", "tests", "dev", "usr",
                     "tmp", "2>&1", "head", "tail"} | _PROBE_PROGRAMS)
"""Words too common to tie a probe to the fix's target."""
_PATCH_LINE = re.compile(r"^([-+])(?![-+]{2})(.*\S.*)$", re.MULTILINE)
_MIN_REASON_WORDS = 3
_VAGUE_REASON = re.compile(
    r"\b(?:there (?:was|is) a mistake|(?:an?|my) (?:previous|earlier) (?:edit|attempt)s? "
    r"(?:was|were|failed)|carefully|try (?:again|another|a different)|let me (?:try|retry|check)"
    r"|review the code|a different approach|another approach)\b", re.IGNORECASE)
"""Words that say the agent will try again, not why the fix works: not a stated reason."""
_NARRATION = re.compile(
    r"^(?:now,?\s+|ok(?:ay)?,?\s+)?(?:running|checking|looking|reading|trying|let me (?:run|look|"
    r"see|read|check|try)|i(?:'ll| will| am going to) (?:run|check|look|read|try))\b",
    re.IGNORECASE)
"""A sentence that only narrates the next step ("Running the tests."): no reason in it."""


def _arg(step: Step, keys: tuple[str, ...]) -> str | None:
    args = step.args or {}
    return next((v for k in keys if isinstance(v := args.get(k), str)), None)


def fix_step(steps: list[Step], infos: list[Info], res: Resolved) -> int | None:
    """The edit that was the fix: the first inserted code edit, else the step that worked."""
    for j, kind in res.inserted:
        if kind in _FIX_KINDS:
            return j
    step, info = steps[res.step], infos[res.step]
    if (step.tool or "") in EDIT_TOOLS or info.cls in ("write", "edit"):
        return res.step
    return None


def _side(text: str, roots: list[str]) -> str | None:
    """One side of the edit as one line; None when a code span of it would look cut."""
    line = bound(" ".join(relativize(redact(text), roots).split()), _SIDE)
    if not line or (line.count('"') % 2 and not line.endswith("…")):
        return None
    return line


def _first_change(old: str, new: str) -> tuple[str, str] | None:
    """The first line pair that differs between two texts (an added line: "" before)."""
    a = [ln for ln in old.splitlines() if ln.strip()]
    b = [ln for ln in new.splitlines() if ln.strip()]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        return (a[i1] if i1 < i2 else "", b[j1] if j1 < j2 else "")
    return None


def _replaced_span(line: str, new: str) -> str:
    """The part of a file line that a one-line fragment replaced.

    From where the fragment's first characters start in the line (``d.to`` in
    ``formatDate = d => d.toLocaleDateString('en-CA');``) to the end of the expression.
    """
    best, at = _anchor(line, new)
    if at < 0 or best < 2:
        return line.strip()
    return line[at:].rstrip().rstrip(";,").rstrip()


def _anchor(line: str, new: str) -> tuple[int, int]:
    """(length, start) of the longest run of ``new``'s first characters starting a word."""
    best, at = 0, -1
    for m in re.finditer(r"(?<![\w.])[\w$]", line):
        n = 0
        while m.start() + n < len(line) and n < len(new) and line[m.start() + n] == new[n]:
            n += 1
        if n > best:
            best, at = n, m.start()
    return best, at


def _same_path(a: str, b: str) -> bool:
    """One file, one path absolute and one relative (``/home/u/web/src/a.js``, ``src/a.js``)."""
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def _read_line(steps: list[Step], infos: list[Info], j: int, path: str, new: str) -> str:
    """The line of the last read of ``path`` before step ``j`` closest to ``new``."""
    for k in range(j - 1, max(-1, j - 40), -1):
        s, i = steps[k], infos[k]
        if s.kind == "tool" and i.cls == "read" and not i.failed and \
                _same_path(path_of(s, i), path):
            held = [re.sub(r"^\s*\d+(?:→|\t|: ?)", "", ln) for ln in (s.output or "").splitlines()]
            # A fragment starts where its first characters start a word of the line.
            scored = [(_anchor(ln, new)[0], difflib.SequenceMatcher(a=ln, b=new).ratio(), ln)
                      for ln in held if ln.strip()]
            fits = [x for x in scored if x[0] >= 3 or x[1] >= 0.6]
            return max(fits)[2] if fits else ""
    return ""


def edit_change(steps: list[Step], infos: list[Info], j: int,
                roots: list[str]) -> tuple[str | None, str | None]:
    """(replaced text, new text) of the fix's edit at step ``j``, one line each.

    From the edit's own old/new arguments, a patch's first ``-``/``+`` lines, or, when the
    edit only names the new text, the closest line of the file as last read.
    """
    step, info = steps[j], infos[j]
    old, new = _arg(step, _OLD_KEYS), _arg(step, _NEW_KEYS)
    if new is None:
        patch = next((v for v in (step.args or {}).values() if isinstance(v, str)
                      and ("*** Begin Patch" in v or "\n@@" in v)), "")
        lines = _PATCH_LINE.findall(patch)
        minus = next((t for s, t in lines if s == "-"), None)
        plus = next((t for s, t in lines if s == "+"), None)
        if plus is None:
            return None, None
        old, new = minus or "", plus
    if old is None:
        if "\n" in new.strip():
            return None, None
        held = _read_line(steps, infos, j, path_of(step, info), new.strip())
        if not held:
            return None, _side(new, roots)
        old = _replaced_span(held, new.strip())
    pair = _first_change(old, new)
    if pair is None:
        return None, None
    before, after = pair
    return (_side(before, roots) if before.strip() else None), _side(after, roots)


def _said(step: Step) -> str:
    """What the agent wrote with a step: a tool call's reasoning text, a message's text."""
    if step.kind == "message":
        return step.output or ""
    return step.text or "" if step.kind == "tool" else ""


def stated_reason(steps: list[Step], last_fail: int, fix_at: int, roots: list[str]) -> str:
    """The agent's last sentence between the last failure and the fix, its own words."""
    for k in range(fix_at, last_fail, -1):
        text = " ".join(_said(steps[k]).split())
        if len(text.split()) >= _MIN_REASON_WORDS:
            if _VAGUE_REASON.search(text) or _NARRATION.match(text):
                return ""  # the nearest words say "try again": an earlier one is not about this
            text = relativize(redact(text), roots)
            first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
            # The first two sentences: the reason, not the plan that follows it.
            return bound(" ".join(first[:2]), 160).replace('"', "'")
    return ""


def _is_probe(step: Step, info: Info) -> bool:
    if step.kind != "tool":
        return False
    if not info.shell:
        return info.cls == "read"
    words = [seg.split()[0].rsplit("/", 1)[-1] for seg in _SEGMENTS.split(command_of(step))
             if seg.split()]
    return bool(words) and all(w in _PROBE_PROGRAMS for w in words) or (
        info.cls in _PROBE_CLASSES and bool(words) and words[-1] in _PROBE_PROGRAMS)


def _words(text: str) -> set[str]:
    return {w.strip(".-").lower() for part in re.split(r"[/@:'\"`=\s]+", text)
            for w in _WORD.findall(part)} - _COMMON


def probe(steps: list[Step], infos: list[Info], last_fail: int, fix_at: int, context: str,
          action: Callable[[Step, Info], str], roots: list[str]) -> tuple[str, str]:
    """(probe command, its telling output line) right before the fix, or ("", "").

    The last read/list step between the last failure and the fix whose output is an error
    or empty, and that names a word of the failure or the fix (``context``).
    """
    want = _words(context)
    for k in range(fix_at - 1, last_fail, -1):
        step, info = steps[k], infos[k]
        if not _is_probe(step, info):
            continue
        lines = [ln for ln in relativize(redact(step.output or ""), roots).splitlines()
                 if ln.strip() and not _EXIT_HEAD.match(ln.strip())]
        shown = next((ln.strip() for ln in lines if _MISSING.search(ln)), "")
        if lines and not shown:
            continue
        command = action(step, info)
        if info.shell and shown:
            # ``ls a; ls b``: the segment whose path the error names.
            segs = [_PIPE_TAIL.sub("", s).strip() for s in _SEGMENTS.split(command)]
            command = next((s for s in segs if len(s.split()) > 1
                            and s.split()[-1].rstrip("/") in shown), command)
        if not _words(command) & want:
            continue
        return one_line(command, 120), one_line(shown or "(no output)", 140)
    return "", ""
