"""Failed edits of a file retried through the shell, whatever the mechanism of each attempt.

Agents that edit through a shell (a patch script, ``sed -i``, ``perl -pi``, ``awk > tmp && mv``,
``git apply``) often retry a change that did not apply with another tool: a perl one-liner that
the shell could not parse, then a Python patch script that crashed reading the file, then one
that applies. People call every attempt after the first missed one a retry of the same edit,
and wasted: the file is as it was, so the attempt before taught nothing but that the mechanism
failed. The exemption is an attempt that applied: the next edit of the file is the next change.

Whether an attempt applied is read from the mechanics, not from its text: a shell that rejected
the command ran nothing; a Python script rejected by its parser, or whose traceback stops
before the line that writes, wrote nothing; a script that says a replacement or pattern was not
found left that change undone; any other edit program that failed wrote nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .effects import script_rejected, shell_rejected
from .info import Info, path_ext
from .unran import other_program

RETRY_WINDOW = 40
"""Steps after a missed attempt within which the next one is its retry (keeps the scan linear)."""

_EDIT_CLASSES = frozenset({"write", "edit", "run", "other", "vcs"})
_PLAIN_PATH = re.compile(r"^[\w.][\w./-]*\.\w{1,6}$")
# What a patch script prints when the change it meant found nothing to change.
_MISSED = re.compile(r"\bnot (?:replaced|found|applied|patched|matched)\b|\bno match(?:es)?\b|"
                     r"\bpattern not found\b|\b0 replacements?\b|\bnothing (?:to )?replaced?\b",
                     re.I)
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.M)
_WRITE_CALL = re.compile(r"write_text\(|write_bytes\(|\.write\(|open\([^)\n]*['\"][wa]")
# Patch texts name the file they change (unified diff, or the apply_patch envelope).
_PATCH_FILE = re.compile(r"^(?:\+\+\+ (?:b/)?|\*\*\* (?:Update|Add) File: )(\S+)", re.M)
_APPLIERS = ("git apply", "patch ")
_EDITORS = frozenset({"sed", "perl", "awk", "ruby"})
"""Programs whose writes are in-place edits, even when a failure made the step a plain run."""


def patch_tool(info: Info) -> bool:
    """Codex's ``apply_patch`` called through the shell: the patch tool, as edit_retry reads it."""
    return info.shell and info.cls == "edit" and info.program == "apply_patch"


def targets(info: Info) -> tuple[str, ...]:
    """Files of the work tree a shell step means to edit (scratch files under /tmp left out)."""
    if not info.shell or info.cls not in _EDIT_CLASSES or patch_tool(info):
        return ()
    meant = [*info.extra.get("script_targets", ()), *info.extra.get("meant_targets", ())]
    if (info.cls in ("write", "edit") or info.program in _EDITORS) and info.content is None:
        meant.extend(info.writes)  # an in-place edit (sed -i, awk > t && mv t f); not `cat >`
    if any(a in info.command for a in _APPLIERS):
        meant.extend(_PATCH_FILE.findall(info.command))
    return tuple(dict.fromkeys(
        p for p in meant if _PLAIN_PATH.match(p) and not p.startswith(("/tmp/", "tmp/"))))


def _stopped_before_writing(step: Step, info: Info) -> bool:
    """A Python traceback whose last frame in the script comes before its first write."""
    body = info.extra.get("script_body")
    if not isinstance(body, str) or "Traceback" not in step.output:
        return False
    write = next((n for n, ln in enumerate(body.splitlines(), 1) if _WRITE_CALL.search(ln)), 0)
    lines = [int(n) for name, n in _FRAME.findall(step.output)
             if name.startswith("<") or name.endswith(".py") and "/lib/" not in name]
    return bool(write and lines and lines[-1] < write)


# An edit tool that refused the text it was given (its program, its patch), not the file: the
# attempt wrote nothing, and what it teaches is its own syntax. One row per tool.
_OWN_TEXT_REFUSED = re.compile(
    r"^awk: (?:cmd\. )?line:? ?\d*:? .*syntax error|"      # awk's own program
    r"^sed: -e expression #\d+, char \d+: |"              # a sed script that does not parse
    r"syntax error at -e line \d+|"                        # perl -e
    r"^error: (?:unrecognized input|corrupt patch|No valid patches in input)|"  # git apply
    r"Only garbage was found in the patch input", re.M)   # patch


