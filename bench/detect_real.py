"""Run the loop detector over the real samples in ../shared/trajectories and print what it flags.

Usage:
    .venv/bin/python bench/detect_real.py [PATH ...] [--verbose]

Prints one row per session (format, file, steps, findings by kind, wasted steps) and, with
--verbose, every finding with its evidence so a person can judge each flag.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from pipeline.detect import detect_all, top_signatures
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.model import Finding, ParseIssue

ROOT = Path(__file__).resolve().parent.parent.parent / "shared" / "trajectories"


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv or "-v" in argv
    paths = [Path(a) for a in argv if not a.startswith("-")] or [ROOT]
    if not all(p.exists() for p in paths):
        print(f"not found: {[str(p) for p in paths if not p.exists()]}")
        return 1
    issues: list[ParseIssue] = []
    pairs: list[tuple[str, Finding]] = []
    total_steps = total_wasted = 0
    started = time.perf_counter()
    print(f"{'format':<15} {'session file':<58} {'steps':>6} {'wasted':>6}  findings")
    for src in discover(paths, issues=issues):
        ctx = ParseContext()
        for traj in parse_source(src, ctx):
            for t in [traj, *traj.subagents]:
                findings = detect_all(t)
                wasted = sum(f.wasted_steps for f in findings)
                total_steps += len(t.steps)
                total_wasted += wasted
                kinds = Counter(f.kind for f in findings)
                name = Path(t.source.path).name[-56:]
                desc = ", ".join(f"{k}:{n}" for k, n in sorted(kinds.items())) or "-"
                print(f"{t.source.format:<15} {name:<58} {len(t.steps):>6} {wasted:>6}  {desc}")
                pairs.extend((t.id, f) for f in findings)
                if verbose:
                    for f in findings:
                        print(f"    [{f.kind} {f.severity} w={f.wasted_steps}] {f.summary}")
                        for ev in f.evidence:
                            print(f"        #{ev.step} {ev.quote[:130]}")
                        if f.resolution:
                            print(f"        => {f.resolution.change[:120]}")
    elapsed = time.perf_counter() - started
    print(f"\n{total_steps} steps, {total_wasted} wasted, {elapsed:.2f}s (parse + detect)")
    print("\ntop recurring signatures:")
    for row in top_signatures(pairs, limit=10):
        print(f"  {row['sessions']:>2} sessions {row['occurrences']:>3}x {row['kind']:<16} "
              f"{row['summary'][:80]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
