"""Building steps: every format turns its records into ``Step``s here, the same way.

A tool step gets its normalized tool, action key, bounded output, exit code and error
signature from ``tool_step``/``set_output``; messages, prompts and compactions are
``text_step``s. Detectors can then compare steps across formats.

Every step string passes through here, so this is where secrets go: each text is redacted
whole, with the session's secret memory (``ctx.secrets``), before it is truncated, quoted or
searched for its error line; ``common.clean_trajectory`` then replaces secrets learned late in
the texts built before them. Nothing downstream sees an unredacted string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import RawRef, Step, StepKind
from ..normalize import action_key, error_signature, truncate
from .base import ParseContext
from .fields import as_int, content_text, parse_args
from .tools import normalize_tool

TEXT_MAX_CHARS = 2000
"""Agent text accompanying a tool call is bounded to this many characters."""


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


def reindex(steps: list[Step]) -> list[Step]:
    """Renumber ``steps`` densely from 0 (after dedupe/rewind/insertion changed them)."""
    for i, step in enumerate(steps):
        step.index = i
    return steps
