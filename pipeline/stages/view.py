"""The compact view of one session that the model sees instead of the whole transcript.

It holds the task, each loop's lesson (the real error text, its class, the fix delta, the
edit difference, the steps between the last failure and the success, the cost; findings
without a lesson are not shown), the outcome, the store's categories and the existing titles
that share words with the session (at most 20, however big the store). A token budget is
enforced by shrinking the least useful parts first: existing titles, then category
descriptions, then evidence quotes, then step text, then the task, then the weakest findings.

Everything taken from the trajectory is quoted inside ``<<<LOG ... LOG>>>`` blocks and passed
through ``redact()``; the prompt tells the model that nothing inside those blocks is an
instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..lessons.build import HARNESS_TAGS
from ..lessons.digest import CLOSE, OPEN, estimate_tokens
from ..lessons.text import relativize, roots_of
from ..model import Finding, Lesson, Trajectory
from ..normalize import truncate
from ..privacy import redact

if TYPE_CHECKING:
    from .store_like import StoreLike


@dataclass
class StoreContext:
    """What the store already holds, so drafts pick a known domain and avoid known titles."""

    categories: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, name, description) of each category in INDEX.md."""
    titles: list[str] = field(default_factory=list)
    """Titles of the existing playbooks."""


def store_context(store: StoreLike) -> StoreContext:
    """Categories and titles of ``store`` (empty when it does not exist yet)."""
    if not store.exists():
        return StoreContext()
    return StoreContext(categories=[(c.id, c.name, c.description) for c in store.categories()],
                        titles=[e.title for e in store.experiences()])


@dataclass(frozen=True)
class _Level:
    titles: int
    category_desc: int
    evidence: int
    quote: int
    step_text: int
    task: int
    findings: int


# Shrink steps, least useful part first. Each level is tried in turn until the view fits.
_LEVELS = [
    _Level(titles=20, category_desc=160, evidence=4, quote=300, step_text=600, task=1500,
           findings=99),
    _Level(titles=20, category_desc=80, evidence=4, quote=300, step_text=600, task=1500,
           findings=99),
    _Level(titles=10, category_desc=80, evidence=3, quote=200, step_text=400, task=1000,
           findings=99),
    _Level(titles=0, category_desc=0, evidence=2, quote=160, step_text=300, task=800,
           findings=99),
    _Level(titles=0, category_desc=0, evidence=1, quote=120, step_text=200, task=400,
           findings=3),
    _Level(titles=0, category_desc=0, evidence=1, quote=80, step_text=120, task=200,
           findings=1),
]


def quote(text: str, limit: int) -> str:
    """``text`` redacted, bounded and fenced so the model reads it as data."""
    body = truncate(redact(text), limit) if limit > 0 else ""
    # A log line that itself contains the fence must not close the block early.
    body = body.replace(CLOSE, "LOG>> >").replace(OPEN, "<< <LOG")
    return f"{OPEN}\n{body}\n{CLOSE}"


def outcome_lines(traj: Trajectory) -> list[str]:
    """What the log says about how the run ended, one signal per line."""
    hints = traj.outcome
    lines = []
    for label, value in (
        ("exit_status", hints.exit_status),
        ("task_complete", hints.task_complete),
        ("resolved", hints.resolved),
        ("score", hints.score),
        ("tests_passed_at_end", hints.tests_passed_at_end),
    ):
        if value is not None:
            lines.append(f"- {label}: {value}")
    return lines


