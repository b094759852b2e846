"""Offline playbooks, written from a finding's ``Lesson`` (no model involved).

The title names the symptom and the fix; the trap quotes the real error (boilerplate
stripped); the insight is the error class's principle filled with this loop's fix delta; the
validated path lists the steps of the fix in order, and the checklist names the command that
now passes. Drafts are marked ``drafted_by: heuristic``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ..config import Settings
from ..lessons.delta import command_of
from ..lessons.episodes import SessionEpisodes, build_episodes, failed
from ..lessons.mechanisms import fill, pick
from ..lessons.tables import CLASS_BY_ID, EDIT_TOOLS
from ..lessons.text import bound, code, one_line
from ..lessons.verify import Evidence, Proposal, verify
from ..llm.backend import Backend
from ..model import Draft, Finding, Lesson, Trajectory, Verdict
from ..normalize import error_line
from ..results import DraftResult
from .draft import lesson_findings, provenance
from .learn import rejection_note
from .view import StoreContext

# Program -> (domain id, name, description) for offline domain picking.
_ECOSYSTEMS: dict[str, tuple[str, str, str]] = {}
for _progs, _eco in (
    ("pytest python python3 pip pip3 uv poetry tox nox mypy ruff flake8 pylint black isort "
     "conda pipenv django-admin", ("python-tooling", "Python Tooling",
                                  "Traps with Python test runners, packaging and linters.")),
    ("cargo rustc rustup clippy", ("rust-tooling", "Rust Tooling",
                                   "Traps with cargo builds, tests and the Rust toolchain.")),
    ("npm npx yarn pnpm node jest vitest tsc eslint bun deno", (
        "javascript-tooling", "JavaScript Tooling",
        "Traps with Node.js package managers, bundlers and test runners.")),
    ("go gofmt golangci-lint", ("go-tooling", "Go Tooling",
                                "Traps with go build, go test and modules.")),
    ("mvn gradle java javac ./gradlew ./mvnw", ("java-tooling", "Java Tooling",
                                                "Traps with Maven, Gradle and the JDK.")),
    ("make cmake gcc g++ clang ninja", ("build-tooling", "Build Tooling",
                                        "Traps with make, CMake and C/C++ compilers.")),
    ("git gh", ("git-workflow", "Git Workflow", "Traps with git and GitHub CLI operations.")),
    ("docker kubectl helm", ("containers", "Containers",
                             "Traps with Docker images and Kubernetes tooling.")),
):
    for _p in _progs.split():
        _ECOSYSTEMS[_p] = _eco
_HARNESS_DOMAIN = ("agent-tool-usage", "Agent Tool Usage",
                   "Tool-usage rules of agent harnesses: edits, reads, arguments, refusals.")
_FALLBACK_DOMAIN = ("agent-loops", "Agent Loop Traps",
                    "Wasted-step loops coding agents fall into, and how to break them.")
_SLUG = re.compile(r"[^a-z0-9]+")

_STEP_WORDS = {
    "install": "Install what is missing",
    "cwd": "Change to the right directory",
    "config": "Fix the configuration",
    "create": "Create, move or remove what the command needs",
    "lock": "Stop or clear what holds the resource",
    "edit": "Change the code",
    "permission": "Fix the permission",
    "reread": "Read the file",
    "rewrite": "Rewrite the file",
    "build": "Build what the command imports",
}
"""How each kind of inserted step reads in the validated path."""


def _domain(program: str, harness: bool, context: StoreContext) -> tuple[str, str | None,
                                                                          str | None]:
    """An existing category when one matches, else an ecosystem slug, else a fallback."""
    known = {cid for cid, _name, _desc in context.categories}
    domain = _HARNESS_DOMAIN if harness else _ECOSYSTEMS.get(program, _FALLBACK_DOMAIN)
    if domain[0] in known:
        return domain[0], None, None
    words = set(_SLUG.sub(" ", domain[1].lower()).split()) - {"", "tooling", "agent"}
    for cid, name, _desc in context.categories:
        if words & set(_SLUG.sub(" ", f"{cid} {name}".lower()).split()):
            return cid, None, None
    return domain


_BIG_DIFF = 4
"""More changed tokens than this: the working command is another command, not a tweak."""
_QUOTED = re.compile(r"`[^`]*(?:`|$)", re.DOTALL)


def _small_diff(lesson: Lesson) -> bool:
    fix = lesson.fix
    return bool(fix.removed or fix.added) and len(fix.removed) + len(fix.added) <= _BIG_DIFF


def how(lesson: Lesson) -> str:
    """This loop's cause and fix in words (fills ``{how}`` of the class principle)."""
    fix = lesson.fix
    parts = [lesson.cause] if lesson.cause else []
    if fix.edit_note:
        parts.append(fix.edit_note)
    elif fix.inserted:
        steps = ", then ".join(code(one_line(s, 60)) for s in fix.inserted[:3])
        parts.append(f"{steps} came before the attempt that worked")
    elif not lesson.tool == "bash" and lesson.failing_action.split()[:1] != \
            lesson.resolving_action.split()[:1] and lesson.resolving_action:
        parts.append(f"{code(lesson.resolving_action)} worked where "
                     f"{code(lesson.failing_action.split()[0])} kept failing")
    elif _small_diff(lesson):
        changes = []
        if fix.removed:
            changes.append(code(" ".join(fix.removed)) + " dropped")
        if fix.added:
            changes.append(code(" ".join(fix.added)) + " added")
        parts.append(" and ".join(changes))
    else:
        parts.append(f"{code(one_line(lesson.resolving_action, 80))} worked instead")
    return "here " + "; ".join(parts)


