"""Retrieval quality and speed of `orf search` and `orf hook` on playbooks mined from real logs.

1. Mines ../shared/trajectories offline (`orf mine --backend heuristic`) into a temp store.
2. Queries are the raw outputs of the failing steps each playbook was mined from (the error
   text an agent sees, not the playbook's own words), as logged and as another project would
   print them (quoted text, paths and numbers replaced); recall@1/@3 = share of queries whose
   playbook ranks first / in the top 3. Reported on the mined store alone and with the mined
   playbooks hidden among synthetic ones (--n, default 10,000).
3. Search latency on the large store: one query in-process (index loaded, as `orf mcp` holds
   it), the cached index load, and the cold `orf search` command; p50/p95.
4. Hook latency: the real `orf hook claude-code` console script on a --hook-n (1,000) store,
   with a PostToolUseFailure payload per query; p50/p95 of the warm (cached index) runs and the
   first, cache-building run.

Usage:
    python bench/retrieval.py [--samples ../shared/trajectories] [--n 10000] [--hook-n 1000]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pipeline import ParseContext, discover, parse_source
from pipeline.agents.bm25 import tokenize
from pipeline.agents.hook import trap_matches
from pipeline.agents.search import SearchIndex, error_focus
from pipeline.orf import Experience, Store
from pipeline.orf.render import render_body, render_frontmatter

REPO = Path(__file__).resolve().parent.parent
ORF = Path(sys.executable).parent / "orf"
WORDS = ("cannot open connect resolve import load parse decode read write find build compile "
         "link fetch install lock bind spawn render serialize migrate allocate validate "
         "authenticate schedule").split()
ERRORS = ("TypeError KeyError ValueError OSError ImportError RuntimeError AttributeError "
          "PermissionError TimeoutError ConnectionRefusedError FileNotFoundError AssertionError "
          "SyntaxError IndexError").split()
THINGS = ("config schema socket module package manifest fixture token session cache index "
          "worker queue database migration template bundle container volume").split()


def parse_steps(spec: str) -> set[int]:
    """'21,23-25' -> {21, 23, 24, 25}."""
    out: set[int] = set()
    for part in str(spec).split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.add(int(part))
    return out


def mine(samples: Path, tmp: Path) -> Path:
    store = tmp / "mined" / "experiences"
    subprocess.run([str(ORF), "init", "--store", str(store)], check=True, capture_output=True)
    t0 = time.perf_counter()
    done = subprocess.run([str(ORF), "mine", str(samples), "--store", str(store), "--ledger",
                           str(tmp / "mined" / "ledger.db"), "--backend", "heuristic", "--quiet"],
                          capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"orf mine failed ({done.returncode}): {done.stderr[-2000:]}")
    print(f"mined {samples} in {time.perf_counter() - t0:.1f}s: "
          f"{len(Store(store).experiences())} playbooks")
    return store


def queries(store: Path) -> list[tuple[str, str]]:
    """(expected id, error text) for every distinct failing output a playbook was mined from."""
    out: list[tuple[str, str]] = []
    cache: dict[str, list[Any]] = {}
    for exp in sorted(Store(store).experiences(), key=lambda e: e.id):
        seen: set[str] = set()
        for session in (exp.provenance or {}).get("sessions", []):
            if not isinstance(session, dict) or not session.get("path"):
                continue
            path = str(session["path"])
            if path not in cache:
                cache[path] = [t for src in discover([Path(path)], issues=[])
                               for t in parse_source(src, ParseContext())]
            wanted = parse_steps(session.get("steps", ""))
            for traj in cache[path]:
                if traj.id != session.get("id"):
                    continue
                for step in traj.steps:
                    text = (step.output or "").strip()
                    if step.index in wanted and step.is_error and text and text not in seen:
                        seen.add(text)
                        out.append((exp.id, text))
    return out


_QUOTED = re.compile(r"(['\"`])([^'\"`\n]{1,200})\1")
_PATH = re.compile(r"(?:[\w.@-]+/)+([\w@-]+)(\.\w+)?")
_NUMBER = re.compile(r"\b\d+\b")


def other_session(text: str, rng: random.Random) -> str:
    """The same error as another project would print it: quoted text, paths and numbers
    replaced by made-up ones (the error's own words stay)."""
    def ident() -> str:
        return f"{rng.choice(THINGS)}_{rng.choice(WORDS)}{rng.randrange(100)}"

    text = _QUOTED.sub(lambda m: f"{m.group(1)}{ident()}{m.group(1)}", text)
    text = _PATH.sub(lambda m: f"src/{ident()}/{ident()}{m.group(2) or ''}", text)
    return _NUMBER.sub(lambda m: str(rng.randrange(1, 999)), text)


def recall(index: SearchIndex, qs: list[tuple[str, str]]) -> tuple[float, float, list[str]]:
    at1 = at3 = 0
    misses = []
    for exp_id, text in qs:
        ranked = [h.doc.id for h in index.search(text, 3)]
        at1 += ranked[:1] == [exp_id]
        at3 += exp_id in ranked
        if exp_id not in ranked:
            misses.append(f"{exp_id} <- {text[:90]!r} got {ranked}")
    n = max(1, len(qs))
    return at1 / n, at3 / n, misses


def synthetic(rng: random.Random, n: int, day: datetime.date) -> tuple[str, str, str]:
    """(domain, exp id, file text) of a plausible playbook with a made-up error."""
    exc, verb, thing = rng.choice(ERRORS), rng.choice(WORDS), rng.choice(THINGS)
    name = f"{rng.choice(THINGS)}_{rng.randrange(10_000)}"
    error = f"{exc}: {verb} {thing} '{name}' failed"
    domain = f"synthetic-{n % 40}"
    exp_id = f"EXP-{day:%Y%m%d}-{n % 10_000:04d}"
    text = render_frontmatter(
        exp_id=exp_id, title=f"`{error}`: check the {thing} before retrying {verb}",
        description=f"Trigger when `{rng.choice(THINGS)}` fails with {exc} (`{error}`) and the "
                    f"next move would be to {verb} it again unchanged.",
        domain=domain, keywords=[verb, thing, exc.lower(), rng.choice(THINGS)],
        complexity="low", created_at=day.isoformat(),
    ) + render_body(
        objective=f"Get the {thing} to {verb}.",
        trap=f"The agent retried `{verb} {name}` {rng.randrange(2, 6)} times; each attempt "
             f"failed with `{error}`.",
        insight="Find out what must change before running it again.",
        validated_path=f"1. Read the {thing}.\n2. Fix {name}.\n3. {verb.title()} again.",
        checklist=[f"The {thing} {verb}s"])
    return domain, exp_id, text


def big_store(mined: Path, dest: Path, n: int, seed: int = 17) -> Path:
    """A store of ``n`` playbooks: the mined ones plus synthetic ones (files written directly)."""
    shutil.copytree(mined, dest)
    rng = random.Random(seed)
    existing = len(Store(dest).experiences())
    for number in range(n - existing):
        day = datetime.date(2025, 1, 1) + datetime.timedelta(days=number // 10_000)
        domain, exp_id, text = synthetic(rng, number, day)
        folder = dest / domain
        folder.mkdir(exist_ok=True)
        (folder / f"{exp_id}.md").write_text(text, encoding="utf-8")
    return dest


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(values: list[float]) -> str:
    return (f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {pct(values, 0.95) * 1000:.1f}"
            f" ms (n={len(values)})")


def search_speed(store: Path, qs: list[tuple[str, str]], env: dict[str, str]) -> None:
    t0 = time.perf_counter()
    SearchIndex.load(store, use_cache=False)
    build = time.perf_counter() - t0
    SearchIndex.load(store)  # writes the cache
    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        index = SearchIndex.load(store)
        loads.append(time.perf_counter() - t0)
    times = []
    for _ in range(3):
        for _, text in qs:
            t0 = time.perf_counter()
            index.search(text, 5)
            times.append(time.perf_counter() - t0)
    cli = []
    for _, text in qs[:10]:
        t0 = time.perf_counter()
        subprocess.run([str(ORF), "search", text[:2000], "--store", str(store)], check=True,
                       capture_output=True, env=env)
        cli.append(time.perf_counter() - t0)
    print(f"  index build (no cache, parses every file): {build:.2f}s")
    print(f"  cached index load: {ms(loads)}")
    print(f"  query, index in memory: {ms(times)}")
    print(f"  `orf search` command, cached index: {ms(cli)}")


def hook_speed(store: Path, qs: list[tuple[str, str]], env: dict[str, str]) -> None:
    def payload(number: int, text: str) -> str:
        return json.dumps({
            "session_id": f"bench-{number}", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
            "permission_mode": "default", "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash", "tool_input": {"command": f"run {number}"},
            "tool_use_id": f"toolu_{number}", "error": text, "is_interrupt": False})

    def run(number: int, text: str) -> tuple[float, bool]:
        t0 = time.perf_counter()
        done = subprocess.run([str(ORF), "hook", "claude-code", "--store", str(store)],
                              input=payload(number, text), capture_output=True, text=True,
                              env=env)
        spent = time.perf_counter() - t0
        assert done.returncode == 0, done.stderr
        return spent, bool(done.stdout.strip())

    cold, _ = run(0, qs[0][1])
    warm: list[float] = []
    answered = 0
    for number, (_, text) in enumerate(qs * 3, start=1):
        spent, replied = run(number, text)
        warm.append(spent)
        answered += replied
    print(f"  first call (builds the cache): {cold * 1000:.0f} ms")
    print(f"  warm calls: {ms(warm)}; replied with a playbook on {answered}/{len(warm)}")
    t0 = time.perf_counter()
    for _ in range(5):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(f"  (bare python startup on this machine: {(time.perf_counter() - t0) / 5 * 1000:.0f}"
          " ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, default=REPO.parent / "shared" / "trajectories")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--hook-n", type=int, default=1_000)
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    if not args.samples.is_dir():
        sys.exit(f"{args.samples} not found (the real samples live in ../shared/trajectories)")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = dict(os.environ, ORF_CACHE_DIR=str(tmp / "cache"))
        os.environ["ORF_CACHE_DIR"] = env["ORF_CACHE_DIR"]
        mined = mine(args.samples, tmp)
        qs = queries(mined)
        exps: list[Experience] = Store(mined).experiences()
        print(f"queries: {len(qs)} failing-step outputs of {len({q[0] for q in qs})} of "
              f"{len(exps)} playbooks")
        # Some loops mix errors (an edit retried with a missing argument, then with stale
        # text): the outputs that show the playbook's own recorded error are its trap's.
        docs = {d.id: d for d in SearchIndex.load(mined).docs}
        own = [(e, t) for e, t in qs
               if trap_matches(docs[e], set(tokenize(error_focus(t))))]
        print(f"  of which {len(own)} show the playbook's own recorded error (its trap)")
        rng = random.Random(5)
        batches = {"as logged": qs, "other names/paths/numbers":
                   [(exp_id, other_session(text, rng)) for exp_id, text in qs],
                   "its trap's outputs only": own}
        for label, store in (("mined store", mined),
                             (f"mined among {args.n:,}", big_store(mined, tmp / "big", args.n))):
            index = SearchIndex.load(store)
            for kind, batch in batches.items():
                r1, r3, misses = recall(index, batch)
                print(f"recall, {label}, queries {kind}: @1 {r1:.2f}, @3 {r3:.2f}")
                if args.show_misses:
                    for miss in misses:
                        print(f"    miss: {miss}")
        print(f"search latency, {args.n:,} playbooks:")
        search_speed(tmp / "big", qs, env)
        print(f"hook latency, {args.hook_n:,} playbooks (`orf hook claude-code`, subprocess):")
        hook_speed(big_store(mined, tmp / "hook", args.hook_n), qs, env)


if __name__ == "__main__":
    main()
