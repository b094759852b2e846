"""Snapshot what orf writes, to show a refactor changed no behaviour.

Usage:
    .venv/bin/python bench/output_snapshot.py OUT_DIR                 # write a snapshot
    .venv/bin/python bench/output_snapshot.py OUT_DIR --compare BASE  # ... and diff it with BASE

It runs, offline (heuristic backend), on the bundled ``fixtures/`` and, when present, on the real
samples in ``../shared/trajectories``:

- ``orf analyze --json`` (the ``orf.analysis/1`` lines, one file per input set);
- ``orf mine`` into a fresh copy of the bundled store, then every EXP file and INDEX.md it wrote,
  and the ``--json`` summary.

Run-dependent values are normalized before writing (temporary paths, dates in EXP ids, clock
times, durations), so two runs of the same code give byte-identical snapshots. ``--compare``
prints a unified diff per file that differs and exits 1 when any does.
"""

from __future__ import annotations

import datetime
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "trajectories"
ORF = [sys.executable, "-m", "pipeline"]

# (pattern, replacement): run-dependent text, in the order applied.
TODAY = datetime.date.today().strftime("%Y%m%d")
NORMALIZE = [
    # Only today's ids: the bundled store's own files keep their dates (and their names).
    (re.compile(rf"EXP-{TODAY}-"), "EXP-TODAY-"),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b20\d{2}-\d{2}-\d{2}\b"), "<date>"),
    (re.compile(r"write_key: b2:[0-9a-f]+"), "write_key: <key>"),  # hashes the temporary path
    (re.compile(r'"(elapsed_s|duration_s|seconds|elapsed|latency_ms)": [0-9.]+'), r'"\1": 0'),
]


def _normalize(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<tmp>").replace(str(REPO), "<repo>")
    for pattern, repl in NORMALIZE:
        text = pattern.sub(repl, text)
    return text


def _run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "ORF_BACKEND": "heuristic"}
    env.pop("GEMINI_API_KEY", None)
    env.pop("GOOGLE_API_KEY", None)
    done = subprocess.run([*ORF, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    return f"exit {done.returncode}\n{done.stdout}"


def snapshot(out: Path) -> None:
    """Write the normalized outputs of every input set under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    inputs = {"fixtures": REPO / "fixtures"}
    if SHARED.exists():
        inputs["samples"] = SHARED
    for name, path in inputs.items():
        with tempfile.TemporaryDirectory(prefix="orf-snap-") as tmp_name:
            tmp = Path(tmp_name)
            (out / f"{name}.analyze.jsonl").write_text(
                _normalize(_run(["analyze", str(path), "--json"], tmp), tmp))
            store = tmp / "experiences"
            shutil.copytree(REPO / "experiences", store)
            summary = _run(["mine", str(path), "--backend", "heuristic", "--store", str(store),
                            "--json"], tmp)
            (out / f"{name}.mine.json").write_text(_normalize(summary, tmp))
            for file in sorted(store.rglob("*.md")):
                rel = file.relative_to(store).as_posix()
                rel = _normalize(rel, tmp).replace("/", "__")
                (out / f"{name}.store.{rel}").write_text(_normalize(file.read_text(), tmp))
        print(f"{name}: written", file=sys.stderr)


def compare(out: Path, base: Path) -> int:
    """Print a diff per differing file; 1 when anything differs."""
    names = sorted({p.name for p in out.iterdir()} | {p.name for p in base.iterdir()})
    differing = 0
    for name in names:
        a = (base / name).read_text().splitlines(keepends=True) if (base / name).exists() else []
        b = (out / name).read_text().splitlines(keepends=True) if (out / name).exists() else []
        if a != b:
            differing += 1
            sys.stdout.writelines(difflib.unified_diff(a, b, f"base/{name}", f"now/{name}", n=1))
    print(f"{len(names)} files compared, {differing} differ")
    return 1 if differing else 0


def main(argv: list[str]) -> int:
    """Write a snapshot; compare it with a base snapshot when asked."""
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    out = Path(argv[0])
    snapshot(out)
    if "--compare" in argv:
        return compare(out, Path(argv[argv.index("--compare") + 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
