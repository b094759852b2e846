"""Core records shared by every stage: Trajectory, Step, Finding, Verdict, Draft.

Trajectories, steps and findings are plain dataclasses (slots) because ingest builds millions
of them; verdicts and drafts are pydantic models because they cross the LLM boundary and are
validated against a JSON schema.

Changing the meaning or the name of a field that appears in `orf.analysis/1` output means
bumping ``ANALYSIS_SCHEMA`` (see ``pipeline/report/json_out.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from .provenance import Provenance

StepKind = Literal["tool", "message", "user", "system", "compaction", "error", "reasoning"]
"""What a step is: an agent tool call (with its observation), an agent message without a tool
call, a user turn, a system event, a context compaction/condensation, a logged error, or a
bare reasoning block."""


@dataclass(slots=True)
class RawRef:
    """Where a step came from in the source log."""

    path: str
    """File the record was read from."""
    line: int | None = None
    """1-based line number for line-oriented logs; None for whole-file JSON."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(slots=True)
class Step:
    """One agent action with its observation, or one message without a tool call."""

    index: int
    """Position in the trajectory, 0-based, dense."""
    source_id: str
    """The log's own id for the step (uuid, call id, step_id), or its position as a string."""
    kind: StepKind
    """What kind of step this is (see ``StepKind``)."""
    tool: str | None = None
    """Normalized tool name for tool steps (``bash``, ``read``, ``edit``, ``write``, ...)."""
    args: dict[str, Any] = field(default_factory=dict)
    """Tool arguments as the log gave them (parsed from JSON strings when needed)."""
    action_key: str = ""
    """Canonical form of the action for comparison: tool + args, sorted keys, volatile parts
    removed (see ``pipeline.normalize.action_key``)."""
    output: str = ""
    """Observation text (or message text for message steps), truncated head+tail."""
    output_len: int = 0
    """Length of the original observation before truncation."""
    exit_code: int | None = None
    """Exit status of a command when the log records it (or it is parsed from the text)."""
    is_error: bool = False
    """True when the log marks the step as failed (non-zero exit, error observation, ...)."""
    error_signature: str | None = None
    """Normalized error line (numbers, hex, temp paths, quoted literals masked), for matching
    the same failure across retries and sessions."""
    tokens: int | None = None
    """Tokens attributed to this step (input+output of the model turn that produced it), when
    the log has them."""
    timestamp: str | None = None
    """ISO-8601 timestamp when the log has one."""
    raw_ref: RawRef | None = None
    """File and line of the record the step was built from."""
    text: str = ""
    """Agent text that accompanied the action (thought/message), bounded."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields the adapter did not map, kept so a later detector can use them."""


@dataclass(slots=True)
class SourceInfo:
    """The log a trajectory was read from."""

    format: str
    """Adapter name (``claude-code``, ``codex``, ...)."""
    path: str
    """The session's file, or its folder for folder-shaped sessions."""
    content_hash: str = ""
    """Hash of the bytes read (``b2:...``), for incremental runs."""
    size: int = 0
    """Bytes read."""


@dataclass(slots=True)
class OutcomeHints:
    """What the log itself says about how the run ended; None when it does not say."""

    exit_status: str | None = None
    """Agent's exit status (SWE-agent ``info.exit_status``, Codex ``turn_aborted``, ...)."""
    task_complete: bool | None = None
    """True when the agent declared the task complete (finish action, task_complete event)."""
    resolved: bool | None = None
    """Benchmark verdict when the log carries one (SWE-bench ``resolved``, test_result)."""
    score: float | None = None
    """Numeric score when the log carries one (0..1)."""
    final_message: str | None = None
    """The agent's last message, bounded."""
    tests_passed_at_end: bool | None = None
    """True/False when the last test-like command in the log passed/failed."""
    submitted_patch: bool | None = None
    """False when the harness recorded an empty or no submission (SWE-agent / mini-swe-agent
    ``info.submission``): an empty patch cannot resolve anything; True when it has one."""


@dataclass(slots=True)
class ParseIssue:
    """A problem met while reading a log: reported as ``path:line: message``."""

    path: str
    """File the problem is in."""
    line: int | None
    """1-based line, when known."""
    message: str
    """What is wrong, in one line."""
    fatal: bool = False
    """True when the whole file was skipped."""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


