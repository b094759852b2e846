"""``orf.trends/1``: did each playbook make its trap rarer, measured from the ledger history.

For each playbook the sessions of the agents that hit its trap are split at the date the
playbook entered the store; hits per 100 sessions before and after give its status. Traps are
ranked by the tokens they wasted. Everything is one pass over two ledger queries, so 100,000
sessions take about a second (``bench/trends.py``).
"""

from __future__ import annotations

import datetime
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .playbooks import PlaybookInfo

if TYPE_CHECKING:
    from ..ledger import Ledger

SCHEMA = "orf.trends/1"
"""Version of the JSON below: changing a key's meaning or removing one means bumping it."""

DAY = 86400.0
WEEK = 7 * DAY
UNKNOWN_AGENT = "unknown"


@dataclass(frozen=True)
class TrendRules:
    """Thresholds of the statuses (CLI flags ``--min-sessions``, ``--helping-ratio``...)."""

    helping_ratio: float = 0.5
    """``helping`` when the rate after is at most this fraction of the rate before."""
    min_sessions: int = 5
    """Sessions of the playbook's agents needed on each side of its arrival (and recently)."""
    stale_after_days: float = 90.0
    """``stale`` when its trap was not seen for this long while sessions kept coming."""
    top_traps: int = 20
    """How many traps the report lists."""


