"""Helpers shared by the format adapters: tool names, exit codes, text and Step building.

Everything here is pure and cheap (it runs once per record during ingest). Adapters keep
their format-specific rules; only what two or more formats share lives here, so every
format builds its steps the same way (action key, bounded output, error signature) and
detectors can compare steps across formats.

Every step string passes through here, so this is where secrets go: each text is redacted
whole, with the session's secret memory (``ctx.secrets``), before it is truncated, quoted or
searched for its error line; ``clean_trajectory`` then replaces secrets learned late in the
texts built before them. Nothing downstream sees an unredacted string.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from ..errors import ParseFailure
from ..model import OutcomeHints, RawRef, SourceInfo, Step, StepKind, Trajectory
from ..normalize import action_key, error_signature, truncate
from ..privacy import SessionSecrets, redact
from .base import ParseContext
from .jsonio import ReadStats, load_json

TASK_MAX_CHARS = 2000
"""The task (first user request) is bounded to this many characters."""
TEXT_MAX_CHARS = 2000
"""Agent text accompanying a tool call is bounded to this many characters."""

# Raw tool names (lowercased) -> normalized names shared by every format. Unknown names map
# to "other" and keep their raw name in ``Step.extra["raw_tool"]`` and in the action key.
_TOOL_NAMES: dict[str, str] = {}
for _norm, _names in {
    "bash": (
        "bash", "shell", "sh", "cmd", "exec_command", "run_shell_command", "run_command",
        "shell_command", "local_shell", "local_shell_call", "execute_bash", "cmdrunaction",
        "terminal", "execute_command", "run", "command", "bashoutput", "write_stdin",
        "send_command_input", "exec",
    ),
    "read": (
        "read", "read_file", "view_file", "view", "readfile", "notebookread", "fileread",
        "read_many_files", "view_file_outline", "view_code_item", "open_file", "open", "cat",
        "goto", "scroll_up", "scroll_down",
    ),
    "edit": (
        "edit", "multiedit", "replace", "apply_patch", "edit_file", "str_replace",
        "str_replace_editor", "notebookedit", "replace_file_content",
        "multi_replace_file_content", "fileeditaction", "file_editor", "patch", "insert",
        "undo_edit",
    ),
    "write": (
        "write", "write_file", "writefile", "write_to_file", "create", "create_file",
        "filewriteaction",
    ),
    "grep": (
        "grep", "grep_search", "search_file_content", "search", "codebase_search", "rg",
        "ripgrep", "search_file", "search_dir", "search_code",
    ),
    # Name searches (``find``) are globs, not listings: detectors class both as searches.
    "glob": ("glob", "find_by_name", "find", "find_file", "file_search"),
    "ls": ("ls", "list_dir", "list_directory", "list_files", "tree"),
    "web": (
        "web", "webfetch", "websearch", "web_search", "web_fetch", "google_web_search",
        "search_web", "read_url_content", "browse", "browse_interactive", "browser",
        "web_search_call", "browseinteractiveaction", "fetch", "navigate", "curl_url",
    ),
    "task": ("task", "agent", "invoke_subagent", "spawn_agent", "delegate", "subagent"),
    "think": ("think", "reasoning", "thought"),
    "finish": ("finish", "submit", "task_complete", "complete", "exit", "done"),
}.items():
    for _n in _names:
        _TOOL_NAMES[_n] = _norm


# What turning one record into steps raises when a field has an unexpected type: a list
# where a string was expected (unhashable in a set lookup, no ``.strip``), a missing key...
# OverflowError covers numbers too large for a float or a timestamp, RecursionError one
# record nested deeper than a recursive helper can follow.
RECORD_ERRORS: tuple[type[Exception], ...] = (
    TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError,
)
"""Exceptions ``skip_record`` turns into a warning for one record."""
_REASON_MAX_CHARS = 160
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def skip_record(ctx: ParseContext, path: Path | str, line: int | None, what: str,
                exc: BaseException) -> None:
    """Report a record that could not be turned into steps; the caller skips it.

    Adapters wrap their per-record loop body in ``try: ... except RECORD_ERRORS as exc:
    skip_record(...)``: a try block costs nothing on CPython 3.11+ (next to nothing on 3.10)
    when nothing is raised, so the hot path keeps its speed, and one wrongly typed field loses
    one record instead of the whole session. ``ORF_RAISE_ERRORS`` re-raises, for debugging.

    Args:
        ctx: Parse context receiving the warning.
        path: The file the record is in.
        line: Its 1-based line (None for whole-file JSON documents).
        what: The record, as a user would find it (``record``, ``messages[3]``).
        exc: What was raised while reading it.
    """
    if os.environ.get("ORF_RAISE_ERRORS"):
        raise exc
    reason = f"{type(exc).__name__}: {exc}"
    if len(reason) > _REASON_MAX_CHARS:
        reason = reason[:_REASON_MAX_CHARS] + "..."
    ctx.warn(path, line, f"{what} has an unexpected shape ({reason}); skipped")


def as_str(value: Any) -> str | None:
    """``value`` when it is a string, else None (for ids, names and timestamps)."""
    return value if type(value) is str else None


def as_key(value: Any) -> str | None:
    """An id usable as a dict key: strings as they are, ints as text, anything else None.

    A list or an object where a call id is expected must neither crash a lookup
    (unhashable) nor pair unrelated records through a shared ``str()`` of it.
    """
    if type(value) is str:
        return value
    if type(value) is int:
        return str(value)
    return None


def normalize_tool(name: str | None) -> str:
    """Map a raw tool name to the shared vocabulary.

    Args:
        name: The tool name as the log spells it (``Bash``, ``exec_command``, ...).

    Returns:
        One of ``bash/read/edit/write/grep/glob/ls/web/task/think/finish``, or ``other``
        for tools with no common meaning (MCP tools, plans).
    """
    if not name or type(name) is not str:
        return "other"
    key = name.strip().lower()
    found = _TOOL_NAMES.get(key)
    if found is not None:
        return found
    # OpenHands V1 splits its browser into browser_navigate, browser_click, ...
    return "web" if key.startswith("browser") else "other"


# Exit-code phrasings, one per format family; the first match wins.
EXIT_CODE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^(?:Error: )?Exit code:? (-?\d+)", re.MULTILINE),  # Claude Code Bash
    re.compile(r"Process exited with code (-?\d+)"),  # Codex exec_command / write_stdin
    re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE),  # Gemini CLI run_shell_command
    re.compile(r"The command failed with exit code: (-?\d+)"),  # Antigravity run_command
    re.compile(r"<returncode>(-?\d+)</returncode>"),  # mini-swe-agent
    re.compile(r"\[Command finished with exit code (-?\d+)\]"),  # OpenHands
)


_ANY_EXIT = re.compile("|".join(f"(?:{p.pattern})" for p in EXIT_CODE_PATTERNS), re.MULTILINE)


def parse_exit_code(text: str | None) -> int | None:
    """Find an exit code stated in an observation text.

    Args:
        text: Observation text (may be None).

    Returns:
        The first exit code found by any known phrasing, or None.
    """
    if not text:
        return None
    # Exit statements sit near the head or the tail; scanning both bounds the cost on
    # multi-megabyte outputs.
    probe = text if len(text) <= 8192 else text[:4096] + "\n" + text[-4096:]
    # Substring checks are C-speed; the alternation below is not, and most outputs state no code.
    # (Spelled out rather than any(...) over a tuple: this runs once per observation.)
    if not ("xit code" in probe or "xit Code" in probe or "with code" in probe
            or "returncode>" in probe):
        return None
    # One pass with every phrasing; the group that matched holds the code.
    m = _ANY_EXIT.search(probe)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g is not None))


def content_text(content: Any) -> str:
    """Flatten message content (a string, or a list of text/content blocks) to text.

    Args:
        content: ``str``, a list of ``{"type": "text", "text": ...}``-like blocks, or a dict.

    Returns:
        The text parts joined by newlines; non-text blocks are skipped.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif isinstance(block.get("content"), (str, list)):
                    parts.append(content_text(block.get("content")))
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
        return content_text(content.get("content"))
    return str(content)


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict (for tolerant field access)."""
    return value if isinstance(value, dict) else {}


def parse_args(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: JSON strings are decoded, other values wrapped.

    Args:
        value: The arguments as logged (dict, JSON string, plain string, None).

    Returns:
        A dict; a non-JSON string becomes ``{"input": value}``.
    """
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        s = value.lstrip()
        if s.startswith(("{", "[")):
            try:
                decoded = orjson.loads(value)
            except orjson.JSONDecodeError:
                return {"input": value}
            return decoded if isinstance(decoded, dict) else {"input": decoded}
        return {"input": value}
    return {"input": value}


