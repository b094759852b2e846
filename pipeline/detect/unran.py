"""Commands that never ran, issued again: the shell refused them, or their program is missing.

A command the shell could not parse (stray prose before it, an unclosed quote) ran nothing;
the agent then sends the command it meant, cut out of the refused text. People call that
re-issue a repeat of the refused step, and wasted: one of the two did nothing. Likewise a
program the shell reported as missing (``java: command not found``) is missing for any other
call of it until something installs it: asking again (``java -version``) was already answered.
A search whose pattern the tool refused (``grep: Unmatched ) or \\)``) answered nothing: the
same search re-spelled that is refused the same way, or finds nothing, with no file changed
between, is a retry that again told nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .effects import shell_rejected
from .info import Info

CONTAINED = 0.8
"""Share of the re-issue's words found in the refused command from which it is that command."""

_WORDS = re.compile(r"[^\s'\"\\]+")
_NOT_FOUND = re.compile(r"^(?:/bin/)?(?:ba|z|da)?sh: (?:line \d+: )?([\w.+-]+): command not found",
                        re.M)


def missing_program(output: str) -> str | None:
    """The program the shell said it could not find (``python: command not found``)."""
    m = _NOT_FOUND.search(output[:2000])
    return m.group(1) if m else None


def _words(command: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(command))


def reissue_of(refused: Info, now: Info) -> bool:
    """``now`` is the refused command sent again (most of its words were in it)."""
    words = _words(now.command)
    return bool(words) and len(words & _words(refused.command)) >= CONTAINED * len(words)


_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")


SEARCH_SIMILARITY = 0.5
"""Word Jaccard of two searches from which one is the other re-spelled."""


def _refused_search(step: Step, info: Info) -> bool:
    """The search tool complained about its own pattern or arguments instead of searching."""
    out = step.output.strip()
    return info.cls == "search" and bool(out) and all(
        ln.startswith(f"{info.program}: ") for ln in out.splitlines() if ln.strip())


def search_retry(steps: list[Step], infos: list[Info], j: int, i: int) -> bool:
    """The search at ``i`` re-spells the refused one at ``j`` and again tells nothing."""
    a, b = infos[j], infos[i]
    if b.cls != "search" or b.program != a.program or b.state != a.state_after:
        return False
    wa, wb = _words(a.canon), _words(b.canon)
    if len(wa & wb) < SEARCH_SIMILARITY * len(wa | wb):
        return False
    now = steps[i].output.strip()
    return not now or (_refused_search(steps[i], b) and now == steps[j].output.strip())


def made_runnable(steps: list[Step], infos: list[Info], j: int, i: int) -> bool:
    """The edit refused at ``j`` for its syntax, re-sent at ``i`` and accepted this time.

    A retry that answers the error it got is not wasted (labels rule book): a patch or
    file-writing script the shell refused, sent again in a form the shell runs, fixed the
    refusal. A check or view re-sent is the same look, wasted either way.
    """
    edits = infos[j].extra.get("meant_targets") or infos[i].writes or infos[i].extra.get(
        "script_targets")
    return bool(edits) and not shell_rejected(steps[i])


def program_of(info: Info) -> str:
    """The word the shell looks up (``python3``, not the ``pytest`` of ``python -m pytest``).

    Past a leading ``cd x &&`` and ``NAME=value`` assignments: ``cd /w && PYTHONPATH=.
    python x.py`` looks up ``python``.
    """
    for seg in info.segments():
        words = [w for w in seg.argv if not _ASSIGN.match(w)]
        if words:
            return words[0].rsplit("/", 1)[-1]
    return ""


def other_program(failed: Step, now: Info) -> bool:
    """``failed`` said its program is missing and ``now`` calls another one (``python3``).

    Such a retry answers the error it got: another means, not the same call again.
    """
    gone = missing_program(failed.output)
    return gone is not None and program_of(now) != gone


@register("unran_reissue")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """A refused command sent again, and a missing program called again before any install."""
    infos = infos_for(traj)
    refused: int | None = None
    bad_search: int | None = None
    missing: dict[str, int] = {}
    for i, (step, info) in enumerate(zip(traj.steps, infos, strict=True)):
        if step.kind != "tool":
            continue
        if refused is not None and info.shell and reissue_of(infos[refused], info) and not (
                made_runnable(traj.steps, infos, refused, i)):
            yield _finding(traj, infos, settings, [refused, i], "sent again after the shell "
                           "refused to parse it (nothing ran)")
        refused = i if info.shell and shell_rejected(step) else None
        if bad_search is not None and search_retry(traj.steps, infos, bad_search, i):
            yield _finding(traj, infos, settings, [bad_search, i], "re-spelled after the "
                           "search refused its pattern, and again told nothing")
        bad_search = i if _refused_search(step, info) else None
        if not info.shell:
            continue
        prog = program_of(info)
        if prog in missing and not shell_rejected(step):
            yield _finding(traj, infos, settings, [missing[prog], i],
                           f"`{prog}` called again after the shell said it is not installed")
        if (info.cls == "install" or info.unknown_mutation) and not info.failed:
            missing.clear()  # it may have installed the program
        for name in _NOT_FOUND.findall(step.output):
            missing.setdefault(name, i)


def _finding(traj: Trajectory, infos: list[Info], settings: DetectSettings,
             chain: list[int], why: str) -> Finding:
    return make_finding(
        "near_repeat", traj, infos, chain, chain[1:], settings,
        shape={"cls": infos[chain[0]].cls, "unran": True},
        summary=f"`{infos[chain[-1]].label[:60]}` {why}", confidence=0.7,
    )