def _head(lesson: Lesson, limit: int = 70) -> str:
    """The symptom as a title quotes it: its first line, text quoted inside it elided."""
    line = lesson.symptom_line
    at = lesson.symptom.find(line.rstrip(" …"))
    if "`" in line and at >= 0:
        line = _QUOTED.sub("…", lesson.symptom[at:]).splitlines()[0]
    line = re.sub(r"^E\s+", "", line.strip())  # pytest's error gutter
    return code(one_line(line.replace("`", "'"), limit))


def _another_command(lesson: Lesson) -> bool:
    """True when the fix was another command rather than a state change before the same one."""
    return not lesson.fix.inserted and bool(lesson.fix.removed or lesson.fix.added)


def title(lesson: Lesson) -> str:
    """The lesson as an imperative a reader clicks when they see the error.

    The mechanism's title when one fits, else the error class's; never a path or a line
    number (the error text itself is in the description and the trap).
    """
    mech = pick(lesson)
    made = fill(mech.title, lesson) if mech is not None else ""
    if not made:
        cls = CLASS_BY_ID[lesson.error_class]
        template = cls.alt_title if cls.alt_title and _another_command(lesson) else cls.title
        made = template.format(program=lesson.program, target="the file")
    return made[:1].upper() + made[1:]


def _pairs(lesson: Lesson) -> list[str]:
    """Each failing attempt with its own error, repeats of the same pair folded (``× 3``)."""
    folded: list[tuple[str, str, int]] = []
    for action, error in lesson.sequence:
        if folded and folded[-1][:2] == (action, error):
            folded[-1] = (action, error, folded[-1][2] + 1)
        else:
            folded.append((action, error, 1))
    lines = [f"{n}. {code(bound(a, 100))} -> {code(bound(_elide(e), 120))}"
             + (f" (× {k})" if k > 1 else "") for n, (a, e, k) in enumerate(folded[:6], 1)]
    if len(folded) > 6:
        lines.append(f"{len(folded) - 6} more pairs like these.")
    return lines


def _elide(error: str) -> str:
    """An error line with quoted code inside it elided (it is in the fenced block)."""
    return _QUOTED.sub("…", error).replace("`", "'")


