"""Classify one step, once.

Which kind of call it is (shell, tool, ACI command, IPython cell, bare call), then the facts
of its output that every family shares: failed, clipped, withheld, fingerprint.
"""

from __future__ import annotations

import re

from ..model import Step
from . import shell
from .classify_shell import classify_shell
from .classify_tool import (
    EDITOR_COMMANDS,
    classify_aci,
    classify_bare,
    classify_code,
    classify_tool,
    raw_name,
)
from .info import END, Info
from .outputs import (
    ADAPTER_CUT,
    CANCELLED,
    CLIPPED,
    FAILED_OUTPUT,
    GUTTER,
    HEAD_LINES,
    PATCH_REFUSED,
    REDACTED,
    WITHHELD,
    body_of,
    codex_clipped,
    fingerprint,
)

_POLL_ARGS = frozenset({"session_id", "chars", "bash_id", "shell_id"})


def _to_end(step: Step, info: Info, body: str) -> bool:
    """A ranged read that printed fewer lines than it asked for reached the file's end."""
    if info.cls != "read" or info.rng is None or info.failed or info.clipped or (
            info.withheld or info.filtered) or step.output_len > len(step.output):
        return False
    lo, hi = info.rng
    if hi >= END or not body.strip():
        return False
    # One newline ends the last line; another before it is an empty last line of the range.
    text = body[:-1] if body.endswith("\n") else body
    return text.count("\n") + 1 < hi - lo + 1


# Looking at something that changes by itself or through other actions: the output file of a
# background job (`tail -30 x.output`), a log being written, a browser page after clicks.
_JOB_OUTPUT = re.compile(r"(\.output|\.log|nohup\.out)$")

_POLL_TOOLS = re.compile(r"browser_(snapshot|take_screenshot|screenshot|console_messages|"
                         r"network_requests|wait_for|tabs)|screenshot$")


def _polls(step: Step, info: Info) -> bool:
    """True for steps that watch a changing state rather than repeat an action."""
    if info.cls in ("read", "search") and info.paths and _JOB_OUTPUT.search(info.paths[0]):
        return True
    if info.cls in ("read", "search") and info.shell:
        segs = [g for g in shell.parse(info.command).segments if g.argv and not g.piped]
        if segs and any(_JOB_OUTPUT.search(a) for a in segs[-1].argv[1:]):
            return True
    return info.cls == "other" and _POLL_TOOLS.search(raw_name(step)) is not None


_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})


def _argv_command(argv: list[str]) -> str:
    """The command line of an argv-shaped call (Codex ``["bash", "-lc", "git status"]``).

    A shell wrapper's script is the command; joining the list would make every call a run
    of ``bash``.
    """
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc", "-cl", "-ic"):
        return argv[2]
    return " ".join(argv)


def classify(step: Step) -> Info:
    """Classify one step (without state tokens)."""
    if step.kind != "tool":
        return Info(cls="none", failed=step.is_error, out_fp=None)
    info = Info(cls="other", failed=bool(step.is_error or (step.exit_code or 0) != 0))
    args = step.args or {}
    command = args.get("command") if isinstance(args, dict) else None
    if isinstance(command, list):
        command = _argv_command([str(c) for c in command])
    if not isinstance(command, str):
        command = args.get("cmd") or args.get("commandline") or args.get("CommandLine")
    tool = (step.tool or "").lower()
    code = args.get("code") if isinstance(args, dict) else None
    if isinstance(code, str) and not isinstance(command, str):
        classify_code(code, step, info)
        return info
    if tool == "bash" and not isinstance(command, str) and _POLL_ARGS & set(args):
        # Codex ``write_stdin`` / Claude ``BashOutput``: talking to (or waiting on) a process
        # that is already running. Asking again is polling, not a repeat.
        info.cls = "poll"
        info.label = "<poll running process>"
        return info
    is_editor_cmd = isinstance(command, str) and command in EDITOR_COMMANDS and tool != "bash"
    if isinstance(command, str) and not is_editor_cmd and tool in ("bash", "shell", "run",
                                                                   "exec", "other", ""):
        if args.get("is_input") in (True, "true", "True"):
            info.cls = "poll"
            info.label = f"<input {command[:40]}>"
            return info
        classify_shell(command, info)
    elif not args and tool not in ("think", "finish"):
        classify_bare(tool, raw_name(step), info)
        if info.cls == "none":
            return info
    elif not (isinstance(command, str) and len(args) == 1 and tool not in ("bash", "shell")
              and classify_aci(command, step, info)):
        classify_tool(step, info)
    if _polls(step, info):
        info.cls = "poll"
    body = body_of(step.output)
    seen = GUTTER.sub("", body) if info.cls == "read" else body
    if info.cls == "read" and (cut := ADAPTER_CUT.search(seen)) is not None:
        # Our adapter kept head and tail of a long view by characters, and line numbers
        # move the cut: the same lines of the file are known by their first lines.
        seen = "\n".join(seen[:cut.start()].splitlines()[:-1][:HEAD_LINES])
    redacted = REDACTED.match(seen)
    if redacted:
        # A log redacted to hashes (`[REDACTED_OUTPUT len=113 sha=339fb0f3]`): the hash also
        # covers the harness's exec header (a new chunk id each call), the length does not,
        # so the length is what tells a same output from another.
        seen = f"redacted output of {redacted.group(1)} chars"
    info.out_fp = fingerprint(seen, info.cls not in ("read", "list", "search")
                               and not redacted)
    info.out_lines = body.count("\n") + 1 if body else 0
    if info.cls == "search" and step.exit_code == 1 and len(step.output.strip()) < 80:
        # grep/rg exit 1 when nothing matches: an answer ("not there"), not a failure.
        info.failed = False
    if CANCELLED.search(step.output[:300]):
        info.cls = "none"
    if FAILED_OUTPUT.match(step.output[:200]) or PATCH_REFUSED.match(body[:200]):
        info.failed = True
    if info.failed and info.shell and info.cls == "edit" and info.program == "apply_patch":
        info.writes = ()  # the patch tool refused it: its files stay as they were
    # Only the agent's own view counts: our adapter's truncation is not what the agent saw.
    info.clipped = bool(CLIPPED.search(step.output[-400:] + step.output[:400]))
    if codex_clipped(step, step.output[:80], body):
        # Codex shows the model the head and tail of a long output, not the middle.
        info.clipped = True
    info.withheld = bool(WITHHELD.match(step.output[:200]))
    info.to_end = _to_end(step, info, body)
    return info
