"""The symptom of a failure: the real error text of a step, and its error class."""

from __future__ import annotations

import re
import textwrap

from ..model import Step
from ..normalize import error_line
from ..privacy import redact
from ..safety import unsafe_reason
from .tables import (
    BOILERPLATE_RE,
    CLASS_RES,
    CUT_AT,
    LINE_PREFIX,
    SYMPTOM_CHARS,
    SYMPTOM_LINES,
    WRAPPERS,
    ErrorClass,
)
from .text import bound, relativize

_BULLET = re.compile(r"^[-*•]\s+")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PY_ERROR = re.compile(r"[\w.]*(?:Error|Exception)\b:?")
_REFUSAL_WORDS = re.compile(r"the user said:\s*(.+)", re.IGNORECASE | re.DOTALL)


def error_body(output: str, keep_marks: bool = False) -> list[str]:
    """The lines of an observation that are not harness boilerplate, in order.

    ``keep_marks``: a line keeps its list mark and indentation (``- **FR-005**: ...`` as the
    tool printed it), as a reader of the digest must see them; a quoted symptom drops them.
    """
    output = _ANSI.sub("", output)
    cut = CUT_AT.search(output)
    text = WRAPPERS.sub("\n", output[: cut.start()] if cut else output)
    lines: list[str] = []
    for raw in text.splitlines():
        unmarked = _BULLET.sub("", raw.strip())
        line = LINE_PREFIX.sub("", unmarked)
        if line.startswith("[") and line.endswith("]"):
            line = line[1:-1].strip()  # OpenHands brackets its notices: ``[No exact match …]``
        # An instruction planted in a tool's output is no part of its error: a quote keeps
        # the lines that carry the error and never the injected ones.
        if line and not BOILERPLATE_RE.fullmatch(line) and unsafe_reason(line) is None:
            as_printed = raw.strip() == line or (keep_marks and unmarked == line)
            lines.append(raw.rstrip() if as_printed else line)
    return lines


def classify(step: Step, body: str) -> ErrorClass | None:
    """The first class of the table whose patterns match; harness classes see the raw text.

    Harness tool-usage errors and refusals are printed by the harness itself, so their
    wording is matched in the whole observation; the other classes only in the real error.
    """
    raw = step.output or ""
    for cls, rx in CLASS_RES:
        if cls.harness and rx.search(raw):
            return cls
    if step.exit_code == 127:
        return next(c for c, _ in CLASS_RES if c.id == "missing_program")
    for text in (body, raw):
        for cls, rx in CLASS_RES:
            if not cls.harness and rx.search(text):
                return cls
    return None


def _key_index(lines: list[str], cls: ErrorClass | None) -> int:
    """Where the first error message starts.

    The first line naming the class, else the line ``error_line`` picks, else the first line.
    """
    if cls is not None:
        # The class's patterns in order: the most telling line wins, not the first.
        for pattern in cls.patterns:
            rx = re.compile(pattern, re.IGNORECASE)
            for i, line in enumerate(lines):
                if rx.search(line):
                    return i
    picked = error_line("\n".join(lines))
    if picked:
        for i, line in enumerate(lines):
            if picked.strip() in line:
                return i
    return 0


def user_words(output: str) -> str:
    """What the user wrote when refusing a tool call ("" when the refusal has no words)."""
    match = _REFUSAL_WORDS.search(WRAPPERS.sub("", output or ""))
    return " ".join(match.group(1).split()) if match else ""


def symptom(step: Step, roots: list[str]) -> tuple[str, str, ErrorClass | None]:
    """(symptom text, its key line, error class) of one failing step.

    The text is "" when only boilerplate is left.
    """
    lines = [relativize(redact(line), roots) for line in error_body(step.output or "")]
    body = "\n".join(lines)
    cls = classify(step, body)
    if cls is not None and cls.id == "user_refused":
        words = relativize(redact(user_words(step.output)), roots)
        return (bound(f"The user rejected the call: \"{words}\"", SYMPTOM_CHARS) if words
                else "", bound(words, 200), cls)
    if not lines:
        return "", "", cls
    start = _key_index(lines, cls)
    # A Python error is told by the frame and code line above it (``File "<stdin>", line 3``).
    back = start
    if _PY_ERROR.match(lines[start].strip()):
        while back > 0 and start - back < 3:
            back -= 1
            if lines[back].lstrip().startswith('File "'):
                break
    kept = textwrap.dedent("\n".join(lines[back: back + SYMPTOM_LINES])).splitlines()
    if back + SYMPTOM_LINES < len(lines):
        kept.append("…")  # a shortened quote says so
    line = lines[start].strip()
    text = bound("\n".join(kept), SYMPTOM_CHARS)
    return text, bound(line, 200), cls
