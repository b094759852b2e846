"""Snapshot what orf writes through a model backend, to show a refactor changed no behaviour there.

Usage:
    .venv/bin/python bench/model_snapshot.py OUT_DIR [--code DIR] [--compare BASE]

``output_snapshot.py`` covers the offline backend; this runs the gemini backend against the
fake Gemini server (``pipeline.testing.fake_gemini``, which fills each request's schema) on the
bundled ``fixtures/`` and, when present, the real samples: ``orf analyze --draft --json``, then
``orf mine`` into a fresh copy of the bundled store (every EXP file and INDEX.md), and the
ledger's ``llm_calls`` rows (key, model, purpose, session, status, tokens, cost, error) sorted.
``--code DIR`` runs the ``pipeline`` package found in DIR (a checkout of the code before a
change), so the base snapshot is made by the same script. Normalized as ``output_snapshot``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from output_snapshot import REPO, SHARED, _normalize, compare

from pipeline.testing.fake_gemini import FakeGemini

CALL_COLUMNS = ("cache_key, model, purpose, session_id, status, tokens_in, tokens_out, cost_usd,"
                " batch, error")


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    return f"exit {done.returncode}\n{done.stdout}"


def _calls(ledger: Path) -> str:
    with sqlite3.connect(ledger) as db:
        rows = db.execute(f"SELECT {CALL_COLUMNS} FROM llm_calls").fetchall()
    return "".join(json.dumps(list(r)) + "\n" for r in sorted(rows, key=repr))


def snapshot(out: Path, code: Path) -> None:
    """Write the normalized outputs of every input set under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    inputs = {"fixtures": REPO / "fixtures"}
    if SHARED.exists():
        inputs["samples"] = SHARED
    for name, path in inputs.items():
        with FakeGemini() as fake, tempfile.TemporaryDirectory(prefix="orf-msnap-") as tmp_name:
            tmp = Path(tmp_name)
            store, ledger = tmp / "experiences", tmp / "ledger.db"
            shutil.copytree(REPO / "experiences", store)
            env = {**os.environ, "PYTHONPATH": str(code), "GEMINI_API_KEY": "test",
                   "GOOGLE_GEMINI_BASE_URL": fake.url, "ORF_BACKEND": "gemini",
                   "ORF_STORE": str(store), "ORF_LEDGER": str(ledger)}
            env.pop("GOOGLE_API_KEY", None)
            analyzed = _run(["analyze", str(path), "--draft", "--json"], tmp, env)
            (out / f"{name}.analyze.jsonl").write_text(_normalize(analyzed, tmp))
            mined = _run(["mine", str(path), "--json"], tmp, env)
            (out / f"{name}.mine.json").write_text(_normalize(mined, tmp))
            for file in sorted(store.rglob("*.md")):
                rel = _normalize(file.relative_to(store).as_posix(), tmp).replace("/", "__")
                (out / f"{name}.store.{rel}").write_text(_normalize(file.read_text(), tmp))
            (out / f"{name}.llm_calls.jsonl").write_text(_normalize(_calls(ledger), tmp))
        print(f"{name}: written", file=sys.stderr)


def main(argv: list[str]) -> int:
    """Write a snapshot; compare it with a base snapshot when asked."""
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    code = Path(argv[argv.index("--code") + 1]) if "--code" in argv else REPO
    out = Path(argv[0])
    snapshot(out, code.resolve())
    if "--compare" in argv:
        return compare(out, Path(argv[argv.index("--compare") + 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