def refused_own_text(step: Step) -> bool:
    """The edit tool refused its own program or patch text (it never read the file)."""
    return bool(_OWN_TEXT_REFUSED.search(step.output[:2000]))


def missed(step: Step, info: Info) -> bool:
    """The attempt left its file as it was (see the module docstring)."""
    if shell_rejected(step) or _MISSED.search(step.output):
        return True
    if info.extra.get("script_body") is not None or info.extra.get("script_targets"):
        return script_rejected(step) or _stopped_before_writing(step, info)
    return info.failed


_LOOKS = frozenset({"read", "search", "list"})


def informed(traj: Trajectory, infos: list[Info], j: int, i: int) -> bool:
    """The retry at ``i`` follows something learned since the missed attempt at ``j``.

    A script the interpreter refused (text after its here-document's end) taught only its
    own syntax: the next attempt is the same edit made runnable, a fix of the script; so with
    awk, sed, perl or ``git apply`` refusing their own program or patch text when the next
    attempt applies (``refused_own_text``). A run
    or check between the two (reading the file with another encoding, a test) is a diagnosis:
    the attempt after it acts on new information. Looking at the file again is not.
    """
    if script_rejected(traj.steps[j]) and not shell_rejected(traj.steps[j]):
        return True
    if other_program(traj.steps[j], infos[i]):
        # `python: command not found`, then the same script through `python3`: the retry
        # answers the error it got (another program), it does not guess at the file again.
        return True
    if refused_own_text(traj.steps[j]) and not missed(traj.steps[i], infos[i]):
        # The tool refused the attempt's own program or patch text; the retry that applies
        # answers that refusal (labels rule book: a retry that answers its error).
        return True
    return any(infos[k].cls not in _LOOKS for k in range(j + 1, i)
               if traj.steps[k].kind == "tool" and not targets(infos[k]))


def retries(traj: Trajectory, infos: list[Info]) -> Iterator[tuple[int, int, bool]]:
    """``(missed attempt, retry, wasted)`` for each shell edit retried after a missed one.

    The retry repeats the attempt either way; it is wasted unless ``informed``.
    """
    last: dict[str, tuple[int, bool]] = {}
    for i, (step, info) in enumerate(zip(traj.steps, infos, strict=True)):
        if info.unknown_mutation or info.git_restore:
            last.clear()  # a checkout or install may have changed any file
        paths = targets(info)
        if not paths and info.cls in ("write", "edit") and (
                not info.shell or patch_tool(info)) and info.paths:
            # A tool's own edit is edit_retry's; a shell edit after a failed one is another
            # change as often as a retry (a sed that re-indents after a refused replacement).
            last.pop(info.paths[0], None)
            continue
        if not paths:
            continue
        before = [last[p][0] for p in paths if p in last and last[p][1]
                  and i - last[p][0] <= RETRY_WINDOW]
        if before:
            yield (max(before), i, not informed(traj, infos, max(before), i))
        miss = missed(step, info)
        for p in paths:
            last[p] = (i, miss)


@register("shell_edit_retry")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Chains of shell edits of one file, each after an attempt that did not apply."""
    infos = infos_for(traj)
    chains: dict[int, list[int]] = {}
    for j, i, wasted in retries(traj, infos):
        if wasted:
            chain = chains.pop(j, [j])
            chain.append(i)
            chains[i] = chain
    for chain in sorted(chains.values(), key=lambda c: c[0]):
        path = targets(infos[chain[-1]])[0]  # the last is a shell edit (the first may not be)
        yield make_finding(
            "edit_retry", traj, infos, chain, chain[1:], settings,
            shape={"ext": path_ext(path), "shell": True},
            summary=f"{path}: edit retried {len(chain) - 1}x through the shell after attempts "
            "that did not apply",
            confidence=0.7,
        )
