"""Episodes: what a reader needs to learn from one failure or one correction of a session.

An episode starts at a failing step (its real error lines) or at a user's correction or
refusal, and holds the steps after it up to the one that worked on the same target, or a
window of steps when nothing did. Failures that follow inside the window join the episode as
its attempts; the agent's words and the edits in between are kept, bounded. Loop findings and
the error class ride along as hints: they never decide which episodes exist, only what the
reader is told about them. Steps keep their ``Step.index`` so a draft can cite them.

Which sessions have an episode is the one gate on what a model reads: a session with no failed
step and no correction costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..detect.actions import analyze
from ..detect.info import Info
from ..model import Finding, Step, Trajectory
from .delta import command_of, path_of
from .symptom import classify, error_body

AFTER = 6
"""Steps shown after the last failure of an episode when nothing on its target worked."""
CORRECTION_CHARS = 600
"""A user turn longer than this is a new request or pasted context, not a correction."""
HARNESS_TURNS = ("<", "#", "[", "Caveat:", "This session is being continued")
"""How user turns the harness wrote begin (command echoes, caveats, context summaries)."""
MAX_STEPS = 18
"""An episode is cut at this many steps (a long struggle is several episodes)."""

# A user turn that corrects or stops the agent. Written for recall: a false hit costs a few
# lines of digest, a miss hides the lesson a person gave in words.
_CORRECTION = re.compile(
    r"\b(no|nope|don'?t|do not|stop|wrong|instead|not that|undo|revert|never|why did you|"
    r"that'?s not|use \S+ not|shouldn'?t|should not|please don'?t|actually)\b",
    re.IGNORECASE)
# The harness's own note that a person refused a tool call (Claude Code, Codex, Gemini CLI).
_REFUSED = re.compile(
    r"user (?:doesn't want to proceed|rejected|denied|declined)|tool use was rejected|"
    r"request interrupted by user|user cancelled", re.IGNORECASE)


SEGMENTS = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
"""Where a shell command line splits into commands (a pipe included)."""
_SUB = re.compile(r"[a-z][a-z-]{1,20}")
"""A sub-command: a short bare lowercase word (``api``, ``test``, ``run-script``)."""


@dataclass(frozen=True)
class Episode:
    """One failure (or correction) and what followed, as step indices of the trajectory."""

    kind: str
    """``failure`` (a step failed) or ``correction`` (a person corrected or refused)."""
    start: int
    """``Step.index`` of the failing step or the user's turn."""
    steps: tuple[int, ...]
    """Every step of the episode, in order (the start included)."""
    failures: tuple[int, ...]
    """Steps of the episode that failed."""
    target: str
    """What it acted on: a file, or the program (``pytest``, ``gh``), or the tool."""
    worked: int | None
    """The step after the last failure on the same target that succeeded, if any."""
    error_class: str = ""
    """Label of the error class of the first failure (a hint), or ""."""
    hints: tuple[str, ...] = ()
    """Loop findings touching the episode (``exact_repeat: 3 wasted steps``)."""
    tokens: int | None = None
    """Tokens the episode's steps cost, when the log has them."""

    @property
    def last(self) -> int:
        """Its last step."""
        return self.steps[-1]


@dataclass
class SessionEpisodes:
    """A session's episodes with the step analysis they were built from."""

    traj: Trajectory
    episodes: list[Episode] = field(default_factory=list)
    infos: list[Info] = field(default_factory=list)


def failed(step: Step, info: Info) -> bool:
    """True when a tool step ended in an error (the log's flag or a non-zero exit)."""
    # ``info.failed`` reads the exit code with the program's meaning: grep finding nothing
    # is an answer, not a failure.
    return step.kind == "tool" and bool(step.is_error or info.failed)


def target_of(step: Step, info: Info) -> str:
    """The file a file tool acts on, else the program of a command, else the tool."""
    if (info.cls in ("read", "write", "edit")) and not info.shell:
        path = path_of(step, info)
        if path:
            return path
    if info.shell:
        return program_and_sub(command_of(step), info.program)
    return step.tool or info.program or ""