def as_int(value: Any) -> int | None:
    """``value`` as an int when it is one, a whole float or a numeric string, else None.

    Bools, NaN, infinities and fractions are not counts or exit codes: they give None, so
    callers can tell "not logged" from zero. So do values outside the signed 64-bit range
    (orjson reads ``1e20`` as a float), which JSON output and SQLite could not store.
    """
    # type() is exact, so bools (an int subclass) fall through to the None below.
    if type(value) is int:
        out = value
    elif isinstance(value, bool):
        return None
    elif isinstance(value, int):
        out = int(value)
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        out = int(value)
    elif isinstance(value, str):
        s = value.strip()
        if not s.lstrip("-").isdigit() or len(s) > 20:
            return None
        out = int(s)
    else:
        return None
    return out if _INT64_MIN <= out <= _INT64_MAX else None


def as_count(value: Any) -> int:
    """A token count to add up: ``as_int(value)``, with anything unreadable counting 0."""
    # Plain ints are nearly every count (several per record): skip the call to as_int.
    if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return as_int(value) or 0


def bounded(text: str | None, limit: int = TASK_MAX_CHARS, *,
            redacted: bool = False) -> str | None:
    """Strip, redact and truncate ``text`` head+tail to ``limit`` characters (blank gives None).

    Redaction comes before the cut, so no half of a secret survives it; the session's memory
    is applied to the result by ``clean_trajectory``.

    Args:
        text: Raw text from the log, or text already redacted whole.
        limit: Characters kept (head and tail).
        redacted: True when ``text`` was already redacted whole (the text of a
            ``text_step_and_text`` step): it is not scanned again.

    Returns:
        The bounded text, or None when ``text`` is blank or not a string.
    """
    if type(text) is not str:
        return None
    s = text.strip()
    if not s:
        return None
    return truncate(s if redacted else redact(s), limit)