def iso(epoch: float | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (UTC) of epoch seconds."""
    if epoch is None:
        return None
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Session:
    """A session that hit at least one trap (the others are only counted)."""

    agent: str
    model: str
    start: float
    sigs: dict[str, list[int]] = field(default_factory=dict)
    """signature -> [wasted_steps, wasted_tokens] summed over the session's findings."""


@dataclass
class _Trap:
    kind: str
    sessions: set[str] = field(default_factory=set)
    wasted_steps: int = 0
    wasted_tokens: int = 0
    first: float = float("inf")
    last: float = float("-inf")


@dataclass
class TrendsReport:
    """The computed report: ``to_json()`` is ``orf.trends/1``; the rest feeds the HTML page."""

    window: tuple[float | None, float | None]
    sessions: int
    playbooks: list[dict[str, Any]]
    traps: list[dict[str, Any]]
    weekly: list[dict[str, Any]]
    """Per ISO week (Monday start): sessions and wasted steps and tokens."""
    by_agent_model: list[dict[str, Any]]
    """Per (agent, model): sessions, sessions with a trap, wasted steps and tokens."""

    def to_json(self) -> dict[str, Any]:
        """The ``orf.trends/1`` object."""
        return {
            "schema": SCHEMA,
            "window": {"from": iso(self.window[0]), "to": iso(self.window[1])},
            "sessions": self.sessions,
            "playbooks": self.playbooks,
            "traps": self.traps,
        }


def _load(ledger: Ledger, since: float | None,
          until: float | None) -> tuple[dict[str, _Session], dict[str, _Trap]]:
    sessions: dict[str, _Session] = {}
    traps: dict[str, _Trap] = {}
    for sid, agent, model, start, sig, kind, steps, tokens in ledger.history_hits(since, until):
        sess = sessions.get(sid)
        if sess is None:
            sess = sessions[sid] = _Session(agent or UNKNOWN_AGENT, model or "", float(start))
        cost = sess.sigs.setdefault(sig, [0, 0])
        cost[0] += steps or 0
        cost[1] += tokens or 0
        trap = traps.get(sig)
        if trap is None:
            trap = traps[sig] = _Trap(kind)
        trap.sessions.add(sid)
        trap.wasted_steps += steps or 0
        trap.wasted_tokens += tokens or 0
        trap.first = min(trap.first, sess.start)
        trap.last = max(trap.last, sess.start)
    return sessions, traps


class _Population:
    """Every session of the window by agent, sorted by start: counts are two bisections."""

    def __init__(self, ledger: Ledger, since: float | None, until: float | None) -> None:
        self.starts: dict[str, list[float]] = {}
        self.spans: dict[str, dict[str, list[float]]] = defaultdict(dict)
        self.groups: dict[tuple[str, str], int] = defaultdict(int)
        programs_seen: dict[tuple[str, str], list[float]] = {}
        # One pass in start order: each agent's list comes out sorted.
        for agent, model, programs, start in ledger.history_population(since, until):
            name = agent or UNKNOWN_AGENT
            starts = self.starts.get(name)
            if starts is None:
                starts = self.starts[name] = []
            starts.append(start)
            self.groups[(name, model or "")] += 1
            span = programs_seen.get((name, programs or ""))
            if span is None:
                programs_seen[(name, programs or "")] = [start, start]
            else:
                span[1] = start
        self.total = sum(len(v) for v in self.starts.values())
        for (name, programs), (first, last) in programs_seen.items():
            for prog in programs.split():
                span = self.spans[name].setdefault(prog, [first, last])
                span[0] = min(span[0], first)
                span[1] = max(span[1], last)

    def count(self, agents: set[str], after: float = float("-inf"),
              before: float = float("inf"), *, inclusive: bool = False) -> int:
        """Sessions of ``agents`` started in ``(after, before)`` (``[after, ...)`` if inclusive)."""
        total = 0
        for agent in agents:
            starts = self.starts.get(agent, [])
            lo = (bisect_left if inclusive else bisect_right)(starts, after)
            total += bisect_left(starts, before) - lo
        return total

    def programs(self, agents: set[str], *, seen_by: float | None = None,
                 seen_after: float | None = None) -> set[str]:
        """Programs run by ``agents`` at or before ``seen_by`` / after ``seen_after``."""
        out: set[str] = set()
        for agent in agents:
            for prog, (first, last) in self.spans.get(agent, {}).items():
                if (seen_by is not None and first <= seen_by) or \
                        (seen_after is not None and last > seen_after):
                    out.add(prog)
        return out


def _side(total: int, hits: list[_Session], sigs: frozenset[str]) -> dict[str, Any]:
    steps = tokens = 0
    for s in hits:
        for sig in sigs & s.sigs.keys():
            steps += s.sigs[sig][0]
            tokens += s.sigs[sig][1]
    rate = round(100.0 * len(hits) / total, 1) if total else None
    return {"sessions": total, "hits": len(hits), "wasted_steps": steps,
            "wasted_tokens": tokens, "rate_per_100": rate}


def _stale(pb: PlaybookInfo, pop: _Population, agents: set[str], hit_times: list[float],
           end: float, rules: TrendRules) -> bool:
    horizon = rules.stale_after_days * DAY
    last = max(hit_times) if hit_times else pb.entered_at
    if last is not None and end - last > horizon and \
            pop.count(agents, after=last) >= rules.min_sessions:
        return True
    # The validated path names programs the logs used to run and no longer do.
    if not pb.programs or pop.count(agents, after=end - horizon) < rules.min_sessions:
        return False
    named = pb.programs & pop.programs(agents, seen_by=end - horizon)
    return bool(named) and not named & pop.programs(agents, seen_after=end - horizon)


def _status(pb: PlaybookInfo, before: dict[str, Any], after: dict[str, Any], stale: bool,
            rules: TrendRules) -> str:
    # Judged only once enough sessions came after it: a playbook mined today is too new to be
    # helping, recurring or stale, whatever its trap did before.
    if after["sessions"] < rules.min_sessions:
        return "too-new"
    if stale:
        return "stale"
    if before["sessions"] < rules.min_sessions or not before["hits"]:
        return "no-data"
    if after["rate_per_100"] <= before["rate_per_100"] * rules.helping_ratio:
        return "helping"
    return "still-recurring"


def _playbook(pb: PlaybookInfo, sessions: dict[str, _Session], traps: dict[str, _Trap],
              pop: _Population, end: float, rules: TrendRules) -> dict[str, Any]:
    sigs = frozenset(pb.signatures)
    hits = [sessions[sid] for sid in
            {sid for sig in sigs if sig in traps for sid in traps[sig].sessions}]
    # Rates are per session of the agents that hit the trap; with no hit, of every agent.
    agents = {s.agent for s in hits} or set(pop.starts)
    entered = pb.entered_at if pb.entered_at is not None else float("inf")
    before = _side(pop.count(agents, before=entered),
                   [s for s in hits if s.start < entered], sigs)
    after = _side(pop.count(agents, after=entered, inclusive=True),
                  [s for s in hits if s.start >= entered], sigs)
    stale = _stale(pb, pop, agents, [s.start for s in hits], end, rules)
    return {"id": pb.id, "title": pb.title, "signatures": list(pb.signatures),
            "entered_at": iso(pb.entered_at), "before": before, "after": after,
            "status": _status(pb, before, after, stale, rules)}


def _monday(epoch: float) -> datetime.date:
    day = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc).date()
    return day - datetime.timedelta(days=day.weekday())


