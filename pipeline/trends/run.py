"""The library entry of ``orf trends``: open the store and its ledger, compute, render text."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from ..ledger import Ledger
from .compute import TrendRules, TrendsReport, compute_trends
from .playbooks import playbook_infos


def store_trends(store_root: Path, ledger_path: Path, *, since: float | None = None,
                 until: float | None = None, rules: TrendRules | None = None) -> TrendsReport:
    """Trends of the store at ``store_root`` from the history in ``ledger_path``."""
    from ..orf import Store

    store = Store(store_root)
    experiences = store.experiences() if store.exists() else []
    with contextlib.ExitStack() as stack:
        if not ledger_path.exists():
            # No history yet: measure against an empty ledger in a scratch folder, so a
            # read-only command leaves no `.orf/` behind.
            ledger_path = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "l.db"
        ledger = stack.enter_context(Ledger(ledger_path, store=store_root))
        infos = playbook_infos(experiences, store_root, ledger.candidate_signatures())
        return compute_trends(ledger, infos, since=since, until=until, rules=rules)


def _rate(side: dict[str, object]) -> str:
    rate = side["rate_per_100"]
    return "-" if rate is None else f"{rate}"


def render_text(report: TrendsReport) -> str:
    """A terminal view: one line per playbook, then the costliest traps."""
    data = report.to_json()
    window = data["window"]
    lines = [f"sessions: {data['sessions']} ({window['from'] or '-'} .. {window['to'] or '-'})"]
    if not data["playbooks"]:
        lines.append("playbooks: none in the store")
    for pb in data["playbooks"]:
        b, a = pb["before"], pb["after"]
        lines.append(
            f"{pb['id']}  {pb['status']:<15} hits/100 {_rate(b)} -> {_rate(a)}"
            f"  (before {b['hits']}/{b['sessions']}, after {a['hits']}/{a['sessions']},"
            f" entered {(pb['entered_at'] or '-')[:10]})  {pb['title']}")
    if data["traps"]:
        lines.append("top traps by wasted tokens:")
    for t in data["traps"]:
        # The trap by what happened (its costliest finding's summary), then its cost.
        lines.append(f"  {t['example'] or t['kind']}")
        lines.append(
            f"      {t['hits']} session(s), {t['wasted_steps']} steps, "
            f"{t['wasted_tokens']:,} tokens, {(t['first_seen'] or '')[:10]}.."
            f"{(t['last_seen'] or '')[:10]}; {t['playbook'] or 'no playbook'}"
            + (f"; e.g. session {t['example_session']}" if t["example_session"] else ""))
    return "\n".join(lines)
