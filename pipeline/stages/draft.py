"""Draft candidate ORF playbooks from a session's findings.

On the gemini backend the model sees the compact view (``view.py``) and answers with JSON that
is validated against a schema derived from ``pipeline.model.Draft``. A reply that is empty,
truncated, blocked, or fails validation is a failed attempt: it is retried once with a repair
hint, then the session is recorded as undrafted with the reason, never guessed. The heuristic
backend builds drafts from the lessons alone (``heuristic_draft.py``), marked so in provenance.

Requests are built first and parsed later (``draft_request`` / ``parse_draft_reply``), so
Batch Mode can collect every request of a run before anything is sent; the rounds of requests
and repairs are ``llm_run``'s, the entry point for any backend ``analysis.draft_session``.
"""

from __future__ import annotations

import copy
import os
import re
from functools import cache
from typing import Any

import orjson
from pydantic import ValidationError

from ..config import Settings
from ..lessons import build_lesson
from ..llm.backend import Backend, LLMReply, LLMRequest
from ..model import Draft, Finding, Lesson, Trajectory, Verdict
from ..privacy import redact
from ..prompts import load_prompt
from ..provenance import Provenance
from .judge import REPAIR_HINT, verdict_from_log
from .view import StoreContext, build_view

__all__ = [
    "StoreContext", "draft_request", "lesson_findings", "parse_draft_reply",
    "select_findings",
]

_SLUG = re.compile(r"[^a-z0-9]+")
# What a Core Principle must not hold: it has to apply beyond the one session it came from.
_TASK_LITERAL = re.compile(
    r"`[^`]+`"                                  # inline code
    r"|(?:^|\s)(?:\.{0,2}/|~/)[\w.-]+/[\w./-]*"   # paths
    r"|\b[\w-]+\.(?:py|js|ts|tsx|go|rs|java|rb|c|h|cpp|json|ya?ml|toml|md|txt|sh)\b"
    r"|#\d{2,}\b|\b[A-Z][A-Z0-9]+-\d+\b"           # issue / ticket numbers
)


GENERIC_PRINCIPLES = (
    "Running the same action again after it failed returns the same failure; change the "
    "input, the environment or the diagnosis before the next attempt.",
    "Re-running an unchanged command cannot produce a different result; find out what must "
    "change before running it again.",
    "When different attempts hit the same error, the cause lies beneath the attempts; "
    "diagnose the error itself before trying another variant.",
    "Small variations of an action that keeps failing the same way waste steps; read the "
    "error, form a hypothesis about its cause, and test that hypothesis.",
    "A step that produced no new information should not be repeated as is; change the input "
    "or the hypothesis first.",
    "Do not repeat failing commands.",
    "Read error messages carefully before retrying.",
    "Verify your changes before moving on.",
)
"""Canned principles: a drafted insight this close to one of them teaches nothing."""

GENERIC_SIMILARITY = 0.5
"""Similarity to a canned principle at or above which a drafted insight is sent back."""

_CAUSE_WORD = re.compile(r"[a-z][a-z0-9_.-]{3,}")
_STOP = frozenset("that this with from when then than into does were have been what which "
                  "before after again command error failed fails".split())


def slugify(text: str) -> str:
    """Lowercase slug (``Build Tools`` -> ``build-tools``)."""
    return _SLUG.sub("-", text.lower()).strip("-")[:60]


def select_findings(findings: list[Finding], limit: int) -> list[Finding]:
    """The findings worth drafting: most wasted steps first, one per signature."""
    seen: set[str] = set()
    out: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (-f.wasted_steps, f.steps[:1])):
        if finding.signature in seen:
            continue
        seen.add(finding.signature)
        out.append(finding)
        if len(out) >= limit:
            break
    return out


NO_LESSON = "no lesson: "
"""Prefix of a failure line for a finding that teaches nothing (the summary counts them)."""


