"""False-positive check and throughput of the redaction gate over ../shared/trajectories.

Run: .venv/bin/python bench/redact_fp.py [--context 40] [--limit 20]
Prints, per file, the placeholders by kind with a little context, then totals and MB/s.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from pipeline.llm.redact import redact, scan

ROOT = Path(__file__).resolve().parent.parent.parent / "shared" / "trajectories"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", type=Path, default=ROOT)
    ap.add_argument("--context", type=int, default=40)
    ap.add_argument("--limit", type=int, default=20, help="hits shown per file")
    opts = ap.parse_args()
    files = sorted(p for p in opts.root.rglob("*") if p.is_file())
    texts = [(p, p.read_text("utf-8", "replace")) for p in files]
    total: Counter[str] = Counter()
    for path, text in texts:
        hits = scan(text)
        if not hits:
            continue
        by_kind = Counter(h.kind for h in hits)
        total.update(by_kind)
        print(f"== {path.relative_to(opts.root)}: {dict(by_kind)}")
        for h in hits[: opts.limit]:
            a = max(0, h.start - opts.context)
            before = text[a:h.start].replace("\n", "\\n")
            secret = text[h.start:h.end]
            shown = secret[:6] + "..." if len(secret) > 6 else secret
            after = text[h.end:h.end + 15].replace("\n", "\\n")
            print(f"   {h.kind:22} …{before}<<{shown}>>{after}…")
    size = sum(len(t.encode()) for _, t in texts)
    t0 = time.perf_counter()
    rounds = 3
    for _ in range(rounds):
        for _, text in texts:
            redact(text)
    dt = (time.perf_counter() - t0) / rounds
    print(f"\nfiles: {len(texts)}  placeholders: {sum(total.values())}  by kind: {dict(total)}")
    print(f"throughput: {size / 1e6:.1f} MB in {dt:.2f} s = {size / 1e6 / dt:.1f} MB/s"
          " (whole files)")
    lines = [ln for _, t in texts for ln in t.splitlines()]
    t0 = time.perf_counter()
    for ln in lines:
        redact(ln)
    dt = time.perf_counter() - t0
    print(f"per line: {len(lines)} lines in {dt:.2f} s = {size / 1e6 / dt:.1f} MB/s")


if __name__ == "__main__":
    main()
