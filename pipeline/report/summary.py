"""The summary of an ``orf mine`` run: the record, its JSON form and the closing table."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MINE_SCHEMA = "orf.mine/1"
"""Version of the ``--json`` summary; changing a key's name or meaning means bumping it."""


@dataclass
class MineSummary:
    """What one ``orf mine`` run saw and did."""

    store: str = ""
    backend: str = ""
    model: str | None = None
    dry_run: bool = False
    batch: bool = False
    sessions_seen: int = 0
    """Sessions discovered (files or session folders)."""
    sessions_unchanged: int = 0
    """Skipped: the ledger has them with the same size+mtime or content hash."""
    sessions_new: int = 0
    """Parsed this run (new or grown)."""
    sessions_failed: int = 0
    """Could not be read (see ``issues``)."""
    sessions_selected: int = 0
    """Sent to judge and draft."""
    sessions_deferred: int = 0
    """Passed the selection but over ``max_sessions_per_run``: left for the next run."""
    findings: int = 0
    wasted_steps: int = 0
    drafts: Counter[str] = field(default_factory=Counter)
    """Drafts by outcome: new, related, duplicate, dropped, existing, failed."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Dropped drafts by reason."""
    no_lesson: Counter[str] = field(default_factory=Counter)
    """Findings of the drafted sessions that taught nothing, by reason (no playbook)."""
    llm_calls: int = 0
    """Requests actually sent (cache hits excluded)."""
    llm_cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    written: list[dict[str, Any]] = field(default_factory=list)
    """Per playbook written (or, on a dry run, that would be): id, path, title, outcome."""
    reinforced: list[dict[str, Any]] = field(default_factory=list)
    """Duplicates: which playbook they reinforced and from which session."""
    issues: list[str] = field(default_factory=list)
    """``path:line: message`` for files that could not be (fully) read."""
    skipped: list[str] = field(default_factory=list)
    """``path: reason`` of files no adapter claims (not session logs; not failures)."""
    skipped_special: list[str] = field(default_factory=list)
    """``path: reason`` of FIFOs, sockets, devices and symlink loops (never opened)."""
    errors: list[str] = field(default_factory=list)
    """Per-session failures in later stages (judge/draft)."""
    repaired: list[str] = field(default_factory=list)
    """What the start-of-run repair and resume fixed."""
    elapsed_s: float = 0.0
    exit_code: int = 0

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {
            "schema": MINE_SCHEMA,
            "store": self.store,
            "backend": self.backend,
            "model": self.model,
            "dry_run": self.dry_run,
            "batch": self.batch,
            "sessions": {
                "seen": self.sessions_seen, "unchanged": self.sessions_unchanged,
                "new": self.sessions_new, "failed": self.sessions_failed,
                "selected": self.sessions_selected, "deferred": self.sessions_deferred,
            },
            "findings": self.findings,
            "wasted_steps": self.wasted_steps,
            "drafts": {k: self.drafts.get(k, 0) for k in
                       ("new", "related", "duplicate", "dropped", "existing", "failed")},
            "dropped": dict(self.dropped),
            "no_lesson": dict(self.no_lesson),
            "llm": {
                "calls": self.llm_calls, "cached": self.llm_cached,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost_usd": round(self.cost_usd, 6),
            },
            "written": self.written,
            "reinforced": self.reinforced,
            "issues": self.issues,
            "skipped": self.skipped + self.skipped_special,
            "errors": self.errors,
            "repaired": self.repaired,
            "elapsed_s": round(self.elapsed_s, 3),
            "exit_code": self.exit_code,
        }


def render_table(s: MineSummary) -> str:
    """The closing summary table printed at the end of a run."""
    d = s.drafts
    drop = ", ".join(f"{r}: {n}" for r, n in s.dropped.most_common()) or "-"
    rows = [
        ("sessions", f"{s.sessions_seen} seen, {s.sessions_new} new, "
                     f"{s.sessions_unchanged} unchanged, {s.sessions_failed} failed"),
        ("selected", f"{s.sessions_selected} to judge/draft"
                     + (f", {s.sessions_deferred} deferred to next run"
                        if s.sessions_deferred else "")),
        ("findings", f"{s.findings} ({s.wasted_steps} wasted steps)"),
        ("drafts", f"{d.get('new', 0)} new, {d.get('related', 0)} related, "
                   f"{d.get('duplicate', 0)} duplicate, {d.get('dropped', 0)} dropped"
                   + (f", {d['existing']} already written" if d.get("existing") else "")
                   + (f", {d['failed']} failed" if d.get("failed") else "")),
        ("dropped", drop),
        ("no lesson", ", ".join(f"{r}: {n}" for r, n in s.no_lesson.most_common()) or "-"),
        ("llm", f"{s.llm_calls} calls ({s.llm_cached} cached), {s.tokens_in} in / "
                f"{s.tokens_out} out tokens, ${s.cost_usd:.4f}"),
        ("backend", f"{s.backend}" + (f" ({s.model})" if s.model and s.backend != "heuristic"
                                      else "") + (", batch" if s.batch else "")),
    ]
    width = max(len(k) for k, _ in rows)
    title = "orf mine (dry run: nothing written)" if s.dry_run else "orf mine"
    lines = [f"{title} - {s.elapsed_s:.1f}s", *(f"  {k.ljust(width)}  {v}" for k, v in rows)]
    verb = "would write" if s.dry_run else "wrote"
    for w in s.written:
        rel = f" (related to {w['related_to']})" if w.get("related_to") else ""
        lines.append(f"  {verb} {w.get('id') or w.get('domain', '')}: {w['title']}{rel}")
    for r in s.reinforced:
        lines.append(f"  reinforced {r['exp_id']} (session {r['session_id']})")
    for fix in s.repaired:
        lines.append(f"  repair: {fix}")
    for special in s.skipped_special:
        lines.append(f"  skipped: {special}")
    if s.skipped:
        lines.append(f"  skipped {len(s.skipped)} file(s): not a session log (-v lists them)")
    for issue in s.issues[:20]:
        lines.append(f"  skipped: {issue}")
    if len(s.issues) > 20:
        lines.append(f"  ... and {len(s.issues) - 20} more unreadable input(s)")
    for err in s.errors[:20]:
        lines.append(f"  failed: {err}")
    return "\n".join(lines)