def epoch_to_iso(value: Any) -> str | None:
    """ISO-8601 (UTC) for an epoch in seconds, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


@dataclass
class StepLog:
    """The steps of one session being built while its records stream by.

    Adapters subclass it with their own pairing state; ``add`` keeps indices dense.
    """

    path: Path
    steps: list[Step] = field(default_factory=list)
    where: str = field(default="", init=False)
    """``str(path)``, made once: every record's RawRef names the file."""

    def __post_init__(self) -> None:
        self.where = str(self.path)

    def add(self, step: Step) -> Step:
        """Append ``step`` as the next one."""
        step.index = len(self.steps)
        self.steps.append(step)
        return step


def tool_step(
    index: int,
    source_id: str,
    raw_tool: str | None,
    args: dict[str, Any],
    output: str,
    ctx: ParseContext,
    *,
    exit_code: int | None = None,
    is_error: bool | None = None,
    tokens: int | None = None,
    timestamp: str | None = None,
    raw_ref: RawRef | None = None,
    text: str = "",
    extra: dict[str, Any] | None = None,
    tool: str | None = None,
    signature_text: str | None = None,
) -> Step:
    """Build a ``kind="tool"`` Step with the normalized fields filled in.

    Adapters that only learn the observation later build the step with ``output=""`` and
    fill it with ``set_output`` (the action key is not computed twice).

    Args:
        index: Dense position in the trajectory.
        source_id: The log's id for the call (call id, uuid) or its position.
        raw_tool: Tool name as logged; normalized with ``normalize_tool`` unless ``tool``.
        args: Decoded arguments.
        output: Full observation text; truncated head+tail to ``ctx.output_max_chars``.
        ctx: Parse context (truncation bound).
        exit_code: Exit status when known.
        is_error: Failure flag; defaults to ``exit_code not in (None, 0)``.
        tokens: Tokens of the model turn that produced this call.
        timestamp: ISO timestamp.
        raw_ref: File and line of the call record.
        text: Agent text that accompanied the call (bounded here).
        extra: Unmapped source fields to keep.
        tool: Normalized tool name, when the adapter knows better than the raw name.
        signature_text: Text to take the error signature from, when the output carries
            boilerplate that would match first (Gemini's ``Error: (none)`` trailer).

    Returns:
        The Step.
    """
    # A log's field of the wrong type is dropped here, once for every format, rather than
    # letting a list reach a detector that expects a timestamp or a name.
    if raw_tool is not None and type(raw_tool) is not str:
        raw_tool = None
    if timestamp is not None and type(timestamp) is not str:
        timestamp = None
    if tokens is not None and type(tokens) is not int:
        tokens = as_int(tokens)
    if type(args) is not dict:
        args = parse_args(args)
    if type(text) is not str:
        text = content_text(text)
    if type(source_id) is not str:
        source_id = str(source_id)
    secrets = ctx.secrets
    if text:  # one hint pass for the arguments and the text
        args, text = secrets.redact_values([args, text])
    else:
        args = secrets.redact_value(args)
    norm = tool or normalize_tool(raw_tool)
    extra = dict(extra) if extra else {}
    if raw_tool is not None:
        extra.setdefault("raw_tool", raw_tool)
    # "other" alone would make every MCP tool look the same; keep the raw name in the key.
    key_tool = norm if norm != "other" or not raw_tool else f"other:{raw_tool}"
    step = Step(
        index=index,
        source_id=source_id,
        kind="tool",
        tool=norm,
        args=args,
        action_key=action_key(key_tool, args),
        tokens=tokens,
        timestamp=timestamp,
        raw_ref=raw_ref,
        text=truncate(text, TEXT_MAX_CHARS) if text else "",
        extra=extra,
    )
    if output or exit_code is not None or is_error:
        # Most adapters learn the observation later (``set_output``); an empty one with no
        # status is what the Step defaults already say.
        set_output(step, output, ctx, exit_code=exit_code, is_error=is_error,
                   signature_text=signature_text)
    return step


