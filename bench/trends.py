"""``orf trends`` over a ledger of N sessions: wall time and peak memory (target < 5 s, < 300 MB).

Builds a store of playbooks and a ledger whose history holds N sessions over a year (four
agents, a third of the sessions hitting one or two of 300 traps; traps with a playbook get
rarer after it arrives), then runs ``orf trends --json`` and ``--html`` as child processes
and reads their peak RSS from the kernel.

Usage:
    python bench/trends.py [--sessions 100000] [--playbooks 60] [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.ledger import Ledger
from pipeline.orf import init_store

DAY = 86400.0
START = datetime.datetime(2026, 1, 5, tzinfo=datetime.timezone.utc).timestamp()
AGENTS = [("claude-code", "claude-sonnet-4-5"), ("codex", "gpt-5-codex"),
          ("gemini-cli", "gemini-2.5-pro"), ("openhands", "claude-sonnet-4-5")]


def build(root: Path, sessions: int, playbooks: int, seed: int = 7) -> tuple[Path, Path]:
    """A store with ``playbooks`` playbooks and a ledger with ``sessions`` sessions."""
    rng = random.Random(seed)
    store = init_store(root / "experiences")
    traps = [f"b2:{i:032x}" for i in range(300)]
    arrival: dict[str, float] = {}
    for i in range(playbooks):
        day = datetime.date(2026, 1, 5) + datetime.timedelta(days=rng.randrange(30, 300))
        store.create_experience(
            domain=f"domain-{i % 6}", title=f"Playbook {i}", description="Trigger when x.",
            keywords=["a"], complexity="low", objective="o", trap="t",
            insight="A general principle.", validated_path="1. Run `pytest -x`.",
            checklist=["it works"], created_at=day,
            provenance={"signature": traps[i], "wasted_steps": 3})
        arrival[traps[i]] = datetime.datetime(day.year, day.month, day.day,
                                              tzinfo=datetime.timezone.utc).timestamp()
    ledger = root / "ledger.db"
    with Ledger(ledger, store=store.root) as led:
        batch = []
        for n in range(sessions):
            start = START + rng.random() * 360 * DAY
            agent, model = AGENTS[n % len(AGENTS)]
            findings = []
            if rng.random() < 0.33:
                for _ in range(rng.choice((1, 1, 2))):
                    sig = traps[min(int(rng.expovariate(1 / 40)), len(traps) - 1)]
                    if start > arrival.get(sig, float("inf")) and rng.random() < 0.6:
                        continue  # the playbook helped
                    findings.append({"signature": sig, "kind": "rerun_unchanged",
                                     "wasted_steps": rng.randint(1, 6),
                                     "wasted_tokens": rng.randint(500, 20000),
                                     "wasted_seconds": rng.random() * 300})
            batch.append({"session_id": f"sess-{n:07d}", "path": f"/logs/{n}.jsonl",
                          "format": "claude-code", "agent": agent, "model": model,
                          "started_at": start, "steps": rng.randint(5, 200),
                          "programs": "git pytest python", "findings": findings})
            if len(batch) == 5000:
                led.record_history(batch)
                batch = []
        led.record_history(batch)
    return store.root, ledger


def run(args: list[str]) -> tuple[float, float, bytes]:
    """Wall seconds and peak RSS (MB) of one ``orf`` child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          check=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest child so far: only a new maximum is attributable.
    return wall, max(peak, before) / 1024, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--playbooks", type=int, default=60)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        store, ledger = build(Path(tmp), args.sessions, args.playbooks)
        print(f"built: {args.sessions:,} sessions, {args.playbooks} playbooks in "
              f"{time.perf_counter() - t0:.1f}s; ledger {ledger.stat().st_size / 1e6:.1f} MB")
        base = ["trends", "--store", str(store), "--ledger", str(ledger)]
        walls, peak, out = [], 0.0, b""
        for _ in range(args.runs):
            wall, peak_mb, out = run([*base, "--json"])
            walls.append(wall)
            peak = max(peak, peak_mb)
        import orjson

        doc = orjson.loads(out)
        statuses: dict[str, int] = {}
        for pb in doc["playbooks"]:
            statuses[pb["status"]] = statuses.get(pb["status"], 0) + 1
        print(f"orf trends --json: best {min(walls):.2f}s of {args.runs} (process start "
              f"included), peak RSS {peak:.0f} MB; {doc['sessions']:,} sessions, "
              f"statuses {statuses}")
        wall, peak_mb, _ = run([*base, "--html", str(Path(tmp) / "t.html")])
        print(f"orf trends --html: {wall:.2f}s, peak RSS {max(peak, peak_mb):.0f} MB, page "
              f"{(Path(tmp) / 't.html').stat().st_size / 1e3:.0f} kB")
        print("target: < 5 s and < 300 MB")


if __name__ == "__main__":
    main()