@dataclass(slots=True)
class Trajectory:
    """One agent session, normalized."""

    id: str
    """Stable id: the log's session id when it has one, else derived from path and hash."""
    source: SourceInfo
    """Where it came from."""
    agent: str | None = None
    """Agent name (``claude-code``, ``codex``, ``openhands``, ...)."""
    agent_version: str | None = None
    """Agent version when known."""
    model: str | None = None
    """Model name when known (the most used one if several)."""
    task: str | None = None
    """The first user request, bounded."""
    steps: list[Step] = field(default_factory=list)
    """Ordered steps."""
    outcome: OutcomeHints = field(default_factory=OutcomeHints)
    """Outcome signals found in the log."""
    tokens_in: int | None = None
    """Total input tokens (None when the log does not say)."""
    tokens_out: int | None = None
    """Total output tokens (None when the log does not say)."""
    subagents: list[Trajectory] = field(default_factory=list)
    """Sub-agent trajectories (Claude sidechains, Antigravity subagents)."""
    parent_session_id: str | None = None
    """Set on sub-agent trajectories: the parent session's id."""
    started_at: str | None = None
    """ISO timestamp of the first record, when known."""
    issues: list[ParseIssue] = field(default_factory=list)
    """Non-fatal problems met while parsing this session."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Session-level source fields not mapped above (cwd, git branch, ...)."""
    analysis: Any = field(default=None, repr=False, compare=False)
    """The detector's step analysis, kept by ``detect.actions.analyze`` so the judge, the
    drafter and the report reuse what the scan computed (it crosses the process pool)."""

    @property
    def tool_calls(self) -> int:
        """Number of tool steps."""
        return sum(1 for s in self.steps if s.kind == "tool")

    @property
    def failed_calls(self) -> int:
        """Number of tool steps marked as failed."""
        return sum(1 for s in self.steps if s.kind == "tool" and s.is_error)


@dataclass(slots=True)
class Evidence:
    """A short quote backing a finding."""

    step: int
    """Step index."""
    source_id: str
    """The step's source id."""
    quote: str
    """A short excerpt (bounded, single line where possible)."""
    raw_ref: str | None = None
    """``path:line`` of the record quoted."""


@dataclass(slots=True)
class Resolution:
    """The first step after a loop that changed the outcome."""

    step: int
    """Step index of the resolving action."""
    source_id: str
    """Its source id."""
    change: str
    """What changed (e.g. ``command changed: pytest -x -> pytest -x -p no:cacheprovider``)."""
    action: str = ""
    """The resolving action, bounded (used as the validated path)."""


@dataclass(slots=True)
class Finding:
    """One wasted-step pattern found in a trajectory."""

    kind: str
    """Detector family (``exact_repeat``, ``cycle``, ``retry_variation``, ...)."""
    steps: list[int]
    """Indices of all steps in the pattern, ascending."""
    source_ids: list[str]
    """Source ids of those steps."""
    wasted_source_ids: list[str]
    """Source ids of the steps judged wasted (the repeats after the first attempt)."""
    wasted_steps: int
    """len(wasted_source_ids)."""
    signature: str
    """Stable across sessions: same trap, same signature (``b2:...``)."""
    wasted_tokens: int | None = None
    """Tokens spent on the wasted steps when the log has tokens."""
    wasted_seconds: float | None = None
    """Wall time spent on the wasted steps when timestamps allow."""
    evidence: list[Evidence] = field(default_factory=list)
    """Short quotes with raw refs."""
    resolution: Resolution | None = None
    """What broke the loop, when something did."""
    confidence: float = 1.0
    """0..1, how sure the detector is that this is waste."""
    severity: Literal["info", "warn", "high"] = "warn"
    """Graded from the loop thresholds (a single repeat is ``info``)."""
    summary: str = ""
    """One line for humans: ``pytest -x failed 4x with ImportError: ...``."""
    error_signature: str | None = None
    """The shared error signature for error-driven loops."""


# ---- LLM-facing records (pydantic: validated against a JSON schema) ----


class Verdict(BaseModel):
    """How a run ended, with the reason and who decided."""

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["success", "failure", "unknown"]
    """success / failure / unknown."""
    reason: str = ""
    """Why, in one or two sentences, citing the signal used."""
    decided_by: str = "heuristic"
    """``log`` (the log's own outcome), ``heuristic`` or ``gemini:<model>``."""
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    """0..1."""
    unscored_reason: str | None = None
    """Set when the judge could not score (e.g. ``grade_parse_failure``); outcome is then
    ``unknown`` and must not be read as a verdict."""
    signal: str | None = None
    """The outcome signal that decided (a row of ``pipeline.stages.judge_signals.SIGNALS``);
    None when no signal earned a verdict."""
    evidence_step: str | None = None
    """Source id of the step that signal comes from, when it comes from one."""
    signals: list[dict[str, Any]] = Field(default_factory=list)
    """Every outcome signal seen, strongest first: ``name``, ``outcome``, ``decides``,
    ``detail``, ``step``, ``source_id``."""


class Draft(BaseModel):
    """A candidate ORF playbook, before it becomes an EXP file."""

    # validate_assignment: a provenance mapping assigned later is read into a Provenance too.
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    title: str
    """Short imperative title."""
    description: str
    """The situation that should trigger this playbook (not the solution), <= 1024 chars."""
    domain: str
    """Category slug from the index, or a proposed new slug."""
    keywords: list[str]
    """3-8 lowercase keywords."""
    complexity: Literal["low", "medium", "high"]
    """How hard the situation is."""
    objective: str
    """Section 1."""
    trap: str
    """Section 2: what went wrong, with the error signature."""
    insight: str
    """Section 3 body after ``> **Core Principle:**`` (no task-specific literals)."""
    validated_path: str
    """Section 4: concrete commands/steps that worked."""
    checklist: list[str]
    """Section 5: checkable items (rendered as ``- [ ]``)."""
    domain_title: str | None = None
    """Human name for a new domain."""
    domain_description: str | None = None
    """Description for a new domain."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Sessions, steps, signature, verdict, backend/model; not part of the LLM schema. Given
    (and dumped) as the mapping EXP files carry."""

    @field_validator("provenance", mode="before")
    @classmethod
    def _read_provenance(cls, value: Any) -> Provenance:
        return Provenance.read(value)

    @field_serializer("provenance")
    def _wire_provenance(self, value: Provenance) -> dict[str, Any]:
        return value.wire()


