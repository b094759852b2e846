"""What a run tells its caller while it works: a stream of typed events.

Stages emit events through an ``Emit`` callback; the CLI renders them (``cli/mine_cmd.py``,
``_Progress``), a test or another runner can collect them. Nothing here formats text for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class DefaultLocations:
    """``--default-locations`` resolved: the folders found, or the patterns looked for."""

    found: tuple[Path, ...]
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SourcesFound:
    """Discovery done: how many sessions were seen and how many need reading."""

    seen: int
    todo: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class Progress:
    """``done`` of ``total`` items of one stage (``stage``: scanned, sessions, batch...)."""

    stage: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class FindingsFound:
    """Scan done: findings over every session read, and their wasted steps."""

    findings: int
    wasted_steps: int


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """Model calls since the run started, and what they cost."""

    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class Written:
    """One candidate went to the store: its outcome and EXP id, or why it failed."""

    outcome: str
    exp_id: str | None
    error: str | None = None


Event = DefaultLocations | SourcesFound | Progress | FindingsFound | LLMUsage | Written
"""Every event a run emits."""

Emit = Callable[[Event], None]
"""Receives the events of a run, in order."""


def ignore(_event: Event) -> None:
    """The sink of a run nobody watches."""