def lesson_findings(traj: Trajectory, findings: list[Finding], limit: int) -> tuple[
        list[Finding], list[Lesson], list[str]]:
    """The findings worth drafting with their lessons, and a reason for each one left out.

    Most wasted steps first; findings without a lesson are left out (``no lesson: why``);
    findings that teach the same lesson as an earlier one (same class and target) are merged
    into it, so one session yields one playbook per lesson.
    """
    from ..detect.actions import analyze

    infos = analyze(traj)
    logged = verdict_from_log(traj)
    outcome = logged.outcome if logged is not None else "unknown"
    chosen: list[Finding] = []
    lessons: list[Lesson] = []
    notes: list[str] = []
    for finding in select_findings(findings, len(findings)):
        try:
            lesson, why = build_lesson(traj, finding, infos, outcome)
        except Exception as exc:  # noqa: BLE001 - one odd log must not stop the batch
            if os.environ.get("ORF_RAISE_ERRORS"):
                raise
            lesson, why = None, f"lesson builder failed: {type(exc).__name__}"
        if lesson is None:
            notes.append(f"{NO_LESSON}{why} ({finding.kind} at step "
                         f"{finding.steps[0] if finding.steps else '?'})")
            continue
        same = next((i for i, known in enumerate(lessons)
                     if known.signature == lesson.signature), None)
        if same is not None:
            lessons[same].wasted_steps += lesson.wasted_steps
            continue
        if len(chosen) < limit:
            chosen.append(finding)
            lessons.append(lesson)
    return chosen, lessons, notes


@cache
def draft_item_schema() -> dict[str, Any]:
    """JSON schema of one drafted playbook, derived from ``Draft`` without ``provenance``."""
    source = Draft.model_json_schema()
    props: dict[str, Any] = {}
    for name, spec in source["properties"].items():
        if name == "provenance":
            continue
        spec = copy.deepcopy(spec)
        spec.pop("title", None)
        spec.pop("default", None)
        if "anyOf" in spec:
            # Optional[str] -> plain string left out of ``required``; simpler for the model.
            spec = next(s for s in spec["anyOf"] if s.get("type") != "null")
        props[name] = spec
    props["keywords"]["minItems"] = 3
    props["keywords"]["maxItems"] = 8
    props["checklist"]["minItems"] = 1
    props = {"finding": {"type": "integer", "minimum": 0}, **props}
    required = ["finding", *[n for n in source.get("required", []) if n in props]]
    return {"type": "object", "properties": props, "required": required}


def draft_schema(max_drafts: int) -> dict[str, Any]:
    """Schema of the whole reply: ``{"drafts": [...]}``."""
    return {
        "type": "object",
        "properties": {
            "drafts": {"type": "array", "items": draft_item_schema(), "maxItems": max_drafts},
        },
        "required": ["drafts"],
    }


def log_outcome(traj: Trajectory) -> str:
    """The outcome line of the view: what the log says (the model's verdict is not waited for)."""
    verdict = verdict_from_log(traj)
    if verdict is None:
        return "The log does not say how the run ended."
    return f"{verdict.outcome}: {verdict.reason}"


def draft_request(
    traj: Trajectory,
    findings: list[Finding],
    backend: Backend,
    store_context: StoreContext,
    *,
    repair: str | None = None,
    lessons: list[Lesson] | None = None,
    settings: Settings,
) -> LLMRequest:
    """The drafting request for ``findings`` (already selected) of ``traj``.

    ``lessons`` are the findings' lessons (built here when not given); ``settings`` gives the
    draft limit and the view's token budget.
    """
    limit = min(settings.max_drafts_per_session, max(1, len(findings)))
    system = load_prompt("draft.md").replace("{max_drafts}", str(limit))
    if lessons is None:
        findings, lessons, _notes = lesson_findings(traj, findings, len(findings))
    view = build_view(traj, findings, store_context, budget_tokens=settings.draft_input_tokens,
                      outcome=log_outcome(traj), lessons=lessons)
    prompt = redact(view)
    if repair is not None:
        prompt += REPAIR_HINT.format(reason=repair)
    schema = draft_schema(limit)
    return LLMRequest(
        key=backend.cache_key(system, prompt, schema), purpose="draft", session_id=traj.id,
        system=system, prompt=prompt, schema=schema, max_output_tokens=8192,
        attempt=2 if repair is not None else 1,
    )


def provenance(traj: Trajectory, finding: Finding, verdict: Verdict | None, backend: Backend,
               drafted_by: str) -> Provenance:
    """Where a draft came from: session, steps, signature, verdict, backend/model."""
    return Provenance.for_draft(
        session_id=traj.id, source_path=traj.source.path, format=traj.source.format,
        agent=traj.agent, signature=finding.signature, finding_kind=finding.kind,
        steps=finding.steps, source_ids=finding.source_ids,
        wasted_steps=finding.wasted_steps, wasted_tokens=finding.wasted_tokens,
        verdict=verdict.outcome if verdict else None,
        verdict_by=verdict.decided_by if verdict else None,
        backend=backend.name, model=backend.model, drafted_by=drafted_by)