def set_output(
    step: Step,
    output: str,
    ctx: ParseContext,
    *,
    exit_code: int | None = None,
    is_error: bool | None = None,
    signature_text: str | None = None,
) -> None:
    """Attach an observation to a tool ``step``: bounded output, exit code, error fields.

    Args:
        step: The step built by ``tool_step`` (changed in place).
        output: Full observation text; truncated head+tail to ``ctx.output_max_chars``.
        ctx: Parse context (truncation bound).
        exit_code: Exit status when known.
        is_error: Failure flag; defaults to ``exit_code not in (None, 0)``.
        signature_text: Text to take the error signature from instead of ``output``.
    """
    if type(output) is not str:
        output = content_text(output)
    if exit_code is not None and type(exit_code) is not int:
        exit_code = as_int(exit_code)
    failed = bool(exit_code) if is_error is None else bool(is_error)
    size = len(output)
    # Redacted whole, before the cut and the error line: a cut key loses its prefix.
    output = ctx.secrets.redact(output)
    if signature_text is not None:
        signature_text = ctx.secrets.redact(signature_text)
    limit = ctx.output_max_chars
    step.output = output if size <= limit else truncate(output, limit)
    step.output_len = size
    step.exit_code = exit_code
    step.is_error = failed
    # The signature is only worth computing for failures: it is the costly part. A failure
    # with no telling error line still groups by its exit code.
    signature = None
    if failed:
        signature = error_signature(output if signature_text is None else signature_text,
                                    redacted=True)
        if signature is None and exit_code is not None:
            signature = f"exit code {exit_code}"
    step.error_signature = signature