def _trap(lesson: Lesson) -> str:
    n = lesson.attempts
    same = len({e for _a, e in lesson.sequence}) <= 1
    lines = [(f"{n} attempts failed with the same error:" if same else
              f"{n} attempts failed, each with its own error:") if n > 1 else
             f"{code(bound(lesson.failing_action, 120))} failed:", ""]
    lines += _pairs(lesson) if n > 1 else []
    lines += ["", "The last attempt's error:", "", "```text",
              lesson.symptom.replace("```", "\'\'\'"), "```"]
    fix = lesson.fix
    if fix.edit_tried:
        lines.append("")
        which = ("The last attempt's" if fix.edit_attempt in (None, lesson.attempts) else
                 f"Attempt {fix.edit_attempt}'s")
        lines.append(f"{which} old text had {code(fix.edit_tried)}"
                     + (f"; the file held {code(fix.edit_found)}" if fix.edit_found else "")
                     + (f" ({fix.edit_note})." if fix.edit_note else "."))
    if lesson.probe:
        lines += ["", f"What the log showed before the fix: {code(lesson.probe)} printed "
                  f"{code(lesson.probe_output)}."]
    if lesson.cause:
        lines += ["", f"Cause: {lesson.cause}."]
    if lesson.tried:
        lines += ["", "Did not help: " + "; ".join(
            # Entries starting with a code span are already written out (``x`` (it printed …)).
            t if t.startswith(("the same call", "`")) else code(bound(t, 100))
            for t in lesson.tried)
            + " (the next attempt failed the same way)."]
    cost = [f"{lesson.wasted_tokens:,} tokens"] if lesson.wasted_tokens else []
    if lesson.wasted_seconds:
        cost.append(f"{lesson.wasted_seconds:.0f} s")
    if cost:
        lines += ["", "The retries cost " + " and ".join(cost) + "."]
    return "\n".join(lines)


def _objective(lesson: Lesson) -> str:
    """The task the agent was doing, from the step's own description and the session task."""
    facts = lesson.facts
    is_file = lesson.target != lesson.program
    what = (f"Change {code(lesson.target)}" if is_file else
            "Edit the open file" if lesson.program in EDIT_TOOLS else
            f"Run {code(lesson.program)}" if lesson.program else "Finish the step")
    if facts.get("doing") and not (lesson.program in EDIT_TOOLS and not is_file):
        what = f"{facts['doing']} ({code(lesson.target if is_file else lesson.program)})"
    task = facts.get("task")
    return f"{what}" + (f", for the task \"{task.rstrip('.')}\"" if task else "") + "."


def edit_sentence(lesson: Lesson) -> str:
    """What the fix's edit changed, one line each side ("" when the log does not show it)."""
    fix = lesson.fix
    if not fix.edit_after:
        return ""
    if fix.edit_before:
        return f"{code(fix.edit_before)} -> {code(fix.edit_after)}"
    return f"put in {code(fix.edit_after)}"


def _insight(lesson: Lesson) -> str:
    edit = edit_sentence(lesson)
    tail = f" The edit: {edit}." if edit else ""
    return _principle(lesson) + tail


def _principle(lesson: Lesson) -> str:
    mech = pick(lesson)
    made = fill(mech.principle, lesson) if mech is not None else ""
    if made:
        return made
    cls = CLASS_BY_ID[lesson.error_class]
    principle = (cls.alt_principle if cls.alt_principle and _another_command(lesson)
                 else cls.principle)
    return principle.format(how=how(lesson).removeprefix("here "), program=lesson.program,
                            target=lesson.target)


def _checklist(lesson: Lesson) -> list[str]:
    """The command that now passes, then the mechanism's checks (each holds after the fix)."""
    passing = lesson.verify or lesson.resolving_action
    items = [f"{code(bound(passing, 120))} succeeds"]
    mech = pick(lesson)
    same_call = lesson.failing_action.split()[:1] == lesson.resolving_action.split()[:1]
    checks = [fill(c, lesson) for c in (mech.checks if mech is not None and (
        same_call or not mech.same_call_checks) else ())]
    items += [c for c in checks if c]
    if mech is None:
        cls = CLASS_BY_ID[lesson.error_class]
        items.append(cls.check.format(program=lesson.program, target=lesson.target))
        if lesson.fix.added and _small_diff(lesson):
            items.append(f"The command uses {code(' '.join(lesson.fix.added))}"
                         + (f" instead of {code(' '.join(lesson.fix.removed))}"
                            if lesson.fix.removed else ""))
    return list(dict.fromkeys(items))


