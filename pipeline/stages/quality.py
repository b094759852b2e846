"""Quality gate: a draft a reader would not trust is dropped before it is written.

Shared by both backends and run where drafts are screened (``stages/screening.py``). Each problem
is a ``"<problem>: <field>"`` string; the part before the colon is what the run summary
counts and the ledger records. A draft is dropped, never repaired.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..detect import MISTAKE_FAMILIES, PRECEDENCE, REGISTRY
from ..lessons.tables import BOILERPLATE_RE
from ..model import Draft
from ..normalize import HOME_PATH

PROBLEMS = ("raw tool-call id", "placeholder tool name", "absolute home path",
            "boilerplate as the error", "text cut mid-token", "detector jargon")
"""Every problem the gate reports (the bench prints a count for each, target 0)."""
MECHANICAL = frozenset({"placeholder tool name", "boilerplate as the error",
                        "text cut mid-token"})
"""Problems of text assembled by rules (the heuristic's fill-ins): a model's draft, which the
verifier has checked against the log, is not screened for them. A lesson about a harness
message ("Sibling tool call errored") or a heredoc is not boilerplate or a cut when a reader
wrote it on purpose."""

_CALL_ID = re.compile(r"\b(?:toolu_[A-Za-z0-9]{8,}|call_[A-Za-z0-9]{8,}|fc_[0-9a-f]{8,}|"
                      r"tooluse_[\w-]{8,}|functions\.\w+:\d+)")
_PLACEHOLDER = re.compile(r"`(?:other|unknown|tool)(?: [^`]*)?`|\b(?:tool|program) `?other`?\b")
# Detector jargon: every registered family name with an underscore (a new family is covered
# without an edit here; plain words such as "cycle" or "reread" are ordinary English) plus the
# analysis fields a reader should never see in prose.
_JARGON_WORDS = sorted({name for name in (*REGISTRY, *PRECEDENCE, *MISTAKE_FAMILIES) if "_" in name}
                       | {"text_loop", "text_loops", "error_signature", "wasted_source_ids"},
                       key=len, reverse=True)
_JARGON = re.compile(r"\b(?:" + "|".join(map(re.escape, _JARGON_WORDS)) + r")\b")
_BOILER_PHRASES = re.compile(
    r"}</tool_use_error>|<tool_use_error>|DO NOT re-run the same failed edit command|"
    r"The user doesn't want to proceed with this tool use|Sibling tool call errored|"
    r"Your proposed edit has introduced new syntax error|No tool calls found in the response|"
    r"\[Request interrupted by user", re.IGNORECASE)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_PROSE = ("title", "description", "objective", "trap", "insight", "validated_path")


def _fields(draft: Draft) -> Iterator[tuple[str, str]]:
    for name in _PROSE:
        yield name, str(getattr(draft, name))
    for n, item in enumerate(draft.checklist):
        yield f"checklist[{n}]", item


def _cut(text: str) -> bool:
    """True when a code span is left open or ends inside a quoted string without ``…``."""
    prose = _FENCE.sub("", text)
    spans = list(_SPAN.finditer(prose))
    rest = _SPAN.sub("", prose)
    if "`" in rest:
        return True
    for span in spans:
        body = span.group(2)
        if body.count('"') % 2 and not body.rstrip().endswith("…"):
            return True
    return False


def _boilerplate(name: str, text: str) -> bool:
    if _BOILER_PHRASES.search(text):
        return True
    if name in ("title", "trap"):
        # The error a trap quotes is its fenced block when it has one (each line, not the
        # language tag), else its inline spans; a fence is never read as one inline span.
        fenced = [ln for m in _FENCE.finditer(text) for ln in m.group(0).splitlines()[1:-1]]
        quoted = fenced or [m.group(2) for m in _SPAN.finditer(_FENCE.sub("", text))]
        candidates = [q.strip() for q in quoted if q.strip()]
        if name == "title" and candidates:
            candidates = candidates[:1]
        return bool(candidates) and all(BOILERPLATE_RE.fullmatch(c) for c in candidates)
    return False


def quality_problems(draft: Draft) -> list[str]:
    """Why ``draft`` must not be written (empty when it passes the gate)."""
    found: list[str] = []
    by_model = draft.provenance.drafted_by == "model"

    def add(problem: str, where: str) -> None:
        entry = f"{problem}: {where}"
        if entry not in found and not (by_model and problem in MECHANICAL):
            found.append(entry)

    for name, text in _fields(draft):
        if _CALL_ID.search(text):
            add("raw tool-call id", name)
        if _PLACEHOLDER.search(text):
            add("placeholder tool name", name)
        if HOME_PATH.search(text):
            add("absolute home path", name)
        if _boilerplate(name, text):
            add("boilerplate as the error", name)
        if _cut(text):
            add("text cut mid-token", name)
        if _JARGON.search(_FENCE.sub("", text)):
            add("detector jargon", name)
    return found