def text_step(
    index: int,
    source_id: str,
    kind: StepKind,
    text: str,
    ctx: ParseContext,
    *,
    tokens: int | None = None,
    timestamp: str | None = None,
    raw_ref: RawRef | None = None,
    extra: dict[str, Any] | None = None,
    is_error: bool = False,
) -> Step:
    """Build a non-tool Step (message, user, system, compaction, error, reasoning).

    The text goes into ``output`` (truncated) so reports and detectors read one field.
    """
    return text_step_and_text(index, source_id, kind, text, ctx, tokens=tokens,
                              timestamp=timestamp, raw_ref=raw_ref, extra=extra,
                              is_error=is_error)[0]


def text_step_and_text(
    index: int,
    source_id: str,
    kind: StepKind,
    text: str,
    ctx: ParseContext,
    *,
    tokens: int | None = None,
    timestamp: str | None = None,
    raw_ref: RawRef | None = None,
    extra: dict[str, Any] | None = None,
    is_error: bool = False,
) -> tuple[Step, str]:
    """``text_step``, and the whole redacted text the step was cut from.

    An adapter that keeps a second, shorter copy of the text (Codex's final message) bounds
    that with ``bounded(clean, redacted=True)`` rather than scanning the raw text again.
    """
    if type(text) is not str:
        text = content_text(text)
    if timestamp is not None and type(timestamp) is not str:
        timestamp = None
    if tokens is not None and type(tokens) is not int:
        tokens = as_int(tokens)
    if type(source_id) is not str:
        source_id = str(source_id)
    size = len(text)
    text = ctx.secrets.redact(text)
    return Step(
        index=index,
        source_id=source_id,
        kind=kind,
        output=truncate(text, ctx.output_max_chars),
        output_len=size,
        is_error=is_error,
        error_signature=error_signature(text, redacted=True) if is_error else None,
        tokens=tokens,
        timestamp=timestamp,
        raw_ref=raw_ref,
        extra=extra or {},
    ), text


def source_info(fmt: str, path: Path, stats: ReadStats) -> SourceInfo:
    """``SourceInfo`` for a file (or folder) read with ``stats``."""
    return SourceInfo(format=fmt, path=str(path), content_hash=stats.content_hash,
                      size=stats.size)


def most_common(counter: Counter[str]) -> str | None:
    """The most frequent key of ``counter``, the first seen on ties (None when empty)."""
    if not counter:
        return None
    return counter.most_common(1)[0][0]


def reindex(steps: list[Step]) -> list[Step]:
    """Renumber ``steps`` densely from 0 (after dedupe/rewind/insertion changed them)."""
    for i, step in enumerate(steps):
        step.index = i
    return steps


def _opt_bool(value: Any) -> bool | None:
    return value if type(value) is bool else None