_FIX_WORDS = ("edit", "config", "rewrite")
"""Inserted kinds whose step is the fix's edit (its before/after goes on that line)."""


def _path(lesson: Lesson) -> list[str]:
    kinds = lesson.fix.kinds
    lines: list[str] = []
    if lesson.error_class == "user_refused":
        lines.append("Stop after the refusal and answer what the user said before acting "
                     "again.")
    if lesson.probe:
        lines.append(f"Look before changing anything: {code(lesson.probe)} (here it printed "
                     f"{code(lesson.probe_output)}).")
    edit = edit_sentence(lesson)
    reason = f' The agent\'s stated reason: "{lesson.reason}"' if lesson.reason else ""
    inserted_kinds = [k for k in kinds if k in _STEP_WORDS]
    for n, step in enumerate(lesson.fix.inserted):
        kind = inserted_kinds[n] if n < len(inserted_kinds) else ""
        word = _STEP_WORDS.get(kind, "Run")
        detail = ""
        if edit and kind in _FIX_WORDS:
            detail, edit = f": {edit}", ""
        lines.append(f"{word}: {code(step)}{detail}." + (reason if n == 0 else ""))
    if lesson.fix.inserted:
        reason = ""
    if lesson.failing_action == lesson.resolving_action and "edit_args" in kinds:
        changes = [f"{code(k)} added" for k in lesson.fix.added] + [
            f"{code(k)} left out" for k in lesson.fix.removed]
        lines.append(f"Resend {code(lesson.resolving_action)} with "
                     + " and ".join(changes) + f"; {_outcome(lesson)}.")
    elif lesson.resolving_action.split()[:1] in (["write"], ["create"]) and \
            lesson.failing_action.split()[:1] != lesson.resolving_action.split()[:1]:
        lines.append(f"Rewrite the whole file instead of patching it: "
                     f"{code(lesson.resolving_action)}; {_outcome(lesson)}.")
    elif (lesson.fix.removed or lesson.fix.added) and _small_diff(lesson):
        lines.append(f"Change the command: {code(lesson.failing_action)} -> "
                     f"{code(lesson.resolving_action)}; {_outcome(lesson)}.")
    elif lesson.fix.removed or lesson.fix.added:
        lines.append(f"Instead of {code(lesson.failing_action)}, run "
                     f"{code(lesson.resolving_action)}; {_outcome(lesson)}.")
    else:
        lines.append(f"{code(lesson.resolving_action)}" + (f" ({edit})" if edit else "")
                     + " succeeds.")
        edit = ""
    if reason:
        lines[-1] += reason
    if lesson.verify and (lesson.verify != lesson.resolving_action or lesson.next_error):
        lines.append(f"{code(lesson.verify)} passes"
                     + (" once what it reports is fixed." if lesson.next_error else "."))
    return [f"{n}. {line}" for n, line in enumerate(lines, 1)]


def _outcome(lesson: Lesson) -> str:
    """How the step that worked ended: it passed, or the loop's error gave way to another."""
    if lesson.next_error:
        return f"the error is gone and it now reports {code(bound(_elide(lesson.next_error), 120))}"
    return "it succeeds"


