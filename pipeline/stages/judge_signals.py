"""Outcome signals of a run, ranked by what they prove, each with its measured reliability.

A signal is one fact in (or beside) the log that points to success or failure: an evaluation
result, the harness's exit status, the project's test suite after the last edit, the agent's
own claim. ``SIGNALS`` is the ranked table; a row ``decides`` an outcome only when that signal
earned it (by definition, or measured on the tuning half of the labelled real runs, see
``tests/data/judge/README.md``). Everything else is recorded as evidence but decides nothing,
so the judge says ``unknown`` rather than guess. ``tune k/n`` reads: on the tuning half it
fired on n runs, k of which ended the way it points (``orf eval judge`` prints these figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..model import Step, Trajectory
from ..normalize import brief_command
from .judge_files import evaluation_beside

Outcome = Literal["success", "failure"]


@dataclass(frozen=True, slots=True)
class SignalRow:
    """One kind of signal: what it proves, what it may decide, how reliable it measured."""

    name: str
    """Stable name, written into verdicts (``Verdict.signal``)."""
    kind: str
    """``evaluation``, ``harness``, ``tests`` or ``claim``."""
    decides: frozenset[str]
    """Outcomes this signal earned the right to decide (empty: evidence only)."""
    confidence: float
    """Confidence of a verdict it decides."""
    proves: str
    """What the signal shows, in one line."""
    measured: str
    """Its measured reliability (``k/n`` on the tuning half) or why it needs none."""


BOTH = frozenset({"success", "failure"})
FAILURE = frozenset({"failure"})
NONE: frozenset[str] = frozenset()

SIGNALS: tuple[SignalRow, ...] = (
    SignalRow("eval_resolved", "evaluation", BOTH, 0.95,
              "the run's own evaluation (OpenHands test_result / resolved) in the log",
              "by definition: it is the benchmark's verdict"),
    SignalRow("eval_reward", "evaluation", BOTH, 0.9,
              "a verifier reward in the log (ATIF / Harbor); below 1 is failure",
              "by definition: it is the verifier's verdict"),
    SignalRow("eval_file", "evaluation", BOTH, 0.95,
              "a SWE-bench report.json, Multi-SWE-bench results.json or Harbor reward found "
              "beside the trajectory", "by definition: it is the benchmark's verdict"),
    SignalRow("no_submission", "harness", FAILURE, 0.95,
              "the harness recorded an empty or no submission (no patch to evaluate)",
              "by definition (SWE-bench counts an empty patch unresolved); tune 1/1"),
    SignalRow("harness_limit", "harness", FAILURE, 0.85,
              "the harness stopped the agent (cost, context, step or iteration limit, error)",
              "the agent did not finish; tune: did not fire"),
    SignalRow("harness_autosubmit", "harness", NONE, 0.0,
              "the harness stopped the agent at a limit and submitted its patch anyway",
              "tune 1/2: a forced stop can still carry a complete fix"),
    SignalRow("user_interrupt", "harness", NONE, 0.0,
              "the user interrupted the agent's last turn",
              "unmeasured: no labelled run; users also interrupt to redirect"),
    SignalRow("suite_failed", "tests", FAILURE, 0.8,
              "the project's test suite failed after the last edit",
              "tune 2/2"),
    SignalRow("suite_passed", "tests", NONE, 0.0,
              "the project's test suite passed after the last edit",
              "tune 1/4: the tests the agent chose pass, the benchmark's hidden ones often "
              "do not"),
    SignalRow("own_test", "tests", NONE, 0.0,
              "a test or script the agent wrote in this session passed or failed",
              "proves only what the agent chose to check; tune: did not fire"),
    SignalRow("harness_submitted", "harness", NONE, 0.0,
              "the agent submitted or finished normally",
              "tune 3/10: finishing is not succeeding"),
    SignalRow("claim_done", "claim", NONE, 0.0,
              "the agent declared the task complete", "tune 3/10: a claim, not evidence"),
    SignalRow("claim_not_done", "claim", NONE, 0.0,
              "the log says the task was not completed", "unmeasured: no labelled run"),
)
"""Signals, strongest first. The first one that decides its outcome gives the verdict."""

ROWS = {row.name: row for row in SIGNALS}
RANK = {row.name: i for i, row in enumerate(SIGNALS)}


@dataclass(frozen=True, slots=True)
class Signal:
    """One signal found in a run."""

    name: str
    """Its row in ``SIGNALS``."""
    outcome: Outcome
    """The outcome it points to."""
    detail: str
    """What was seen, in one line (quoted into reasons and prompts)."""
    step: int | None = None
    """Index of the step it comes from, when it comes from one."""
    source_id: str | None = None
    """That step's source id."""

    @property
    def row(self) -> SignalRow:
        """The table row of this signal."""
        return ROWS[self.name]

    @property
    def decides(self) -> bool:
        """True when this signal earned the right to decide its outcome."""
        return self.outcome in self.row.decides

    def as_dict(self) -> dict[str, object]:
        """The signal as written into ``orf.analysis/1`` (``verdict.signals``)."""
        return {"name": self.name, "outcome": self.outcome, "decides": self.decides,
                "detail": self.detail, "step": self.step, "source_id": self.source_id}