def _names_cause(insight: str, lesson: Lesson) -> bool:
    """True when the insight shares a content word with the lesson's error or cause."""
    source = " ".join((lesson.symptom_line, lesson.class_label, lesson.cause, lesson.program,
                       lesson.target, " ".join(lesson.fix.kinds), lesson.fix.edit_note or ""))
    # Stems, so "installed" names the cause "install" and "indented" names "indentation".
    words = {w[:5] for w in _CAUSE_WORD.findall(source.lower()) if w not in _STOP}
    return bool(words & {w[:5] for w in _CAUSE_WORD.findall(insight.lower())
                         if w not in _STOP})


def _check_lesson(draft: Draft, lesson: Lesson | None) -> str | None:
    """Send back a principle that is canned or names no cause, or a path with no command."""
    from .dedupe import similarity

    closest = max(similarity(draft.insight, g) for g in GENERIC_PRINCIPLES)
    if closest >= GENERIC_SIMILARITY:
        return (f"the insight is a generic principle (similarity {closest:.2f} to a canned "
                "one); name the cause this error shows and what fixes it")
    if lesson is not None and not _names_cause(draft.insight, lesson):
        return ("the insight names no cause from the lesson (its error, class or fix); say "
                "what the error means and what changed to fix it")
    if "`" not in draft.validated_path:
        return ("the validated path has no command; list the commands of the fix in order, "
                "each in backticks")
    return None


def _check(draft: Draft) -> str | None:
    for name in ("title", "description", "objective", "trap", "insight", "validated_path"):
        if not str(getattr(draft, name)).strip():
            return f"field {name!r} is empty"
    if len(draft.description) > 1024:
        return "description is longer than 1024 characters"
    if not draft.keywords or not all(k.strip() for k in draft.keywords):
        return "keywords are missing"
    if not draft.checklist or not all(c.strip() for c in draft.checklist):
        return "checklist is empty"
    if not draft.domain:
        return "domain is not a usable slug"
    literal = _TASK_LITERAL.search(draft.insight)
    if literal:
        return (f"the insight names a task-specific literal ({literal.group(0)!r}); state the "
                "principle without file names, paths, code or ticket numbers")
    return None


def parse_draft_reply(
    reply: LLMReply,
    traj: Trajectory,
    findings: list[Finding],
    verdict: Verdict | None,
    backend: Backend,
    lessons: list[Lesson] | None = None,
    *,
    settings: Settings,
) -> tuple[list[Draft] | None, str | None]:
    """Validated drafts from the reply, or (None, why the attempt failed).

    ``settings`` gives the draft limit.
    """
    if not reply.ok or reply.text is None:
        return None, reply.error or "empty reply"
    try:
        data = orjson.loads(reply.text)
    except orjson.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"
    items = data.get("drafts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None, "invalid reply: no 'drafts' list"
    limit = settings.max_drafts_per_session
    drafts: list[Draft] = []
    for n, item in enumerate(items[:limit]):
        if not isinstance(item, dict):
            return None, f"invalid reply: draft {n} is not an object"
        item = dict(item)
        index = item.pop("finding", 0)
        if not isinstance(index, int) or not 0 <= index < len(findings):
            return None, f"invalid reply: draft {n} names finding {index!r}"
        item["domain"] = slugify(str(item.get("domain", "")))
        if isinstance(item.get("keywords"), list):
            item["keywords"] = [str(k).strip().lower() for k in item["keywords"]][:8]
        item["provenance"] = provenance(traj, findings[index], verdict, backend,
                                        backend.decided_by)
        try:
            draft = Draft.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return None, f"invalid reply: draft {n}: {where}: {first['msg']}"
        lesson = lessons[index] if lessons is not None and index < len(lessons) else None
        problem = _check(draft) or _check_lesson(draft, lesson)
        if problem is not None:
            return None, f"invalid reply: draft {n}: {problem}"
        if lesson is not None:
            draft.provenance = draft.provenance.with_lesson(
                findings[index].signature, lesson.signature, lesson.error_class,
                lesson.target, lesson.fix.kinds)
        drafts.append(draft)
    return drafts, None
