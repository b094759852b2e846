"""LLM economy over the real samples: prompt tokens per session vs the whole transcript,
and model calls per session (first run and rerun), against the fake Gemini server.

Run: .venv/bin/python bench/llm_economy.py [PATH ...]   (default ../shared/trajectories)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from google import genai
from google.genai import types

from pipeline.config import Settings
from pipeline.detect import detect_all
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.ledger import Ledger
from pipeline.llm.gemini import GeminiBackend
from pipeline.stages.analysis import analyze_sessions
from pipeline.stages.draft import draft_request, lesson_findings
from pipeline.stages.view import StoreContext, estimate_tokens, transcript_text
from pipeline.testing.fake_gemini import FakeGemini

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared" / "trajectories"


def source_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def main(paths: list[Path]) -> None:
    settings = Settings(backend="gemini")
    store = StoreContext(categories=[("python-env", "Python environments", "imports, venvs"),
                                     ("shell", "Shell commands", "commands and exit codes")],
                         titles=[f"Existing playbook {i}" for i in range(40)])
    issues: list = []
    items = []
    raw_tokens: dict[str, int] = {}
    for src in discover(paths, issues=issues):
        trajs = list(parse_source(src, ParseContext(issues=issues)))
        for traj in trajs:
            items.append((traj, detect_all(traj, settings.detect)))
            raw_tokens[traj.id] = source_bytes(Path(src.path)) // 4 // max(1, len(trajs))
    with FakeGemini() as server, tempfile.TemporaryDirectory() as tmp:
        client = genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=server.url))
        ratios_raw, ratios_norm, prompt_sizes = [], [], []
        drafted: set[str] = set()
        for traj, findings in items:
            chosen, lessons, _notes = lesson_findings(traj, findings,
                                                      settings.max_drafts_per_session)
            if not chosen:
                continue  # no lesson: no draft request is sent
            drafted.add(traj.id)
            backend = GeminiBackend(settings, None, client=client)
            req = draft_request(traj, chosen, backend, store, lessons=lessons,
                                settings=settings)
            sent = estimate_tokens(req.system + req.prompt)
            prompt_sizes.append(sent)
            ratios_raw.append(raw_tokens[traj.id] / sent)
            ratios_norm.append(estimate_tokens(transcript_text(traj)) / sent)
        with Ledger(Path(tmp) / "ledger.db") as ledger:
            analyze_sessions(items, GeminiBackend(settings, ledger, client=client), store, settings)
            first = server.model_calls
            analyze_sessions(items, GeminiBackend(settings, ledger, client=client), store, settings)
            rerun = server.model_calls - first
            rows = ledger.db.execute(
                "SELECT session_id, COUNT(*) FROM llm_calls WHERE status != 'cached'"
                " GROUP BY session_id").fetchall()
            per_session = {str(r[0]): int(r[1]) for r in rows}
    with_findings = [t.id for t, f in items if t.id in drafted]
    without = [t.id for t, f in items if t.id not in drafted]
    print(f"sessions: {len(items)} ({len(with_findings)} with a lesson to draft, "
          f"{len(without)} without)")
    if prompt_sizes:
        print(f"draft prompt tokens per session: median {statistics.median(prompt_sizes):.0f}, "
              f"max {max(prompt_sizes)} (budget {settings.draft_input_tokens} + instructions)")
        print(f"whole raw log / draft prompt: median {statistics.median(ratios_raw):.1f}x, "
              f"min {min(ratios_raw):.1f}x (target >= 10x)")
        raw_total = sum(raw_tokens[t.id] for t, f in items if t.id in drafted)
        print(f"all sessions together: {raw_total} raw log tokens vs {sum(prompt_sizes)} "
              f"prompt tokens = {raw_total / sum(prompt_sizes):.1f}x")
        print(f"normalized transcript / draft prompt: median "
              f"{statistics.median(ratios_norm):.1f}x, min {min(ratios_norm):.1f}x")
    calls = [per_session.get(s, 0) for s in with_findings]
    print(f"model calls, first run: {first} total; per session with a lesson: "
          f"max {max(calls) if calls else 0}, mean {statistics.mean(calls) if calls else 0:.2f} "
          f"(target <= 2); sessions without a lesson: "
          f"{sum(per_session.get(s, 0) for s in without)} calls")
    print(f"model calls, rerun: {rerun} (target 0)")
    print(f"parse issues: {len(issues)}")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [DEFAULT])