# ---- harness exit status ----

EXIT_KINDS: tuple[tuple[re.Pattern[str], str, Outcome], ...] = (
    # Order matters: an autosubmission names its limit too ("submitted (exit_cost)").
    (re.compile(r"submitted\s*\(", re.I), "harness_autosubmit", "failure"),
    (re.compile(r"abort|interrupt", re.I), "user_interrupt", "failure"),
    (re.compile(r"exit_|early_exit|limit|max(imum)?[ _-]?(iteration|step|turn)|context|cost|"
                r"timeout|error|crash|kill|format|stuck|forfeit", re.I), "harness_limit",
     "failure"),
    (re.compile(r"^(submitted|finished|completed|done|stop)$", re.I), "harness_submitted",
     "success"),
)
"""Exit status pattern -> signal. Unknown statuses are no signal."""


def _at_end(traj: Trajectory, name: str, outcome: Outcome, detail: str) -> Signal:
    """A harness signal, pointing at the step where the run ended."""
    last = traj.steps[-1] if traj.steps else None
    return Signal(name, outcome, detail, last.index if last else None,
                  last.source_id if last else None)


def exit_signal(traj: Trajectory) -> Signal | None:
    """The harness's exit status as a signal."""
    status = (traj.outcome.exit_status or "").strip()
    if not status:
        return None
    for pattern, name, outcome in EXIT_KINDS:
        if pattern.search(status):
            return _at_end(traj, name, outcome, f"exit status {status[:120]!r}")
    return None


def submission_signal(traj: Trajectory) -> Signal | None:
    """``no_submission`` when the harness recorded an empty or missing patch."""
    if traj.outcome.submitted_patch is False:
        status = traj.outcome.exit_status
        return _at_end(traj, "no_submission", "failure", "the harness recorded no patch"
                       + (f" (exit status {status[:80]!r})" if status else ""))
    return None


# ---- tests after the last edit ----

TEST_RUNNER = re.compile(
    r"(^|[\s;&|(/])(pytest|py\.test|tox|nox|nosetests|runtests(\.py)?|jest|vitest|mocha|rspec|"
    r"phpunit|ctest)(\s|$)|python[\d.]*\s+-m\s+(pytest|unittest)\b|\bmanage\.py\s+test\b|"
    r"\b(go|cargo|npm|yarn|pnpm|dotnet|mix|bun|deno)\s+(run\s+)?test\b|"
    r"\b(mvn|mvnw|gradle|gradlew)\b[^|;&\n]*\b(test|verify|check)\b|\bmake\s+(test|check)\b|"
    r"\bbin/test\b"
)
"""A command that runs a project's test runner (not a script named like a test)."""

QUOTED_TEXT = re.compile(
    r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?(?:\n\s*\2[ \t]*(?=\n|$)|\Z)|"
    r"(?:--body|--title|--message|--notes|-m)(?:\s+|=)(?:\"(?:[^\"\\]|\\.)*\"|'[^']*')", re.S)
