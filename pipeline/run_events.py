"""What a run tells its caller while it works: a stream of typed events.

Stages emit events through an ``Emit`` callback; the CLI renders them (``cli/mine_cmd.py``,
``_Progress``), a test or another runner can collect them. Nothing here formats text for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Stage = Literal["scanned", "sessions", "llm"]
"""What a ``Progress`` counts: sources scanned, sessions judged and drafted, model requests."""


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
    """``done`` of ``total`` items of one stage."""

    stage: Stage
    done: int
    total: int


BATCH_ENDED_STATES = frozenset({"succeeded", "partially_succeeded", "failed", "cancelled",
                                "expired"})
"""Batch job states (``JOB_STATE_`` cut, lower case) after which nothing changes."""


@dataclass(frozen=True, slots=True)
class BatchPolled:
    """A Batch Mode job was polled: name, state (``running``, ``succeeded``...), answers.

    ``done`` is None when the API does not count answers while the job runs (the Gemini API).
    """

    job: str
    state: str
    done: int | None
    total: int
    elapsed_s: float = 0.0

    @property
    def ended(self) -> bool:
        """The job will not change any more."""
        return self.state in BATCH_ENDED_STATES


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


Counted = Progress | BatchPolled
"""The counters a backend reports while it judges and drafts."""

Event = (DefaultLocations | SourcesFound | Progress | BatchPolled | FindingsFound | LLMUsage
         | Written)
"""Every event a run emits."""

Emit = Callable[[Event], None]
"""Receives the events of a run, in order."""


def ignore(_event: Event) -> None:
    """The sink of a run nobody watches."""