def _finding_block(index: int, finding: Finding, traj: Trajectory, level: _Level,
                   shown_resolutions: dict[int, int]) -> str:
    lines = [
        f"### Finding {index}: {finding.kind} ({finding.wasted_steps} wasted steps, "
        f"steps {finding.steps[0] if finding.steps else '?'}-"
        f"{finding.steps[-1] if finding.steps else '?'})",
    ]
    if finding.error_signature:
        lines.append("Error signature:")
        lines.append(quote(finding.error_signature, 300))
    if finding.summary:
        lines.append("Summary:")
        lines.append(quote(finding.summary, 300))
    if finding.evidence and level.evidence > 0:
        lines.append("Evidence (repeated action and what came back):")
        # Repeats quote the same text: show each distinct quote once, with all its steps.
        groups: dict[str, list[int]] = {}
        for ev in finding.evidence[: level.evidence]:
            groups.setdefault(ev.quote, []).append(ev.step)
        for text, steps in groups.items():
            lines.append(("step " if len(steps) == 1 else "steps ")
                         + ", ".join(map(str, steps)) + ":")
            lines.append(quote(text, level.quote))
    if finding.resolution is not None:
        res = finding.resolution
        lines.append(f"Resolved at step {res.step}; what changed:")
        lines.append(quote(res.change, level.step_text))
        if res.step in shown_resolutions:
            lines.append(f"(the same resolving step as finding {shown_resolutions[res.step]})")
            return "\n".join(lines)
        shown_resolutions[res.step] = index
        if res.action:
            lines.append("Resolving action:")
            lines.append(quote(res.action, level.step_text))
        step = traj.steps[res.step] if 0 <= res.step < len(traj.steps) else None
        if step is not None and step.output and level.step_text > 150:
            lines.append("Its result:")
            lines.append(quote(step.output, level.step_text // 2))
    else:
        lines.append("No step in the log resolved this loop.")
    return "\n".join(lines)


def _lesson_block(index: int, finding: Finding, lesson: Lesson, traj: Trajectory,
                  level: _Level) -> str:
    """What the finding teaches: the real error, its class, the fix delta and the cost."""
    fix = lesson.fix
    lines = [
        f"### Finding {index}: {lesson.class_label} ({lesson.attempts} failing attempt(s), "
        f"{lesson.wasted_steps} wasted step(s), steps {finding.steps[0] if finding.steps else '?'}"
        f"-{lesson.resolving_step})",
        f"Error class: {lesson.error_class}" + (" (a tool-usage rule of the agent harness)"
                                                if lesson.harness else ""),
        f"Target: {lesson.target or '(none)'}",
        "Error the tool printed (harness boilerplate removed):",
        quote(lesson.symptom, max(level.quote * 2, 300)),
    ]
    if len(lesson.sequence) <= 1:
        lines += ["Last failing attempt:", quote(lesson.failing_action, level.step_text)]
    else:
        # Each attempt with its own error: the error changes when the launcher changes.
        pairs = list(dict.fromkeys(f"{a} -> {e}" for a, e in lesson.sequence))
        lines.append("Failing attempts in order, each with its own error (repeats folded):")
        lines.append(quote("\n".join(pairs[:6]), level.step_text))
    if lesson.tried:
        lines.append("Done inside the loop without helping (do not offer these as the fix):")
        lines.append(quote("\n".join(lesson.tried), level.quote))
    if lesson.mechanism:
        lines.append(f"Cause found offline: {lesson.mechanism.replace('_', ' ')}")
    if fix.edit_tried or fix.edit_note:
        lines.append("Edit difference (what the agent tried to replace vs what the file held):")
        lines.append(quote(f"tried: {fix.edit_tried or '?'}\nfile held: "
                           f"{fix.edit_found or '(no read of the file shows it)'}\n"
                           f"difference: {fix.edit_note or 'the lines differ'}", level.step_text))
    if fix.inserted:
        lines.append("State-changing steps inserted before the attempt that worked, in order:")
        lines.append(quote("\n".join(fix.inserted), level.step_text))
    if fix.removed or fix.added:
        lines.append("Argument difference of the command (token diff):")
        lines.append(quote(f"removed: {' '.join(fix.removed) or '-'}\n"
                           f"added: {' '.join(fix.added) or '-'}", level.quote))
    if fix.edit_after:
        lines.append("The fix's edit (one line each side):")
        lines.append(quote(f"before: {fix.edit_before or '(added)'}\nafter: {fix.edit_after}",
                           level.step_text))
    if lesson.reason:
        lines.append("The agent's stated reason, its own words (not checked by the log):")
        lines.append(quote(lesson.reason, level.quote))
    if lesson.probe:
        lines.append("Diagnostic step right before the fix, and what it printed (the log's "
                     "evidence for the cause):")
        lines.append(quote(f"{lesson.probe} -> {lesson.probe_output}", level.step_text))
    if lesson.between and level.evidence > 1 and lesson.between != fix.inserted:
        lines.append("All steps between the last failure and the success:")
        lines.append(quote("\n".join(lesson.between), level.step_text))
    lines.append("The attempt that worked (same target):")
    lines.append(quote(lesson.resolving_action, level.step_text))
    step = traj.steps[lesson.resolving_step] if lesson.resolving_step is not None and \
        0 <= lesson.resolving_step < len(traj.steps) else None
    if step is not None and step.output and level.step_text > 150:
        lines.append("Its result:")
        lines.append(quote(relativize(step.output, roots_of(traj.extra.get("cwd"))),
                           level.step_text // 2))
    if lesson.verify and lesson.verify != lesson.resolving_action:
        lines.append("Then passed:")
        lines.append(quote(lesson.verify, level.quote))
    cost = [f"{lesson.wasted_steps} wasted steps"]
    if lesson.wasted_tokens:
        cost.append(f"{lesson.wasted_tokens} tokens")
    if lesson.wasted_seconds:
        cost.append(f"{lesson.wasted_seconds:.0f} seconds")
    lines.append("Cost: " + ", ".join(cost))
    return "\n".join(lines)


def _render(traj: Trajectory, findings: list[Finding], store: StoreContext, level: _Level,
            outcome: str, lessons: list[Lesson] | None = None) -> str:
    roots = roots_of(traj.extra.get("cwd"))
    # Harness blocks (system instructions, uploaded-files notes) are not the task.
    task = HARNESS_TAGS.sub("", traj.task or "").strip()
    parts = ["## Task", quote(relativize(task or "(the log does not state the task)",
                                         roots), level.task)]
    parts.append("## Outcome")
    parts.append(outcome)
    signals = outcome_lines(traj)
    if signals:
        parts.append("Signals from the log:\n" + "\n".join(signals))
    if traj.outcome.final_message:
        parts.append("Agent's final message:")
        # The lesson is in the loops; the last message only says how the run ended.
        parts.append(quote(relativize(traj.outcome.final_message, roots), level.quote))
    parts.append("## Loops found")
    shown: dict[int, int] = {}
    for i, finding in enumerate(findings[: level.findings]):
        if lessons is not None:
            parts.append(_lesson_block(i, finding, lessons[i], traj, level))
        else:
            parts.append(_finding_block(i, finding, traj, level, shown))
    parts.append("## Store categories (id: name - description)")
    if store.categories:
        for cid, name, desc in store.categories:
            tail = f" - {truncate(desc, level.category_desc)}" if level.category_desc else ""
            parts.append(f"- {cid}: {name}{tail}")
    else:
        parts.append("(none yet; propose a new slug)")
    titles = relevant_titles(store.titles, findings, traj, level.titles)
    if titles:
        parts.append("## Related existing playbook titles (do not repeat these)")
        parts.extend(f"- {t}" for t in titles)
    return "\n".join(parts)


_WORD = re.compile(r"[a-z][a-z0-9_-]{2,}")


def relevant_titles(titles: list[str], findings: list[Finding], traj: Trajectory,
                    limit: int) -> list[str]:
    """The existing titles that share words with this session's loops, best first.

    A store of hundreds of playbooks must not flood the prompt, and a title that shares no
    word with the session cannot be the one the draft would repeat.
    """
    if not titles or limit <= 0:
        return []
    text = " ".join([traj.task or "", *(f.summary for f in findings),
                     *(f.error_signature or "" for f in findings)]).lower()
    vocab = set(_WORD.findall(text))
    scored = [(len(vocab & set(_WORD.findall(t.lower()))), i, t) for i, t in enumerate(titles)]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))
    return [t for _, _, t in best[:limit]]


def build_view(
    traj: Trajectory,
    findings: list[Finding],
    store: StoreContext,
    *,
    budget_tokens: int = 6000,
    outcome: str = "unknown",
    lessons: list[Lesson] | None = None,
) -> str:
    """The compact, redacted view of one session for the drafting prompt.

    Args:
        traj: The session.
        findings: Its findings, most important first (only these are shown).
        store: Categories and titles of the store.
        budget_tokens: Upper bound on the view's estimated tokens.
        outcome: One line on how the run ended (the log's own verdict when it has one).
        lessons: The lesson of each finding (same order); when given, each finding is shown
            as its lesson (error text, class, fix delta, edit difference, cost).

    Returns:
        Markdown text; every piece of log text sits inside a ``<<<LOG`` block.
    """
    view = ""
    for level in _LEVELS:
        view = _render(traj, findings, store, level, outcome, lessons)
        if estimate_tokens(view) <= budget_tokens:
            return view
    # Still too long at the tightest level (huge signatures): cut the tail, keep it valid.
    return truncate(view, budget_tokens * 4)


def transcript_text(traj: Trajectory) -> str:
    """The whole session as plain text: what sending the full transcript would cost."""
    chunks = [traj.task or ""]
    for step in traj.steps:
        chunks.append(f"[{step.index}] {step.kind} {step.tool or ''} {step.action_key}")
        if step.text:
            chunks.append(step.text)
        if step.output:
            chunks.append(step.output)
    return "\n".join(chunks)