def program_and_sub(command: str, program: str) -> str:
    """``gh api``, ``cargo test``, ``npm install``: the program and its sub-command.

    The sub-command is the bare word after the program (not an option, a path or a file name).
    """
    for segment in SEGMENTS.split(command):
        words = segment.split()
        while words and "=" in words[0]:
            words = words[1:]  # ``PYTHONPATH=src pytest``: the environment is not the target
        if not words or (program and words[0].rsplit("/", 1)[-1] != program):
            continue
        sub = words[1] if len(words) > 1 else ""
        return f"{program} {sub}" if _SUB.fullmatch(sub) else program
    return program or command.split(" ", 1)[0]


def is_correction(step: Step) -> bool:
    """A person's turn after the task that corrects the agent, or a refused tool call."""
    if step.kind == "user":
        text = (step.output or step.text or "").strip()
        # Harnesses inject context as user turns (``<environment_context>``, AGENTS.md): a
        # person's correction is short and plain.
        return len(text) <= CORRECTION_CHARS and not text.startswith(HARNESS_TURNS) \
            and bool(_CORRECTION.search(text))
    return step.kind == "tool" and bool(_REFUSED.search(step.output or ""))


def _first_user(steps: list[Step]) -> int:
    return next((i for i, s in enumerate(steps) if s.kind == "user"), -1)


def _hints(findings: list[Finding], members: set[int]) -> tuple[str, ...]:
    out = []
    for f in findings:
        if members & set(f.steps):
            out.append(f"{f.kind}: {f.wasted_steps} wasted step{'s' * (f.wasted_steps != 1)}")
    return tuple(dict.fromkeys(out))


def _tokens(steps: list[Step], members: tuple[int, ...]) -> int | None:
    counts = [steps[i].tokens for i in members if steps[i].tokens is not None]
    return sum(c for c in counts if c is not None) if counts else None


def _error_class(step: Step) -> str:
    cls = classify(step, "\n".join(error_body(step.output or "")))
    return cls.label if cls is not None else ""


def _grow(steps: list[Step], infos: list[Info], start: int, target: str) -> tuple[
        list[int], list[int], int | None]:
    """Steps of the episode starting at ``start``: (members, failures, step that worked)."""
    members, failures = [start], [start] if failed(steps[start], infos[start]) else []
    last_fail, worked = start, None
    k = start + 1
    while k < len(steps) and len(members) < MAX_STEPS and k - last_fail <= AFTER:
        step, info = steps[k], infos[k]
        members.append(k)
        if failed(step, info) and not is_correction(step):
            failures.append(k)
            last_fail = k
        elif step.kind == "tool" and target and target_of(step, info) == target:
            worked = k
            break
        k += 1
    return members, failures, worked


def build_episodes(traj: Trajectory, findings: list[Finding] | None = None) -> SessionEpisodes:
    """The episodes of ``traj``: each failure and correction with what followed.

    Args:
        traj: The session (its steps already redacted at the source).
        findings: Its loop findings, attached as hints to the episodes they touch.

    Returns:
        The episodes in step order; an episode never starts inside an earlier one.
    """
    steps = traj.steps
    infos = analyze(traj) if steps else []
    out = SessionEpisodes(traj, infos=infos)
    first_user = _first_user(steps)
    covered = -1
    for i, step in enumerate(steps):
        if i <= covered:
            continue
        correction = is_correction(step) and i > first_user >= 0 and step.kind == "user" \
            or (step.kind == "tool" and is_correction(step))
        if not (correction or failed(step, infos[i])):
            continue
        target = target_of(step, infos[i]) if step.kind == "tool" else ""
        members, failures, worked = _grow(steps, infos, i, target)
        covered = members[-1]
        kind = "correction" if correction else "failure"
        out.episodes.append(Episode(
            kind=kind, start=steps[i].index, steps=tuple(steps[m].index for m in members),
            failures=tuple(steps[m].index for m in failures), target=target,
            worked=steps[worked].index if worked is not None else None,
            error_class=_error_class(step) if kind == "failure" else "",
            hints=_hints(findings or [], set(members)), tokens=_tokens(steps, tuple(members))))
    return out
