"""Figures of a judge against labels: coverage, accuracy on decided, precision/recall, confusion.

``coverage`` is the share of sessions the judge decided (success or failure), ``accuracy`` the
share of decided sessions it got right, ``precision``/``recall`` are those of ``success`` (an
``unknown`` on a true success is a miss). A rate with no denominator is None (printed ``-``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

TRUTHS = ("success", "failure")
VERDICTS = ("success", "failure", "unknown")


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class Tally:
    """Counts of (true outcome, verdict) pairs."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, truth: str, verdict: str) -> None:
        """Count one judged session."""
        self.counts[(truth, verdict)] += 1

    @property
    def n(self) -> int:
        """Sessions counted."""
        return sum(self.counts.values())

    @property
    def decided(self) -> int:
        """Sessions judged success or failure."""
        return sum(c for (_, v), c in self.counts.items() if v != "unknown")

    @property
    def correct(self) -> int:
        """Decided sessions whose verdict equals the truth."""
        return sum(c for (t, v), c in self.counts.items() if t == v)

    @property
    def coverage(self) -> float | None:
        """Share of sessions decided."""
        return _rate(self.decided, self.n)

    @property
    def accuracy(self) -> float | None:
        """Share of decided sessions judged right."""
        return _rate(self.correct, self.decided)

    @property
    def precision(self) -> float | None:
        """Of the sessions judged success, the share that succeeded."""
        said = sum(self.counts[(t, "success")] for t in TRUTHS)
        return _rate(self.counts[("success", "success")], said)

    @property
    def recall(self) -> float | None:
        """Of the sessions that succeeded, the share judged success."""
        real = sum(self.counts[("success", v)] for v in VERDICTS)
        return _rate(self.counts[("success", "success")], real)

    def as_dict(self) -> dict[str, Any]:
        """Counts, rates and the confusion table, for JSON."""
        return {
            "sessions": self.n, "decided": self.decided, "correct": self.correct,
            "coverage": _round(self.coverage), "accuracy": _round(self.accuracy),
            "precision_success": _round(self.precision), "recall_success": _round(self.recall),
            "confusion": {t: {v: self.counts[(t, v)] for v in VERDICTS} for t in TRUTHS},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def fmt(value: float | None) -> str:
    """A rate as printed: two decimals, ``-`` when undefined."""
    return "-" if value is None else f"{value:.2f}"


ROW_HEAD = (f"{'':<18} {'n':>4} {'decided':>7} {'coverage':>8} {'accuracy':>8} "
            f"{'P(success)':>10} {'R(success)':>10}")
"""Column heads of ``tally_row``."""


def tally_row(name: str, t: Tally) -> str:
    """One printed line of figures."""
    return (f"{name[:18]:<18} {t.n:>4} {t.decided:>7} {fmt(t.coverage):>8} "
            f"{fmt(t.accuracy):>8} {fmt(t.precision):>10} {fmt(t.recall):>10}")


def confusion_lines(tallies: list[tuple[str, Tally]]) -> list[str]:
    """Confusion tables, one pair of rows per group: rows are the truth, columns the verdict."""
    head = "truth \\ verdict"
    lines = [f"{head:<27} " + " ".join(f"{v:>8}" for v in VERDICTS)]
    for name, t in tallies:
        for truth in TRUTHS:
            lines.append(f"{name[:18]:<18} {truth:<8} "
                         + " ".join(f"{t.counts[(truth, v)]:>8}" for v in VERDICTS))
    return lines


__all__ = ["ROW_HEAD", "Tally", "confusion_lines", "fmt", "tally_row"]
