"""Build the ``Lesson`` of one finding: symptom, class, fix delta, target, cost.

Built once per finding and used by both backends: the heuristic drafts are written from it,
and the Gemini view shows it. A finding that teaches nothing gets no lesson, with the reason
(the run summary counts them).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..detect.actions import analyze
from ..detect.effects import no_op_install
from ..detect.info import Info
from ..hashing import value_hash
from ..model import Finding, FixDelta, Lesson, Step, Trajectory
from ..privacy import redact
from .delta import (
    Resolved,
    build_delta,
    change_kind,
    command_of,
    edit_old_text,
    find_resolution,
    path_of,
)
from .fixtext import edit_change, fix_step, probe, stated_reason
from .mechanisms import MECHANISM_CLASSES, facts_from, pick
from .proof import failed_before, gave_up, make_proven, passes_later
from .symptom import symptom
from .tables import CAUSE_HINT_RES, EDIT_TOOLS, ErrorClass
from .text import bound, code, one_line, relativize, roots_of

NO_ERROR = "no failing step in the loop"
NO_SYMPTOM = "the error is only harness boilerplate"
NO_RESOLUTION = "no later step on the same target succeeded"
NO_CLASS = "no error class fits and nothing changed before the fix"
GAVE_UP = "the session ended unresolved"
ONE_ATTEMPT = "one failure then the fix: nothing was retried"
HARNESS_TAGS = re.compile(r"<(system[-_]\w+|uploaded_files|environment_details|command-\w+)>"
                        r".*?(?:</\1>|\Z)", re.DOTALL)
"""Harness blocks around a session's task text: instructions, not what the user asked."""
_ISSUE = re.compile(r"<(?:issue_description|pr_description|issue)>\s*(.+?)\s*(?:</|$)",
                    re.DOTALL)
NO_MECHANISM = "no specific cause found for this error"
NO_ANSWER = "the log shows no answer to the user's refusal"
_PURPOSE_KEYS = ("description",)
_REL_BIN = re.compile(r"(?:\./)?(?:node_modules|\.venv|venv|vendor)/(?:\.bin|bin)/[\w.-]+")
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
    said = gave_up(steps)
    if said:
        return None, GAVE_UP
    res = find_resolution(steps, infos, failing, target_path,
                          make_proven(steps, infos, failing[0]),
                          _other_error(steps, roots, cls))
    if res is None:
        return None, NO_RESOLUTION
    res = _rerun_is_fix(steps, infos, res, target_path)
    if cls is not None and cls.id == "user_refused" and not any(
            steps[j].kind == "message" and (steps[j].output or "").strip()
            for j in range(res.last_fail + 1, res.step)):
        return None, NO_ANSWER  # the lesson is "answer the user": the log must show it
    attempts_at = _attempts(steps, infos, [*failing, *res.later_fails], roots)
    if len(attempts_at) < 2:
        return None, ONE_ATTEMPT
    last_cls = symptom(steps[attempts_at[-1]], roots)[2]
    if last_cls is not None:
        cls = last_cls
    last_text, last_line, _c = symptom(steps[attempts_at[-1]], roots)
    if last_text:
        text, line = last_text, last_line
    edit_error = cls is not None and cls.id == "edit_not_found"
    edits = [(i, edit_old_text(steps[i], infos[i])) for i in attempts_at]
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
    next_error = ""
    if infos[res.step].failed or steps[res.step].is_error:
        # The loop's error is gone there, but the step printed another one: only a later
        # pass of the same command shows it working.
        next_error = _next_error(steps[res.step], roots)
        again = passes_later(steps, infos, res.step, [command_of(steps[res.step])])
        verify = _action(steps[again], infos[again], roots) if again is not None else ""
    if not infos[res.step].shell and (not verify or verify == resolving):
        # An edit loop proven by a command that failed before it now passing (lint, tests).
        again = passes_later(steps, infos, res.step, failed_before(steps, infos, failing[0]))
        verify = _action(steps[again], infos[again], roots) if again is not None else verify
    harness = cls.harness
    signature = value_hash({"lesson": cls.id, "agent": traj.agent} if harness else
                           {"lesson": cls.id, "program": program,
                            "target": target if is_file else ""})
    sequence = [(_action(steps[i], infos[i], roots), symptom(steps[i], roots)[1])
                for i in attempts_at]
    tried = _tried(steps, infos, res, attempts_at, roots)
    cause = next((hint for cid, rx, hint in CAUSE_HINT_RES
                  if cid == cls.id and rx.search(text or line)), "")
    lesson = Lesson(
        error_class=cls.id, cause=cause, class_label=cls.label, harness=harness, agent=traj.agent,
        symptom=text or line, symptom_line=line or text.splitlines()[0],
        tool=last.tool or "", program=program, target=target,
        failing_action=_action(steps[res.last_fail], infos[res.last_fail], roots),
        attempts=len(attempts_at), fix=delta, resolving_action=resolving, resolving_step=res.step,
        between=[_action(steps[j], infos[j], roots) for j in res.between[:8]],
        verify=verify, wasted_steps=finding.wasted_steps, wasted_tokens=finding.wasted_tokens,
        wasted_seconds=finding.wasted_seconds, outcome=outcome, signature=signature,
        sequence=sequence, tried=tried, next_error=next_error,
        facts=facts_from(text, {**_edit_facts(delta), **_purpose(traj, steps, attempts_at[0]),
                                **_bin_fact(steps, attempts_at, roots)}),
    )
    _fix_content(lesson, steps, infos, res, roots)
    mech = pick(lesson)
    if mech is None and cls.id in MECHANISM_CLASSES:
        return None, NO_MECHANISM
    lesson.mechanism = mech.key if mech is not None else ""
    if mech is not None:
        # Same class, different cause (an install vs an import path): different lessons.
        lesson.signature = value_hash({"base": signature, "mechanism": mech.key})
    return lesson, ""


