"""Session-level helpers: the task and final message bounded, and the trajectory's last pass.

The last pass (``clean_trajectory``) checks the session's field types and finishes its
redaction; ``most_common`` picks the session's model. The helpers for one record live in
``fields.py`` (reading a field), ``records.py`` (reading a file's records), ``steps.py``
(building steps, where each text is redacted) and ``tools.py`` (tool names, exit codes).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..model import OutcomeHints, Trajectory
from ..normalize import error_signature, truncate
from ..privacy import SessionSecrets, redact
from .fields import as_int, as_key, as_str

TASK_MAX_CHARS = 2000
"""The task (first user request) is bounded to this many characters."""


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


def most_common(counter: Counter[str]) -> str | None:
    """The most frequent key of ``counter``, the first seen on ties (None when empty)."""
    if not counter:
        return None
    return counter.most_common(1)[0][0]


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
