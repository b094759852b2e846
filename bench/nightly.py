"""Nightly benchmark: first `orf mine` run vs a rerun over the same corpus.

Builds a corpus of N sessions (default 240) by replicating fixtures/mine with fresh session
ids, task texts and folders, starts the fake Gemini server with a fixed latency per model
call (default 200 ms), and runs the gemini backend (real google-genai SDK, base_url pointed
at the fake server) twice over it. Prints both wall times, the ratio, and the calls sent.

    python bench/nightly.py [--sessions 240] [--latency 0.2] [--concurrency 8] [--jobs N]

Target: the rerun is at least 20x faster than the first run and sends zero calls.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from google import genai
from google.genai import types

from pipeline.config import load_settings
from pipeline.mine import mine
from pipeline.testing.fake_gemini import FakeGemini

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mine"
IDS = {
    "alpha-session.jsonl": "a1f0c2d4-0000-4000-8000-000000000001",
    "beta-session.jsonl": "b2e1d3c5-0000-4000-8000-000000000002",
    "gamma-session.jsonl": "c3f2e4d6-0000-4000-8000-000000000003",
}


def build_corpus(root: Path, n: int) -> None:
    """Write ``n`` sessions under ``root/<project>/<uuid>.jsonl``."""
    texts = {name: (FIX / name).read_text() for name in IDS}
    names = sorted(IDS)
    for i in range(n):
        name = names[i % len(names)]
        sid = str(uuid.UUID(int=(i + 1) * 7919 + 1_000_003))
        text = texts[name].replace(IDS[name], sid).replace(IDS[name][:6], sid[:6])
        text = text.replace(IDS[name][:8], sid[:8])
        # Distinct tasks and folders so every prompt (and cache key) is its own.
        text = text.replace('"content": "', f'"content": "[ticket {i}] ', 1)
        text = text.replace("/home/dev/", f"/home/dev/p{i:04d}/")
        folder = root / f"project-{i % 12:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sid}.jsonl").write_text(text)


def run(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="orf-bench-"))
    try:
        logs = work / "logs"
        build_corpus(logs, args.sessions)
        settings = load_settings({
            "store": work / "experiences", "ledger": work / "ledger.db", "backend": "gemini",
            "jobs": args.jobs or (os.cpu_count() or 1), "concurrency": args.concurrency,
            "max_sessions_per_run": args.sessions * 2,
        })
        with FakeGemini(latency_s=args.latency) as server:
            client = genai.Client(api_key="bench",
                                  http_options=types.HttpOptions(base_url=server.url))
            t0 = time.perf_counter()
            first = mine([logs], settings, client=client)
            t1 = time.perf_counter()
            calls_first = server.model_calls
            second = mine([logs], settings, client=client)
            t2 = time.perf_counter()
            calls_second = server.model_calls - calls_first
        first_s, second_s = t1 - t0, t2 - t1
        print(f"corpus: {args.sessions} sessions, fake latency {args.latency * 1000:.0f} ms/call, "
              f"concurrency {args.concurrency}, jobs {settings.jobs}")
        print(f"first run: {first_s:8.2f} s  {calls_first:4d} calls  "
              f"{first.drafts['new']} new / {first.drafts['related']} related / "
              f"{first.drafts['duplicate']} duplicate drafts, exit {first.exit_code}")
        print(f"rerun:     {second_s:8.2f} s  {calls_second:4d} calls  "
              f"{second.sessions_unchanged} unchanged sessions, exit {second.exit_code}")
        ratio = first_s / second_s if second_s > 0 else float("inf")
        ok = ratio >= 20 and calls_second == 0
        print(f"ratio first/rerun: {ratio:.1f}x  (target >= 20x, zero calls: "
              f"{'met' if ok else 'NOT met'})")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=240)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--jobs", type=int, default=0)
    return run(p.parse_args())


if __name__ == "__main__":
    sys.exit(main())
