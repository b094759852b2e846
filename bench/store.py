"""Store speed: creating N playbooks one by one (each locked, atomic, fsynced) and validating.

Usage:
    python bench/store.py [--n 200]
"""

from __future__ import annotations

import argparse
import datetime
import tempfile
import time
from pathlib import Path

from pipeline.orf import init_store, validate_store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = init_store(Path(tmp) / "experiences")
        t0 = time.perf_counter()
        for i in range(args.n):
            store.create_experience(
                domain=f"domain-{i % 5}", title=f"Playbook {i}", description="Trigger when x.",
                keywords=["a", "b", "c"], complexity="low", objective="o", trap="t",
                insight="A general principle.", validated_path="1. do it",
                checklist=["it works"], created_at=datetime.date(2026, 11, 30),
            )
        create = time.perf_counter() - t0
        t0 = time.perf_counter()
        problems = validate_store(store.root)
        check = time.perf_counter() - t0
    print(f"create: {args.n} playbooks in {create:.2f}s = {create / args.n * 1000:.1f} ms each "
          "(lock + atomic write + fsync of file and INDEX.md)")
    print(f"validate: {args.n} playbooks in {check:.2f}s, {len(problems)} problems")


if __name__ == "__main__":
    main()