"""A heredoc body or a message argument: text a command writes or sends, never runs."""


def runs_tests(command: str) -> bool:
    """True when ``command`` runs a test runner, outside the text it only writes or sends.

    ``gh pr create --body "... pytest passes"`` or ``cat <<EOF > plan.md`` naming pytest runs no
    test: counting them made a PR body or a plan file a passing suite.
    """
    return TEST_RUNNER.search(QUOTED_TEXT.sub(" ", command)) is not None


NOT_RUN = re.compile(
    r"command not found|No such file or directory|No module named '?(pytest|unittest)|"
    r"JAVA_HOME|Could not find or load main class|not recognized as an internal|"
    r"no tests ran|collected 0 items|ERROR: file or directory not found|Unable to access jarfile|"
    r"Could not resolve dependencies|not installed|Permission denied", re.I)
"""Output of a test command that never got to run the tests (environment, not code)."""

FAILED_OUT = re.compile(
    r"\b\d+ (failed|errors?)\b|^FAILED\b|FAILED \((failures|errors)=|BUILD FAILURE|"
    r"Tests run:.*(Failures|Errors): [1-9]|^FAIL\b|Tests?:\s+\d+ failed", re.I | re.M)
PASSED_OUT = re.compile(
    r"\b\d+ passed\b|^OK\b|BUILD SUCCESS|^ok\s|Tests?:\s+\d+ passed", re.I | re.M)

EDIT_IN_SHELL = re.compile(
    r"\.write_text\(|(?<!stdout)(?<!stderr)\.write\(|open\([^)]*['\"][wa]b?\+?['\"]|\bsed\s+(-\w+\s+)*-i|"
    r"\bperl\s+(-\w+\s+)*-\w*i|\bgit\s+apply\b|\bpatch\s+-p|\btee\s+\S")
"""A shell command that edits files the step classifier cannot name."""

SCRATCH = re.compile(r"(^|/)(tmp/|repro|reproduce|debug|scratch|check_|verify|test_fix|"
                     r"test_repro|test_issue)", re.I)
"""Paths of the agent's own throwaway scripts: editing them is not editing the project."""


def command_of(step: Step) -> str:
    """The shell command of a tool step ('' when it has none)."""
    args = step.args if isinstance(step.args, dict) else {}
    for key in ("command", "cmd", "commandline"):
        value = args.get(key)
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        if isinstance(value, str):
            return value
    return ""


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def names_file(command: str, name: str) -> bool:
    """True when ``command`` names the file ``name`` as a path (not inside a longer name)."""
    return bool(name) and re.search(rf"(^|[\s/'\"=]){re.escape(name)}($|[\s'\";:)|&])",
                                    command) is not None


def creates(command: str, path: str) -> bool:
    """True when a shell command writes ``path`` whole (redirection, tee, cp), not in place."""
    name = re.escape(_basename(path))
    return re.search(rf"(>|\btee\s+(-a\s+)?|\bcp\s+\S+\s+)\s*['\"]?[^\s'\"]*{name}\b",
                     command) is not None


def test_outcome(step: Step, failed: bool) -> Outcome | None:
    """Pass/fail of a test run read from its output first (exit codes hide behind ``|| true``).

    None when the tests never ran (missing runner, JDK, module): that is the environment.
    """
    text = step.output or ""
    if FAILED_OUT.search(text):
        return "failure"
    if NOT_RUN.search(text[:4000]) and not PASSED_OUT.search(text):
        return None
    if PASSED_OUT.search(text):
        return "success"
    if step.exit_code is None and not step.is_error and not text:
        return None  # no observation: unknown, not a pass
    return "failure" if failed else "success"