def clean_trajectory(traj: Trajectory, secrets: SessionSecrets | None = None) -> Trajectory:
    """Drop session-level values of the wrong type, and finish the session's redaction.

    Adapters read ids, model names and timestamps straight from the log; a log that holds a
    list or a number there must not crash reports, the ledger or detectors. Such values
    become None (the id falls back to the file name). Steps are checked as they are built
    (``tool_step``/``text_step``); this runs once per trajectory, sub-agents included.

    Args:
        traj: A trajectory fresh from an adapter (changed in place).
        secrets: The memory its steps were redacted with: the session-level texts (task,
            final message, extras) are redacted with it, and secrets it learned after a step
            was built are replaced in that step too. None: a fresh memory.

    Returns:
        The same trajectory.
    """
    if type(traj.id) is not str or not traj.id:
        traj.id = as_key(traj.id) or Path(traj.source.path).stem or "session"
    traj.agent = as_str(traj.agent)
    traj.agent_version = as_str(traj.agent_version)
    traj.model = as_str(traj.model)
    traj.task = as_str(traj.task)
    traj.started_at = as_str(traj.started_at)
    traj.parent_session_id = as_str(traj.parent_session_id)
    # Sums of absurd per-turn counts can leave the 64-bit range that JSON output allows.
    traj.tokens_in = as_int(traj.tokens_in)
    traj.tokens_out = as_int(traj.tokens_out)
    out = traj.outcome
    if not isinstance(out, OutcomeHints):
        out = traj.outcome = OutcomeHints()
    out.exit_status = as_str(out.exit_status)
    out.final_message = as_str(out.final_message)
    out.task_complete = _opt_bool(out.task_complete)
    out.resolved = _opt_bool(out.resolved)
    out.tests_passed_at_end = _opt_bool(out.tests_passed_at_end)
    if out.score is not None and (isinstance(out.score, bool)
                                  or not isinstance(out.score, (int, float))):
        out.score = None
    if not isinstance(traj.extra, dict):
        traj.extra = {}
    _finish_redaction(traj, SessionSecrets() if secrets is None else secrets)
    for sub in traj.subagents:
        clean_trajectory(sub, secrets)
    return traj


def _finish_redaction(traj: Trajectory, secrets: SessionSecrets) -> None:
    """Redact what no step builder saw, then apply secrets learned late to every step."""
    if traj.task:
        traj.task = secrets.redact(traj.task)
    out = traj.outcome
    if out.final_message:
        out.final_message = secrets.redact(out.final_message)
    if traj.extra:
        traj.extra = secrets.redact_value(traj.extra)
    with_extra = [step for step in traj.steps if step.extra]
    for step, extra in zip(with_extra, secrets.redact_values([s.extra for s in with_extra]),
                           strict=True):
        step.extra = extra
    if not len(secrets):
        return
    for step in traj.steps:
        output = secrets.apply(step.output)
        if output is not step.output:
            step.output = output
            if step.error_signature is not None and step.is_error:
                # The signature was taken from text that still held the late-learned secret.
                step.error_signature = (error_signature(output, redacted=True)
                                        or step.error_signature)
        step.text = secrets.apply(step.text)
        step.args = secrets.apply_value(step.args)
        step.action_key = secrets.apply(step.action_key)
        if step.error_signature:
            step.error_signature = secrets.apply(step.error_signature)


def opens_object(head: bytes) -> bool:
    """True when a file's first bytes start a JSON object that may be the whole file.

    A first line ending an object, followed by a line opening another, is JSON Lines: one
    document cannot go on past its closing brace. Saying so here spares the sniffers of
    whole-file formats their searches through the 64 KiB heads of every JSONL log.
    """
    s = head.lstrip()
    if s[:1] != b"{":
        return False
    nl = s.find(b"\n")
    if nl < 0:
        return True
    return not (s[max(0, nl - 8):nl].rstrip().endswith(b"}") and s[nl + 1:nl + 2] == b"{")


def load_document(path: Path, ctx: ParseContext, stats: ReadStats, list_key: str,
                  what: str) -> dict[str, Any]:
    """Load a whole-file JSON object that must hold a list under ``list_key``.

    Args:
        path: The file.
        ctx: Parse context (warnings of the reader).
        stats: Receives the size and content hash.
        list_key: The key whose list holds the steps (``trajectory``, ``messages``...).
        what: The format's name for the error message (``a SWE-agent trajectory``).

    Returns:
        The decoded object.

    Raises:
        ParseFailure: The file is unreadable JSON, or not such an object.
    """
    data = load_json(path, ctx, stats)
    if not isinstance(data, dict) or not isinstance(data.get(list_key), list):
        raise ParseFailure(f"{path}: not {what} (no '{list_key}' list)")
    return data