class FixDelta(BaseModel):
    """What changed between the last failing attempt and the step that worked."""

    model_config = ConfigDict(extra="forbid")

    inserted: list[str] = Field(default_factory=list)
    """State-changing steps run in between (an install, a ``cd``, a config edit), in order."""
    kinds: list[str] = Field(default_factory=list)
    """Delta kinds present: ``install``, ``cwd``, ``config``, ``create``, ``lock``, ``flag``,
    ``edit_target``, ``reread``, ``rewrite``, ``ask``."""
    removed: list[str] = Field(default_factory=list)
    """Argument tokens of the failing command that the working one dropped."""
    added: list[str] = Field(default_factory=list)
    """Argument tokens the working command added."""
    edit_tried: str | None = None
    """Failed edits: the line of the replaced text that the file did not hold."""
    edit_found: str | None = None
    """Failed edits: the closest line the file held instead (from the last read of it)."""
    edit_note: str | None = None
    """Failed edits: the difference in words (``old text carries a line-number gutter``)."""
    edit_attempt: int | None = None
    """Failed edits: which failing attempt (1-based) ``edit_tried`` comes from."""
    edit_before: str | None = None
    """The fix's edit: the text it replaced (one line, shortened with ``…``), when shown."""
    edit_after: str | None = None
    """The fix's edit: the text it put in (one line, shortened with ``…``)."""

    def empty(self) -> bool:
        """True when nothing is known to have changed."""
        return not (self.inserted or self.removed or self.added or self.edit_note
                    or self.edit_found)


class Lesson(BaseModel):
    """What one finding teaches, extracted once from the log and used by both backends."""

    model_config = ConfigDict(extra="forbid")

    error_class: str
    """Class id from ``pipeline.lessons.tables.ERROR_CLASSES`` (``missing_program``, ...)."""
    class_label: str
    """Readable name of the class."""
    harness: bool = False
    """True for tool-usage errors of the agent harness (the same trap for every task)."""
    agent: str | None = None
    """Agent whose harness produced the error."""
    symptom: str
    """The first real error message, boilerplate and wrappers stripped, repo-relative paths."""
    symptom_line: str
    """Its most telling single line (the one a reader would search for)."""
    tool: str = ""
    """Tool of the failing step (``bash``, ``edit``, ``write``)."""
    program: str = ""
    """Program of a failing shell command, or the tool name."""
    target: str = ""
    """What the loop acted on: a repo-relative file, or the program."""
    failing_action: str = ""
    """The last failing attempt, as a user would type it (repo-relative, bounded)."""
    attempts: int = 1
    """Failing attempts in the loop."""
    cause: str = ""
    """A known cause the symptom proves (``pipeline.lessons.tables.CAUSE_HINTS``), or ""."""
    fix: FixDelta = Field(default_factory=FixDelta)
    """What changed before the attempt that worked."""
    resolving_action: str = ""
    """The step that worked (acts on the same target, or is explained by ``fix.inserted``)."""
    resolving_step: int | None = None
    """Its step index."""
    between: list[str] = Field(default_factory=list)
    """Actions between the last failure and the success, in order (bounded)."""
    verify: str = ""
    """The command that now passes (the resolving one when it is a command)."""
    wasted_steps: int = 0
    """Steps wasted on the loop."""
    wasted_tokens: int | None = None
    """Tokens spent on them, when the log has tokens."""
    wasted_seconds: float | None = None
    """Seconds spent on them, when timestamps allow."""
    outcome: str = "unknown"
    """How the run ended (``success``/``failure``/``unknown``)."""
    signature: str = ""
    """Same lesson, same signature: class + target (harness traps: class + agent)."""
    sequence: list[tuple[str, str]] = Field(default_factory=list)
    """(action, its own error line) of each failing attempt of the lesson, in order."""
    tried: list[str] = Field(default_factory=list)
    """Steps inside the loop that did not help (the next attempt failed the same way)."""
    mechanism: str = ""
    """Key of ``pipeline.lessons.tables.MECHANISMS``: what this case's cause is."""
    facts: dict[str, str] = Field(default_factory=dict)
    """Values the mechanism's sentences name (``module``, ``bin``, ``tried_indent``, ...)."""
    purpose: str = ""
    """What the agent was doing: the failing step's own description, else the task's line."""
    reason: str = ""
    """The agent's own stated reason for the fix, its words (not a proven cause), or ""."""
    probe: str = ""
    """A diagnostic step on the fix's target between the failures and the fix, or ""."""
    probe_output: str = ""
    """Its output, an error or empty (the log's proof of the cause)."""
    next_error: str = ""
    """The step that worked failed with another error (the loop's error gone): its line."""
