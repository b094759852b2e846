"""Your own coding agent as the model: ``orf learn`` writes digests, ``orf submit`` takes drafts.

``learn`` writes, for every session with an episode, what a model backend would be sent: the
instructions, the reply's JSON schema and the digest, plus how to hand the drafts back. The
agent answers in a file; ``submit`` re-reads each session's log, verifies every draft with the
same verifier as the model backends, screens, dedupes and writes exactly as ``orf mine`` does,
and says per draft: written, reinforced, duplicate or rejected with the reasons.

The contract of a submit file: one JSON object or a list of them, each
``{"session": "<path of the log>", "drafts": [{"title", "description", "domain", "keywords",
"objective", "trap", "insight", "validated_path", "checklist", "evidence": {"trap_steps":
[int], "fix_steps": [int], "error": str}}]}`` (``session_id`` picks a sub-agent of the file;
``complexity`` and ``scope`` are optional), steps as ``Step.index``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .config import Settings
from .errors import OrfError
from .fsutil import atomic_write, store_lock
from .model import ParseIssue
from .stages.learn import checked, digest_of, instructions, learn_schema, proposal_of
from .stages.scan import ScanOptions, SessionScan, scan

HAND_BACK = """
## How to hand back your drafts
Write one JSON file: a list of `{{"session": "{path}", "session_id": "{sid}", "drafts": [...]}}`
objects, each draft as the schema above says (with its `evidence`), then run
`orf submit FILE`. It verifies every claim against the log and writes what holds to the store.
"""


class SubmitError(OrfError):
    """The drafts file cannot be read (not JSON, or not the contract's shape)."""


@dataclass(frozen=True)
class Learned:
    """One session's request for an agent: where it came from and the text to read."""

    session_id: str
    path: str
    text: str
    tokens: int
    chunks: int


def _sessions(paths: Iterable[Path], settings: Settings,
              issues: list[ParseIssue]) -> Iterable[SessionScan]:
    from .formats.discover import discover

    options = ScanOptions.from_settings(settings, keep_all=True, facts=False)
    for source in discover(list(paths), issues=issues):
        result = scan(source, options)
        issues.extend(result.issues)
        yield from result.sessions


def learn(paths: Iterable[Path], settings: Settings, issues: list[ParseIssue]) -> list[Learned]:
    """The request text of every session under ``paths`` that has an episode."""
    out: list[Learned] = []
    system = instructions(settings.max_drafts_per_session)
    schema = orjson.dumps(learn_schema(), option=orjson.OPT_INDENT_2).decode()
    for sess in _sessions(paths, settings, issues):
        if sess.trajectory is None:
            continue
        _, digest = digest_of(sess.trajectory, sess.findings, settings.digest_tokens)
        if not digest.chunks:
            continue
        body = "\n\n".join(c.text for c in digest.chunks)
        text = (f"# Instructions\n{system}\n\n# JSON schema of your reply\n```json\n{schema}\n"
                f"```\n\n# The session\n{body}\n"
                + HAND_BACK.format(path=sess.path, sid=sess.session_id))
        out.append(Learned(sess.session_id, sess.path, text, digest.tokens,
                           len(digest.chunks)))
    return out


def write_learned(items: list[Learned], folder: Path) -> list[Path]:
    """Each request as ``folder/<n>-<session id>.md`` (atomic writes); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for n, item in enumerate(items, start=1):
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in item.session_id)[:80]
        path = folder / f"{n:03d}-{safe}.md"
        atomic_write(path, item.text.encode("utf-8"))
        written.append(path)
    return written


@dataclass
class DraftOutcome:
    """What became of one submitted draft."""

    session: str
    title: str
    outcome: str
    """``written``, ``reinforced`` (a duplicate of a playbook, which gains this session),
    ``already-written`` (by an earlier submit of this draft) or ``rejected``."""
    reasons: list[str] = field(default_factory=list)
    exp_id: str | None = None


@dataclass
class SubmitReport:
    """Every draft of a submit file, decided."""

    drafts: list[DraftOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """One line per entry that named no readable session."""

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {"schema": "orf.submit/1", "drafts": [d.__dict__ for d in self.drafts],
                "problems": self.problems}


def read_submission(path: Path) -> list[dict[str, Any]]:
    """The entries of a submit file; ``SubmitError`` naming the file when it is malformed."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise SubmitError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise SubmitError(f"{path}: not JSON: {exc}") from None
    entries = data if isinstance(data, list) else [data]
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("session"), str) or \
                not isinstance(entry.get("drafts"), list):
            raise SubmitError(f"{path}: entry {n}: expected {{\"session\": \"<log path>\", "
                              f"\"drafts\": [...]}}")
    return entries


