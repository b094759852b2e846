"""``orf.trends/1``: did each playbook make its trap rarer, measured from the ledger history.

For each playbook the sessions of the agents that hit its trap are split at the date the
playbook entered the store; hits per 100 sessions before and after give its status. Traps are
ranked by the tokens they wasted. Everything is one pass over two ledger queries, so 100,000
sessions take about a second (``bench/trends.py``).
"""

from __future__ import annotations

import datetime
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
    agent: str
    model: str
    start: float
    programs: str
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
    for sid, agent, model, start, programs in ledger.history_sessions(since, until):
        sessions[sid] = _Session(agent or UNKNOWN_AGENT, model or "", float(start),
                                 programs or "")
    traps: dict[str, _Trap] = {}
    for sid, sig, kind, steps, tokens, _seconds in ledger.history_findings():
        sess = sessions.get(sid)
        if sess is None:
            continue  # outside the window
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


def _side(sessions: list[_Session], sigs: frozenset[str]) -> dict[str, Any]:
    hits = steps = tokens = 0
    for s in sessions:
        hit = False
        for sig in sigs & s.sigs.keys():
            hit = True
            steps += s.sigs[sig][0]
            tokens += s.sigs[sig][1]
        hits += hit
    rate = round(100.0 * hits / len(sessions), 1) if sessions else None
    return {"sessions": len(sessions), "hits": hits, "wasted_steps": steps,
            "wasted_tokens": tokens, "rate_per_100": rate}


def _stale(pb: PlaybookInfo, pool: list[_Session], hit_times: list[float], end: float,
           rules: TrendRules) -> bool:
    horizon = rules.stale_after_days * DAY
    last = max(hit_times) if hit_times else pb.entered_at
    if last is not None and end - last > horizon and \
            sum(1 for s in pool if s.start > last) >= rules.min_sessions:
        return True
    # The validated path names programs the logs used to run and no longer do.
    recent = [s for s in pool if s.start > end - horizon]
    if not pb.programs or len(recent) < rules.min_sessions:
        return False
    used_before = {p for s in pool if s.start <= end - horizon for p in s.programs.split()}
    named = pb.programs & used_before
    used_now = {p for s in recent for p in s.programs.split()}
    return bool(named) and not named & used_now


def _status(pb: PlaybookInfo, before: dict[str, Any], after: dict[str, Any], stale: bool,
            rules: TrendRules) -> str:
    if stale:
        return "stale"
    if min(before["sessions"], after["sessions"]) < rules.min_sessions or not before["hits"]:
        return "no-data"
    if after["rate_per_100"] <= before["rate_per_100"] * rules.helping_ratio:
        return "helping"
    return "still-recurring"


def _playbook(pb: PlaybookInfo, sessions: dict[str, _Session], traps: dict[str, _Trap],
              end: float, rules: TrendRules) -> dict[str, Any]:
    sigs = frozenset(pb.signatures)
    hit_ids = {sid for sig in sigs if sig in traps for sid in traps[sig].sessions}
    agents = {sessions[sid].agent for sid in hit_ids}
    # Rates are per session of the agents that hit the trap; with no hit, of every agent.
    pool = [s for s in sessions.values() if not agents or s.agent in agents]
    entered = pb.entered_at if pb.entered_at is not None else float("inf")
    before = _side([s for s in pool if s.start < entered], sigs)
    after = _side([s for s in pool if s.start >= entered], sigs)
    stale = _stale(pb, pool, [sessions[sid].start for sid in hit_ids], end, rules)
    return {"id": pb.id, "title": pb.title, "signatures": list(pb.signatures),
            "entered_at": iso(pb.entered_at), "before": before, "after": after,
            "status": _status(pb, before, after, stale, rules)}


def _weekly(sessions: dict[str, _Session]) -> list[dict[str, Any]]:
    weeks: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for s in sessions.values():
        day = datetime.datetime.fromtimestamp(s.start, tz=datetime.timezone.utc).date()
        monday = (day - datetime.timedelta(days=day.weekday())).isoformat()
        row = weeks[monday]
        row[0] += 1
        row[1] += sum(c[0] for c in s.sigs.values())
        row[2] += sum(c[1] for c in s.sigs.values())
    if not weeks:
        return []
    # Every week from the first to the last, empty ones too, so the time axis is even.
    first = datetime.date.fromisoformat(min(weeks))
    count = (datetime.date.fromisoformat(max(weeks)) - first).days // 7 + 1
    labels = [(first + datetime.timedelta(weeks=i)).isoformat() for i in range(count)]
    return [{"week": w, "sessions": weeks[w][0], "wasted_steps": weeks[w][1],
             "wasted_tokens": weeks[w][2]} for w in labels]


def _by_agent_model(sessions: dict[str, _Session]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for s in sessions.values():
        row = groups[(s.agent, s.model)]
        row[0] += 1
        row[1] += bool(s.sigs)
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
    starts = [s.start for s in sessions.values()]
    start = since if since is not None else (min(starts) if starts else None)
    end = until if until is not None else (max(starts) if starts else None)
    rows = [_playbook(pb, sessions, traps, end if end is not None else 0.0, rules)
            for pb in playbooks]
    owner: dict[str, str] = {}
    for pb in playbooks:
        for sig in pb.signatures:
            owner.setdefault(sig, pb.id)
    ranked = sorted(traps.items(), key=lambda kv: (-kv[1].wasted_tokens,
                                                   -kv[1].wasted_steps, kv[0]))
    top = [{"signature": sig, "kind": t.kind, "hits": len(t.sessions),
            "wasted_steps": t.wasted_steps, "wasted_tokens": t.wasted_tokens,
            "first_seen": iso(t.first), "last_seen": iso(t.last), "playbook": owner.get(sig)}
           for sig, t in ranked[: rules.top_traps]]
    return TrendsReport((start, end), len(sessions), rows, top, _weekly(sessions),
                        _by_agent_model(sessions))