def _weekly(pop: _Population, sessions: dict[str, _Session]) -> list[dict[str, Any]]:
    starts = [t for v in pop.starts.values() for t in v]
    if not starts:
        return []
    # Every week from the first to the last, empty ones too, so the time axis is even.
    first = _monday(min(starts))
    origin = datetime.datetime(first.year, first.month, first.day,
                               tzinfo=datetime.timezone.utc).timestamp()
    count = int((max(starts) - origin) // WEEK) + 1
    rows = [[0, 0, 0] for _ in range(count)]
    for t in starts:
        rows[int((t - origin) // WEEK)][0] += 1
    for s in sessions.values():
        row = rows[int((s.start - origin) // WEEK)]
        row[1] += sum(c[0] for c in s.sigs.values())
        row[2] += sum(c[1] for c in s.sigs.values())
    return [{"week": (first + datetime.timedelta(weeks=i)).isoformat(), "sessions": r[0],
             "wasted_steps": r[1], "wasted_tokens": r[2]} for i, r in enumerate(rows)]


def _by_agent_model(pop: _Population, sessions: dict[str, _Session]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[int]] = {k: [n, 0, 0, 0] for k, n in pop.groups.items()}
    for s in sessions.values():
        row = groups.setdefault((s.agent, s.model), [0, 0, 0, 0])
        row[1] += 1
        row[2] += sum(c[0] for c in s.sigs.values())
        row[3] += sum(c[1] for c in s.sigs.values())
    return [{"agent": a, "model": m, "sessions": r[0], "with_trap": r[1], "wasted_steps": r[2],
             "wasted_tokens": r[3]}
            for (a, m), r in sorted(groups.items(), key=lambda kv: (-kv[1][2], kv[0]))]


def compute_trends(ledger: Ledger, playbooks: list[PlaybookInfo], *,
                   since: float | None = None, until: float | None = None,
                   rules: TrendRules | None = None) -> TrendsReport:
    """Build the trends report of the ledger's store over ``[since, until]`` (epoch seconds).

    Args:
        ledger: A ledger scoped to the store (``Ledger(path, store=...)``).
        playbooks: The store's playbooks (``playbook_infos``).
        since: Only sessions started at or after this moment.
        until: Only sessions started at or before this moment.
        rules: Status thresholds.
    """
    rules = rules or TrendRules()
    sessions, traps = _load(ledger, since, until)
    pop = _Population(ledger, since, until)
    firsts = [v[0] for v in pop.starts.values()]
    lasts = [v[-1] for v in pop.starts.values()]
    start = since if since is not None else (min(firsts) if firsts else None)
    end = until if until is not None else (max(lasts) if lasts else None)
    rows = [_playbook(pb, sessions, traps, pop, end if end is not None else 0.0, rules)
            for pb in playbooks]
    owner: dict[str, str] = {}
    for pb in playbooks:
        for sig in pb.signatures:
            owner.setdefault(sig, pb.id)
    ranked = sorted(traps.items(), key=lambda kv: (-kv[1].wasted_tokens,
                                                   -kv[1].wasted_steps, kv[0]))
    examples = ledger.history_examples()
    top = [{"signature": sig, "kind": t.kind, "hits": len(t.sessions),
            "wasted_steps": t.wasted_steps, "wasted_tokens": t.wasted_tokens,
            "first_seen": iso(t.first), "last_seen": iso(t.last), "playbook": owner.get(sig),
            "example": examples.get(sig, ("", ""))[0],
            "example_session": examples.get(sig, ("", ""))[1] or None}
           for sig, t in ranked[: rules.top_traps]]
    return TrendsReport((start, end), pop.total, rows, top, _weekly(pop, sessions),
                        _by_agent_model(pop, sessions))
