"""Playbook quality on the real samples, offline: what ``orf mine --backend heuristic`` writes.

Prints: playbooks written and reinforced, findings without a lesson (by reason), every draft
of the run through the quality gate (count per problem, target 0), the share of sessions with
a resolved loop that yield a playbook or a reinforcement (target >= 1/3), and the Gemini draft
prompt per session next to its transcript (median ratio, target >= 10x). Titles written are
listed so they can be read.

Run: .venv/bin/python bench/playbook_quality.py [PATH ...]   (default ../shared/trajectories)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

from pipeline.config import Settings
from pipeline.detect import detect_all
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.llm.heuristic import HeuristicBackend
from pipeline.mine import mine
from pipeline.stages.draft import draft_request, lesson_findings
from pipeline.stages.heuristic_draft import heuristic_drafts
from pipeline.stages.quality import PROBLEMS, quality_problems
from pipeline.stages.view import StoreContext, estimate_tokens, transcript_text

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared" / "trajectories"


def _sessions(paths: list[Path]) -> list[tuple[object, list[object]]]:
    settings = Settings()
    out = []
    issues: list[object] = []
    for src in discover(paths, issues=issues):  # type: ignore[arg-type]
        for traj in parse_source(src, ParseContext(issues=issues)):  # type: ignore[arg-type]
            for t in [traj, *traj.subagents]:
                out.append((t, detect_all(t, settings.detect)))
    return out


def main(paths: list[Path]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(backend="heuristic", store=Path(tmp) / "experiences",
                            ledger=Path(tmp) / "ledger.db", jobs=1)
        summary = mine(paths, settings)
    print(f"sessions: {summary.sessions_seen} seen, {summary.sessions_selected} selected "
          f"(min_wasted_steps={settings.min_wasted_steps}), {summary.findings} findings")
    print(f"playbooks written: {len(summary.written)}; reinforcements: "
          f"{len(summary.reinforced)}; dropped by screen or gate: "
          f"{summary.drafts.get('dropped', 0)} {dict(summary.dropped) or ''}")
    print("no lesson (findings of selected sessions, by reason):")
    for reason, n in summary.no_lesson.most_common():
        print(f"  {n:4d}  {reason}")
    for w in summary.written:
        print(f"  wrote: {w['title']}")

    # Every session, every finding, both views: the offline drafts through the gate and the
    # Gemini draft prompt against the transcript.
    defaults = Settings()
    backend = HeuristicBackend(defaults)
    problems: Counter[str] = Counter()
    drafts = resolved = taught = 0
    sizes: list[tuple[int, int, str]] = []
    selected_resolved: list[str] = []
    for traj, findings in _sessions(paths):
        made = heuristic_drafts(traj, findings, None, backend, StoreContext(), defaults)  # type: ignore[arg-type]
        drafts += len(made.drafts)
        for d in made.drafts:
            problems.update(p.split(":")[0] for p in quality_problems(d))
        has_resolution = any(f.resolution is not None for f in findings)  # type: ignore[attr-defined]
        chosen, lessons, _notes = lesson_findings(traj, findings, 3)  # type: ignore[arg-type]
        if has_resolution or lessons:
            resolved += 1
            taught += bool(made.drafts)
            if sum(f.wasted_steps for f in findings) >= settings.min_wasted_steps:  # type: ignore[attr-defined]
                selected_resolved.append(traj.id)  # type: ignore[attr-defined]
        if chosen:
            req = draft_request(traj, chosen, backend, StoreContext(),  # type: ignore[arg-type]
                                lessons=lessons, settings=defaults)
            sent = estimate_tokens(req.system + req.prompt)
            sizes.append((sent, estimate_tokens(transcript_text(traj)), traj.id))  # type: ignore[arg-type, attr-defined]
    print(f"quality gate over all {drafts} offline drafts (every session, no selection):")
    for name in PROBLEMS:
        print(f"  {problems.get(name, 0):4d}  {name}")
    share = taught / resolved if resolved else 0.0
    print(f"sessions with a resolved loop: {resolved}; yielding a playbook or reinforcement: "
          f"{taught} ({share:.0%}, target >= 33%)")
    yielded = {w["session_id"] for w in summary.written} | {
        r["session_id"] for r in summary.reinforced}
    mined = [sid for sid in selected_resolved if sid in yielded]
    print(f"  in the mine run (sessions over min_wasted_steps): {len(selected_resolved)} with a "
          f"resolved loop, {len(mined)} yielding "
          f"({len(mined) / max(1, len(selected_resolved)):.0%})")
    if sizes:
        ratios = [t / s for s, t, _ in sizes]
        print("draft prompt vs transcript per session (tokens):")
        for (sent, whole, sid), ratio in sorted(zip(sizes, ratios, strict=True),
                                                key=lambda x: x[1]):
            print(f"  {sent:6d} prompt  {whole:8d} transcript  {ratio:7.1f}x  {sid[:40]}")
        print(f"median prompt {statistics.median(s for s, _, _ in sizes):.0f} tokens; median "
              f"ratio {statistics.median(ratios):.1f}x (target >= 10x), min {min(ratios):.1f}x")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [DEFAULT])