def submit(path: Path, settings: Settings,
           entries: list[dict[str, Any]] | None = None) -> SubmitReport:
    """Verify, screen, dedupe and write the drafts of ``path`` into the store.

    Args:
        path: The submit file (the module docstring gives its contract).
        settings: Store, ledger and thresholds.
        entries: The file's entries when already read (``read_submission``).

    Returns:
        Per draft what became of it, and a line per entry whose session could not be read.
    """
    from .ledger import Ledger
    from .llm.registry import get_backend
    from .orf.store import Store
    from .results import SessionResult
    from .stages.judge import heuristic_verdict
    from .stages.publish import publish
    from .stages.screening import screen_results
    from .stages.write import prepare, reconcile

    entries = read_submission(path) if entries is None else entries
    report = SubmitReport()
    backend = get_backend(settings.model_copy(update={"backend": "heuristic"}))
    scans: list[SessionScan] = []
    results: list[SessionResult] = []
    for entry in entries:
        log = Path(entry["session"]).expanduser()
        issues: list[ParseIssue] = []
        found = [s for s in (_sessions([log], settings, issues) if log.exists() else [])
                 if s.trajectory is not None]
        wanted = entry.get("session_id")
        sess = next((s for s in found if s.session_id == wanted), None) if wanted else (
            found[0] if found else None)
        if sess is None or sess.trajectory is None:
            why = "no such file" if not log.exists() else (
                f"no session {wanted!r} in it" if wanted and found else "not a session log")
            report.problems.append(f"{log}: {why}")
            for item in entry["drafts"]:
                title = str(item.get("title", "?")) if isinstance(item, dict) else "?"
                report.drafts.append(DraftOutcome(str(log), title, "rejected",
                                                  [f"unknown session: {why}"]))
            continue
        session, _ = digest_of(sess.trajectory, sess.findings, settings.digest_tokens)
        proposals = []
        for item in entry["drafts"]:
            proposal, problem = proposal_of(item, session, "agent", "agent", None)
            if proposal is None:
                title = str(item.get("title", "?")) if isinstance(item, dict) else "?"
                report.drafts.append(DraftOutcome(sess.path, title, "rejected",
                                                  [problem or "malformed draft"]))
            else:
                proposals.append(proposal)
        accepted, rejected = checked(proposals, session)
        for p, problems in rejected:
            report.drafts.append(DraftOutcome(sess.path, p.draft.title, "rejected",
                                              [f"{rule}: {reason}" for rule, reason in problems]))
        verdict = heuristic_verdict(sess.trajectory)
        for p in accepted:
            p.draft.provenance = p.draft.provenance.judged(verdict.outcome, verdict.decided_by)
        scans.append(sess)
        results.append(SessionResult(sess.trajectory, sess.findings, verdict,
                                     [p.draft for p in accepted]))
    store = Store(Path(settings.store))
    with Ledger(settings.ledger_path, store=settings.store) as ledger:
        screened = screen_results(scans, results, backend, ledger, record=True)
        kept = {id(it.draft) for it in screened.items}
        for res in results:
            for d in res.drafts:
                if id(d) not in kept:
                    report.drafts.append(DraftOutcome(res.trajectory.source.path, d.title,
                                                      "rejected", ["screened out"]))
        with store_lock(Path(settings.store), settings.lock_timeout_s):
            prepare(store)
            reconcile(store, ledger)
            published = publish(screened.items, store, ledger, backend, settings,
                                lambda _e: None)
    by_title = {w["title"]: w for w in published.written}
    reinforced = {r["session_id"]: r for r in published.reinforced}
    for it in screened.items:
        w = by_title.get(it.draft.title)
        if w is not None:
            # A related draft is written too, linked to the playbook it resembles.
            note = [f"related to {w['related_to']}"] if w.get("related_to") else []
            report.drafts.append(DraftOutcome(it.draft.provenance.source_paths[0]
                                              if it.draft.provenance.source_paths else "",
                                              it.draft.title, "written", note, w.get("id")))
        else:
            r = reinforced.get(it.session_id, {})
            report.drafts.append(DraftOutcome(
                it.draft.provenance.source_paths[0] if it.draft.provenance.source_paths
                else "", it.draft.title, "reinforced" if r else "already-written", [],
                r.get("exp_id")))
    return report
