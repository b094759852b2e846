"""Provider parity: `orf analyze --draft` over the real samples through each model backend.

The same run through the gemini backend (fake Gemini server), the openai-compatible backend
(fake OpenAI server with json_schema) and the openai-compatible backend on a JSON-mode-only
server. Both fakes fill the request's schema with the same automatic responder, so the
sessions judged, their outcomes and the drafts per session should match; the figures printed
are requests sent (first run and rerun), verdicts, drafts, failures and wall time.

Run: .venv/bin/python bench/provider_parity.py [PATH ...]   (default ../shared/trajectories)
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from pipeline.cli import main as cli
from pipeline.testing.fake_gemini import FakeGemini
from pipeline.testing.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared" / "trajectories"


@contextlib.contextmanager
def environ(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def analyze(paths: list[Path], backend: str, store: Path) -> tuple[list[dict[str, Any]], float]:
    args = ["analyze", *map(str, paths), "--json", "--draft", "--quiet", "--backend", backend,
            "--store", str(store)]
    started = time.perf_counter()
    result = CliRunner().invoke(cli, args)
    elapsed = time.perf_counter() - started
    if result.exit_code not in (0, 3):
        raise SystemExit(f"{backend}: exit {result.exit_code}: {result.output[-500:]}")
    return [orjson.loads(x) for x in result.stdout.splitlines() if x.strip()], elapsed


def summary(rows: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    """Per session: (verdict outcome when a model decided it, else 'log'; drafts)."""
    out = {}
    for row in rows:
        verdict = row.get("verdict") or {}
        by = str(verdict.get("decided_by", ""))
        model = ":" in by and not by.startswith("log")
        out[row["session_id"]] = (verdict.get("outcome", "?") if model else "log",
                                  len(row.get("drafts") or []))
    return out


def run(name: str, paths: list[Path], backend: str, server: Any, count: Any,
        env: dict[str, str]) -> dict[str, tuple[str, int]]:
    with tempfile.TemporaryDirectory() as tmp, environ(ORF_HOME=tmp, **env):
        store = Path(tmp) / "experiences"
        CliRunner().invoke(cli, ["init", str(store)])
        rows, first = analyze(paths, backend, store)
        sent = count(server)
        _again, second = analyze(paths, backend, store)
        resent = count(server) - sent
    per = summary(rows)
    judged = sum(1 for outcome, _ in per.values() if outcome != "log")
    drafts = sum(n for _, n in per.values())
    failures = sum(len(r.get("draft_failures") or []) for r in rows)
    print(f"{name:32} sessions {len(rows):3}  requests {sent:3} (rerun {resent})  "
          f"model verdicts {judged:3}  drafts {drafts:3}  draft failures {failures:3}  "
          f"{first:5.1f} s (rerun {second:4.1f} s)")
    return per


def main(paths: list[Path]) -> None:
    results = {}
    with FakeGemini() as gemini:
        results["gemini"] = run("gemini (fake Gemini)", paths, "gemini", gemini,
                                lambda s: s.count(":generateContent"),
                                {"GEMINI_API_KEY": "bench", "GOOGLE_GEMINI_BASE_URL": gemini.url})
    for label, schema in (("json_schema", True), ("JSON mode", False)):
        with FakeOpenAI(json_schema=schema) as fake:
            results[label] = run(f"openai-compatible ({label})", paths, "openai-compatible",
                                 fake, lambda s: len(s.completions),
                                 {"ORF_OPENAI_BASE_URL": fake.url, "ORF_OPENAI_MODEL": "bench"})
    base = results["gemini"]
    for label in ("json_schema", "JSON mode"):
        other = results[label]
        differ = sorted(k for k in base.keys() | other.keys() if base.get(k) != other.get(k))
        shown = f": {differ[:5]}" if differ else ""
        print(f"gemini vs openai-compatible ({label}): {len(differ)} of {len(base)} session ids "
              f"differ in outcome or drafts{shown}")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [DEFAULT])