def _fix_content(lesson: Lesson, steps: list[Step], infos: list[Info], res: Resolved,
                 roots: list[str]) -> None:
    """The fix's own text on the lesson: edit before/after, stated reason, the probe."""
    edit_at = fix_step(steps, infos, res)
    # A failed edit's lesson is the old text it needed (``edit_tried``/``edit_found``); the
    # text it then put in is the task's change, and one line of it hides the indentation.
    if edit_at is not None and lesson.error_class != "edit_not_found":
        lesson.fix.edit_before, lesson.fix.edit_after = edit_change(steps, infos, edit_at, roots)
    first = min([j for j, _kind in res.inserted] + [res.step])
    if lesson.error_class != "user_refused":  # there the words are the answer to the user
        lesson.reason = stated_reason(steps, res.last_fail, first, roots)
    context = " ".join([lesson.symptom, lesson.failing_action, *lesson.fix.inserted,
                        lesson.resolving_action])
    lesson.probe, lesson.probe_output = probe(
        steps, infos, res.last_fail, first, context,
        lambda step, info: _action(step, info, roots), roots)


_WARNING = re.compile(r"^\s*(?:warning|note|hint|info)\b|^\s*(?:Exit code|Wall time|Output:)",
                      re.IGNORECASE)
_REPORT = re.compile(r"^\s*(?:[A-Z]{1,4}\d{2,4}\b|error\b|FAILED\b|\S+:\d+:\d*:? )",
                     re.IGNORECASE)


def _next_error(step: Step, roots: list[str]) -> str:
    """The first line the step reports as an error, warnings passed over."""
    lines = [ln for ln in relativize(redact(step.output or ""), roots).splitlines()
             if ln.strip() and not _WARNING.match(ln)]
    line = next((ln for ln in lines if _REPORT.match(ln)), "") or symptom(step, roots)[1]
    return one_line(line, 160)


def _other_error(steps: list[Step], roots: list[str],
                 ref: ErrorClass | None) -> Callable[[int], bool]:
    """``other(step)``: it failed with a real error of another class than the loop's.

    A harness rejection never ran, and an unclassified error cannot be told apart: neither
    counts as the loop's error being gone.
    """
    def other(j: int) -> bool:
        cls = symptom(steps[j], roots)[2]
        return ref is not None and not ref.harness and cls is not None and not cls.harness \
            and cls.id != ref.id

    return other


def _same_error(cls: ErrorClass | None, ref: ErrorClass | None) -> bool:
    return cls is not None and ref is not None and cls.id == ref.id


def _attempts(steps: list[Step], infos: list[Info], failing: list[int],
              roots: list[str]) -> list[int]:
    """The failing attempts of the error the fix removed, walking back from the last one.

    A call the harness rejected with another tool-usage error never ran, so it is left out;
    a real error of another class means the earlier error was already gone: stop there.
    """
    order = sorted(set(failing))
    if not order:
        return []
    ref = symptom(steps[order[-1]], roots)[2]
    out = [order[-1]]
    for i in reversed(order[:-1]):
        cls = symptom(steps[i], roots)[2]
        if _same_error(cls, ref):
            out.insert(0, i)
        elif cls is not None and cls.harness and ref is not None and ref.harness:
            continue
        else:
            break
    return out