def test_signals(traj: Trajectory) -> list[Signal]:
    """The last project test-suite run after the last edit, and the last own-test run.

    An edit is a file write or edit (tool or shell) outside the agent's scratch scripts; a
    test-suite run is a test runner command that does not name a file the agent created in
    this session. Runs whose output shows the tests never started are skipped.
    """
    from ..detect.actions import analyze  # late: detect imports heavy tables

    created: set[str] = set()
    editors: set[str] = set()
    last_edit = -1
    suite: tuple[int, Outcome] | None = None
    own: tuple[int, Outcome] | None = None
    for step, info in zip(traj.steps, analyze(traj), strict=True):
        if step.kind != "tool":
            continue
        command = command_of(step)
        runs_created = any(names_file(command, _basename(p)) for p in created)
        runs_editor = any(names_file(command, name) for name in editors)
        for path in info.writes:
            if info.shell and not creates(command, path):
                continue  # edited in place (sed -i, perl -i): the project's own file
            if info.cls == "write" or info.shell:
                created.add(path)
                if info.shell and "<<" in command and EDIT_IN_SHELL.search(command):
                    editors.add(_basename(path))  # a script written to edit the project
        project_writes = [p for p in info.writes if not SCRATCH.search(p)]
        edits = (info.cls in ("edit", "write") and (project_writes or not info.writes)
                 ) or bool(project_writes) or runs_editor or (
            info.shell and EDIT_IN_SHELL.search(command) is not None)
        if edits and not info.failed:
            last_edit = step.index
            suite = None  # a suite run before this edit says nothing about the final code
        if not runs_tests(command):
            continue
        outcome = test_outcome(step, info.failed)
        if outcome is None:
            continue
        if runs_created:
            own = (step.index, outcome)
        elif step.index > last_edit:
            suite = (step.index, outcome)
    out: list[Signal] = []
    if suite is not None:
        step = traj.steps[suite[0]]
        word = "passed" if suite[1] == "success" else "failed"
        quoted = brief_command(command_of(step))
        out.append(Signal("suite_passed" if suite[1] == "success" else "suite_failed", suite[1],
                          f"test suite {word} after the last edit: {quoted!r}",
                          step.index, step.source_id))
    elif traj.outcome.tests_passed_at_end is not None:
        passed = traj.outcome.tests_passed_at_end
        out.append(Signal("suite_passed" if passed else "suite_failed",
                          "success" if passed else "failure",
                          f"the log says the tests {'passed' if passed else 'failed'} at the end"))
    if own is not None:
        step = traj.steps[own[0]]
        out.append(Signal("own_test", own[1], f"the agent's own script "
                          f"{'passed' if own[1] == 'success' else 'failed'}: "
                          f"{brief_command(command_of(step))!r}", step.index, step.source_id))
    return out


# ---- evaluation and claims ----


def evaluation_signals(traj: Trajectory) -> list[Signal]:
    """Evaluation results in the log, then beside it."""
    hints = traj.outcome
    out: list[Signal] = []
    if hints.resolved is not None:
        out.append(Signal("eval_resolved", "success" if hints.resolved else "failure",
                          f"the log's resolved flag is {hints.resolved}"))
    if hints.score is not None:
        out.append(Signal("eval_reward", "success" if hints.score >= 1.0 else "failure",
                          f"the log's reward is {hints.score}"))
    beside = evaluation_beside(traj)
    if beside is not None:
        resolved, where = beside
        out.append(Signal("eval_file", "success" if resolved else "failure",
                          f"{where} says resolved={resolved}"))
    return out


def claim_signals(traj: Trajectory) -> list[Signal]:
    """The agent's own claim of having finished (or not)."""
    done = traj.outcome.task_complete
    if done is True:
        return [Signal("claim_done", "success", "the agent declared the task complete")]
    if done is False:
        return [Signal("claim_not_done", "failure", "the log says the task was not completed")]
    return []


def collect_signals(traj: Trajectory) -> list[Signal]:
    """Every signal of ``traj``, strongest first (``SIGNALS`` order)."""
    found = [*evaluation_signals(traj)]
    for sig in (submission_signal(traj), exit_signal(traj)):
        if sig is not None:
            found.append(sig)
    found += test_signals(traj)
    found += claim_signals(traj)
    return sorted(found, key=lambda s: RANK[s.name])


def deciding(signals: list[Signal]) -> Signal | None:
    """The strongest signal that earned its outcome, or None."""
    return next((s for s in signals if s.decides), None)


__all__ = ["ROWS", "SIGNALS", "Signal", "SignalRow", "collect_signals", "deciding"]
