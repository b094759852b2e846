"""Loops in the agent's own text.

Monologue: the same message again and again with no observation between. Chanting: one chunk
of prose repeated many times inside the agent's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding

_WS = re.compile(r"\s+")
_CODE = re.compile(r"```.*?(```|$)", re.S)
_STRUCTURE = re.compile(r"^\s*([-*+>|#]|\d+[.)])")
MAX_CANDIDATES = 200
"""Chunks tried per text (bounded so long texts stay cheap)."""


def _msg_text(kind: str, text: str, output: str) -> str:
    return text or (output if kind == "message" else "")


@register("monologue")
def monologue(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Identical agent messages in a row with no tool observation or user turn between."""
    infos = infos_for(traj)
    run: list[int] = []
    last = ""

    def emit(run: list[int]) -> Iterator[Finding]:
        if len(run) > 1:
            text = _msg_text(traj.steps[run[0]].kind, traj.steps[run[0]].text,
                             traj.steps[run[0]].output)
            yield make_finding(
                "monologue", traj, infos, run, run[1:], settings,
                shape={},
                summary=f"the same message said {len(run)}x with nothing between: "
                f"{' '.join(text.split())[:70]}",
                confidence=0.9 if len(run) >= settings.monologue_repeats else 0.7,
                resolve=False,
            )

    for i, step in enumerate(traj.steps):
        if step.kind in ("reasoning", "system"):
            continue
        if step.kind != "message":
            yield from emit(run)
            run, last = [], ""
            continue
        norm = _WS.sub(" ", _msg_text(step.kind, step.text, step.output)).strip().lower()
        if norm and norm == last:
            run.append(i)
        else:
            yield from emit(run)
            run, last = [i], norm
    yield from emit(run)


def chant_count(text: str, chunk: int, needed: int) -> tuple[int, str]:
    """Most occurrences of one ``chunk``-character piece of prose in ``text`` (capped).

    Code blocks, list items, tables, quotes and headings are left out, as in Gemini CLI.
    """
    prose = "\n".join(
        ln for ln in _CODE.sub("", text).splitlines() if not _STRUCTURE.match(ln)
    )
    prose = _WS.sub(" ", prose)
    if len(prose) < chunk * 2:
        return 0, ""
    best, best_piece = 0, ""
    step = max(1, len(prose) // MAX_CANDIDATES, chunk // 2)
    for start in range(0, len(prose) - chunk + 1, step):
        piece = prose[start:start + chunk]
        if not any(c.isalpha() for c in piece):
            continue
        count, pos = 0, -1
        while count < needed:
            pos = prose.find(piece, pos + 1)
            if pos < 0:
                break
            count += 1
        if count > best:
            best, best_piece = count, piece
            if count >= needed:
                break
    return best, best_piece


@register("chanting")
def chanting(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Agent text where one chunk of prose recurs ``chant_repeats`` times."""
    infos = infos_for(traj)
    for i, step in enumerate(traj.steps):
        if step.kind not in ("message", "reasoning", "tool"):
            continue
        text = step.text or (step.output if step.kind != "tool" else "")
        if len(text) < settings.chant_chunk * settings.chant_repeats // 2:
            continue
        count, piece = chant_count(text, settings.chant_chunk, settings.chant_repeats)
        if count >= settings.chant_repeats:
            yield make_finding(
                "chanting", traj, infos, [i], [i], settings,
                shape={},
                summary=f"agent text repeats one phrase {count}+ times: {piece.strip()[:60]!r}",
                confidence=0.85, resolve=False,
            )