def draft_from_lesson(traj: Trajectory, finding: Finding, lesson: Lesson,
                      verdict: Verdict | None, backend: Backend,
                      store_context: StoreContext) -> Draft:
    """The playbook a lesson teaches (offline)."""
    cls = CLASS_BY_ID[lesson.error_class]
    domain, domain_title, domain_desc = _domain(lesson.program, cls.harness, store_context)
    subject = code(lesson.program) if lesson.program else "a tool call"
    description = (f"Trigger when {subject} fails with {_head(lesson, 200)} ({cls.label})"
                   + ".")
    checklist = _checklist(lesson)
    keywords = list(dict.fromkeys(
        w for w in [lesson.error_class.replace("_", "-"), lesson.program.lower(),
                    (lesson.agent or "").lower(), (lesson.tool or "").lower(),
                    *(k.replace("_", "-") for k in lesson.fix.kinds)]
        if w and len(w) > 2 and " " not in w and w.isascii()))[:8]
    for extra in ("agent-loop", "retry", "error"):
        if len(keywords) >= 3:
            break
        if extra not in keywords:
            keywords.append(extra)
    complexity: Literal["low", "medium", "high"] = (
        "low" if lesson.attempts <= 2 else "medium" if lesson.attempts <= 4 else "high")
    objective = _objective(lesson)
    # The finding's signature stays the key (review, ledger); the lesson's joins it, so the
    # same lesson from another session or finding is a duplicate of this playbook.
    prov = provenance(traj, finding, verdict, backend, "heuristic").with_lesson(
        finding.signature, lesson.signature, lesson.error_class, lesson.target,
        lesson.fix.kinds)
    return Draft(
        title=title(lesson), description=bound(description, 1024), domain=domain,
        domain_title=domain_title, domain_description=domain_desc, keywords=keywords,
        complexity=complexity, objective=objective, trap=_trap(lesson),
        insight=_insight(lesson),
        validated_path="\n".join(_path(lesson)), checklist=checklist, provenance=prov,
    )


def heuristic_drafts(traj: Trajectory, findings: Sequence[Finding], verdict: Verdict | None,
                     backend: Backend, store_context: StoreContext,
                     settings: Settings) -> DraftResult:
    """One draft per lesson of ``findings``, with a reason for each finding left undrafted.

    ``settings`` gives the draft limit.
    """
    limit = settings.max_drafts_per_session
    chosen, lessons, notes = lesson_findings(traj, list(findings), limit)
    result = DraftResult(failures=notes)
    session = build_episodes(traj) if chosen else None
    for finding, lesson in zip(chosen, lessons, strict=True):
        draft = draft_from_lesson(traj, finding, lesson, verdict, backend, store_context)
        assert session is not None
        evidence = lesson_evidence(session, finding, lesson)
        problems = [("cited_steps", "the lesson has no failing step before its fix")] \
            if evidence is None else verify(Proposal(draft, evidence), session)
        if problems:
            # The same verifier as every model's drafts: offline, fewer playbooks is the
            # honest answer when the log does not show the claim.
            result.failures.append(rejection_note(Proposal(draft, evidence or Evidence(
                (), (), "")), problems))
            continue
        result.drafts.append(draft)
    return result


def lesson_evidence(session: SessionEpisodes, finding: Finding,
                    lesson: Lesson) -> Evidence | None:
    """What a heuristic draft cites: failing steps, the resolving step, the error line."""
    steps, infos = session.traj.steps, session.infos
    fix = lesson.resolving_step
    if fix is None:
        return None
    trap = tuple(i for i in finding.steps if i < fix and failed(steps[i], infos[i]))
    if not trap:
        return None
    if failed(steps[fix], infos[fix]):
        # The loop's error is gone but the step reports another one (lint findings where
        # ruff could not spawn): the proof is the same command passing later, if it does.
        command = command_of(steps[fix])
        later = next((k for k in range(fix + 1, len(steps)) if command and
                      command_of(steps[k]) == command and not failed(steps[k], infos[k])), None)
        fix = later if later is not None else fix
    output = steps[trap[-1]].output or ""
    # A refusal has no error word: its first line (the person's words) is what it says.
    quote = error_line(output) or next((ln for ln in output.splitlines() if ln.strip()), "")
    return Evidence(trap, (fix,), quote)
