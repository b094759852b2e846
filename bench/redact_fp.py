"""False positives and cost of redaction over the real samples in ../shared/trajectories.

Run: .venv/bin/python bench/redact_fp.py [ROOT] [--examples 3] [--runs 3]

Prints:
- raw scan: placeholders per MB of every sample file, by kind, with examples in context
  (the samples are public sessions: every placeholder there is a false positive unless its
  value has a known token shape);
- parse: the placeholders the step builders put into parsed sessions, by kind;
- cost: parse time of every sample with redaction and with redaction stubbed out (best of
  ``--runs``, CPU time of this process, so other work on a shared machine does not count),
  and redaction's share of it (target: at most a third of parse time, the parse that
  bench/ingest.py measures). ``--slow`` forces the pure-Python hint search (no ``fast`` extra).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _no_redaction import NoSecrets

from pipeline.formats import common
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.privacy import scan

ROOT = Path(__file__).resolve().parent.parent.parent / "shared" / "trajectories"
_PLACEHOLDER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


def _raw_scan(files: list[Path], root: Path, examples: int, context: int) -> None:
    total: Counter[str] = Counter()
    shown: dict[str, list[str]] = defaultdict(list)
    size = 0
    clean = 0
    spent = 0.0
    for path in files:
        text = path.read_text("utf-8", "replace")
        size += len(text.encode())
        t0 = time.process_time()
        hits = scan(text)
        spent += time.process_time() - t0
        clean += not hits
        for h in hits:
            total[h.kind] += 1
            if len(shown[h.kind]) < examples:
                before = text[max(0, h.start - context):h.start].replace("\n", "\\n")
                value = text[h.start:h.end]
                after = text[h.end:h.end + 15].replace("\n", "\\n")
                shown[h.kind].append(f"{path.relative_to(root)}: …{before}<<{value[:24]}>>{after}…")
    mb = size / 1e6
    print(f"raw scan: {len(files)} files, {mb:.1f} MB, {clean} files with no placeholder; "
          f"{spent:.2f} s CPU = {mb / spent:.1f} MB/s (each file scanned whole)")
    print(f"  placeholders: {sum(total.values())} = {sum(total.values()) / mb:.2f} per MB")
    for kind, n in total.most_common():
        print(f"  {kind:24} {n:5}  {n / mb:.2f}/MB")
        for line in shown[kind]:
            print(f"      {line}")


def _parse(paths: list[Path], stub: bool) -> tuple[float, Counter[str], int]:
    issues: list[Any] = []
    found: Counter[str] = Counter()
    kept: list[Any] = []
    steps = 0
    saved = common.redact
    if stub:
        common.redact = lambda s, counts=None: s  # type: ignore[assignment]
    t0 = time.process_time()
    try:
        for src in discover(paths, issues=issues):
            ctx = ParseContext()
            if stub:
                ctx.secrets = NoSecrets()  # type: ignore[assignment]
            for traj in parse_source(src, ctx):
                stack = [traj]
                while stack:
                    t = stack.pop()
                    stack.extend(t.subagents)
                    steps += len(t.steps)
                    if not stub:
                        kept.extend(t.steps)
    finally:
        common.redact = saved
    spent = time.process_time() - t0
    # Counted after the clock stops: the count is the bench's work, not redaction's.
    for s in kept:
        for text in (s.output, s.text, s.action_key):
            found.update(_PLACEHOLDER.findall(text))
    return spent, found, steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", type=Path, default=ROOT)
    ap.add_argument("--examples", type=int, default=3, help="examples shown per kind")
    ap.add_argument("--context", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3, help="parse timings: best of this many")
    ap.add_argument("--slow", action="store_true", help="pure-Python hint search")
    opts = ap.parse_args()
    engine = sys.modules["pipeline.privacy.redact"]
    if opts.slow:
        engine._HINTS.db = None
    print(f"hint search: {'hyperscan' if engine._HINTS.db is not None else 'pure Python'}")
    if not opts.root.is_dir():
        raise SystemExit(f"{opts.root}: no samples folder")
    files = sorted(p for p in opts.root.rglob("*") if p.is_file())
    _raw_scan(files, opts.root, opts.examples, opts.context)

    with_times, without_times = [], []
    found: Counter[str] = Counter()
    steps = 0
    for _ in range(opts.runs):  # alternate, keep the best: the machine is shared
        dt, found, steps = _parse([opts.root], stub=False)
        with_times.append(dt)
        without_times.append(_parse([opts.root], stub=True)[0])
    print(f"\nparse: {steps} steps; placeholders in parsed steps: {sum(found.values())} "
          f"{dict(found)}")
    best_with, best_without = min(with_times), min(without_times)
    cost = best_with - best_without
    print(f"cost: parse {best_without:.2f} s without redaction, {best_with:.2f} s with it: "
          f"redaction {cost:.2f} s = {cost / best_without:.2f} of parse time (target <= 0.33)")


if __name__ == "__main__":
    main()