def _tried(steps: list[Step], infos: list[Info], res: Resolved, attempts: list[int],
           roots: list[str]) -> list[str]:
    """What was done inside the loop that did not help, in order (at most 5, no repeats)."""
    out: list[str] = []
    inside = [j for j in res.tried if attempts[0] < j < res.step]
    # State changes between failing attempts (an install, a cd) were followed by the error.
    inside += [j for j in range(attempts[0] + 1, attempts[-1]) if j not in attempts
               and change_kind(steps[j], infos[j], "") not in (None, "edit", "reread")]
    # Reads of the target between failing attempts: re-reading did not help either.
    target = path_of(steps[attempts[-1]], infos[attempts[-1]])
    inside += [j for j in range(attempts[0] + 1, attempts[-1])
               if infos[j].cls == "read" and steps[j].kind == "tool" and target
               and path_of(steps[j], infos[j]) == target]
    for j in sorted(set(inside)):
        action = _action(steps[j], infos[j], roots)
        if infos[j].cls == "read":
            action = "re-read " + action.removeprefix("read ")
        elif no_op_install(steps[j], infos[j]):
            # The detector's rule: an install that printed it changed nothing.
            said = next((ln.strip() for ln in reversed((steps[j].output or "").splitlines())
                         if ln.strip()), "")
            if said:
                action = f"{code(bound(action, 100))} (it printed {code(one_line(said, 60))})"
        if action not in out:
            out.append(action)
    # The same call resent with other options (``with_escalated_permissions``) did not help.
    for a, b in zip(attempts, attempts[1:], strict=False):
        extra = sorted(set(steps[b].args or {}) - set(steps[a].args or {}) -
                       {"description", "timeout", "justification"})
        if extra and command_of(steps[a]) == command_of(steps[b]):
            out.append(f"the same call with `{extra[0]}` set")
    return out[:5]


def _rerun_is_fix(steps: list[Step], infos: list[Info], res: Resolved,
                  target_path: str) -> Resolved:
    """When another command passed and the failing one passes after it, that is the fix.

    ``bun run build`` passes, then the same ``bun test`` that failed passes: the build is an
    inserted step, the rerun is the step that worked.
    """
    failed, worked = command_of(steps[res.last_fail]), command_of(steps[res.step])
    if not (infos[res.step].shell and failed and worked and failed != worked) or res.chained:
        return res
    again = passes_later(steps, infos, res.step, [failed])
    if again is None:
        return res
    kind = change_kind(steps[res.step], infos[res.step], target_path) or "build"
    return Resolved(res.last_fail, again, [*res.inserted, (res.step, kind)],
                    [*res.between, res.step], [], res.later_fails, res.tried)


def _edit_facts(delta: FixDelta) -> dict[str, str]:
    """Indentation of the old text and of the file's line, for the mechanism sentences."""
    note = delta.edit_note or ""
    match = re.search(r"the old text has (.+?), the file has (.+?)(?:;|$)", note)
    return {"tried_indent": match.group(1), "found_indent": match.group(2)} if match else {}


def _bin_fact(steps: list[Step], attempts: list[int], roots: list[str]) -> dict[str, str]:
    """A relative program path an attempt ran (``./node_modules/.bin/tsc``), for ``test -x``."""
    for i in attempts:
        match = _REL_BIN.search(command_of(steps[i]))
        if match:
            return {"bin": relativize(match.group(0), roots)}
    return {}


def _request(steps: list[Step], first: int) -> str:
    """The person's own request of the turn the loop is in, "" when it is the session's task.

    Long sessions hold many requests; the first one (``traj.task``) can be a prompt template
    (``## User Input``) while the turn's request says what the loop was for.
    """
    users = [k for k in range(first) if steps[k].kind == "user"]
    if len(users) < 2:
        return ""
    text = HARNESS_TAGS.sub("", steps[users[-1]].output or steps[users[-1]].text or "").strip()
    if len(text) < 8 or text.startswith(("<", "/", "[")) or "\n" in text.strip():
        return ""
    return text


def _purpose(traj: Trajectory, steps: list[Step], first: int) -> dict[str, str]:
    """What the agent was doing: the step's own description and the request or task line."""
    step = steps[first]
    args = step.args or {}
    said = next((str(args[k]) for k in _PURPOSE_KEYS if isinstance(args.get(k), str)
                 and args[k].strip()), "")
    task = _request(steps, first) or HARNESS_TAGS.sub("", traj.task or "")
    issue = _ISSUE.search(task)
    line = next((ln.strip(" #*") for ln in (issue.group(1) if issue else task).splitlines()
                 if len(ln.strip(" #*")) > 8), "")
    # A one-word description ("run") says nothing the program name does not.
    out = {"doing": redact(one_line(said.rstrip("."), 120))} if len(said.split()) > 1 else {}
    if line:
        out["task"] = redact(one_line(line, 140))
    return out
