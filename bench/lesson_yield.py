"""What a reader gets from every real sample: episodes, digest size, calls, and verified drafts.

For each format folder of ``../shared/trajectories`` (the December 2026 batch included, its
held-out third left out unless ``--held-out``): sessions, sessions with an episode, digest
tokens per session (median, max) against the raw log's size (median ratio), and model calls
per session. Given recorded replies (``--replies FILE``: a JSON object mapping session ids to a
learn reply, as ``tests/data/learn_replies.json`` holds), also the drafts proposed, verified and
rejected by rule. ``--write-requests DIR`` writes each request (system text, then the digest)
as ``DIR/<n>.md`` for someone to answer.

Usage:
    python bench/lesson_yield.py
    python bench/lesson_yield.py --replies tests/data/learn_replies.json
    python bench/lesson_yield.py --write-requests /tmp/requests --only-ids ids.txt
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _samples import SHARED, december_batch, held_out  # noqa: E402

from pipeline.config import Settings  # noqa: E402
from pipeline.formats.base import ParseContext  # noqa: E402
from pipeline.formats.discover import discover, parse_source  # noqa: E402
from pipeline.lessons.digest import build_digest  # noqa: E402
from pipeline.lessons.episodes import build_episodes  # noqa: E402
from pipeline.llm.registry import get_backend  # noqa: E402
from pipeline.stages.learn import checked, instructions, learn_schema, parse_learn_reply  # noqa: E402


def sessions(root: Path, include_held_out: bool):
    """(format folder, trajectory) of every real sample session."""
    dec = december_batch(root)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = [p for p in sorted(folder.rglob("*")) if p.is_file()
                 and not p.name.startswith(("SCHEMA-REF__", "DOC__"))
                 and (include_held_out or not (p.name in dec and held_out(p.name)))]
        ctx = ParseContext()
        for src in discover(files, issues=[]):
            for traj in parse_source(src, ctx):
                yield folder.name, traj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=SHARED)
    ap.add_argument("--replies", type=Path)
    ap.add_argument("--write-requests", type=Path)
    ap.add_argument("--only-ids", type=Path, help="file of session ids to write requests for")
    ap.add_argument("--held-out", action="store_true", help="include the held-out third")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each rejection")
    ap.add_argument("--budget", type=int, default=Settings().digest_tokens)
    args = ap.parse_args()
    if not args.root.is_dir():
        sys.exit(f"no samples at {args.root}")
    replies = orjson.loads(args.replies.read_bytes())["sessions"] if args.replies else {}
    only = set(args.only_ids.read_text().split()) if args.only_ids else None
    backend = get_backend(Settings(backend="heuristic"))
    rows: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
    proposed, verified = Counter(), Counter()
    rejected: dict[str, Counter[str]] = defaultdict(Counter)
    written = 0
    system = instructions(Settings().max_drafts_per_session)
    schema = orjson.dumps(learn_schema()).decode()
    for fmt, traj in sessions(args.root, args.held_out):
        session = build_episodes(traj)
        digest = build_digest(session, args.budget)
        raw = traj.source.size or digest.raw_tokens * 4
        rows[fmt].append((len(session.episodes), digest.tokens, (raw + 3) // 4,
                          len(digest.chunks)))
        if args.write_requests and digest.chunks and (only is None or traj.id in only):
            args.write_requests.mkdir(parents=True, exist_ok=True)
            for n, chunk in enumerate(digest.chunks):
                written += 1
                name = f"{traj.id}" + (f"#{n}" if n else "")
                (args.write_requests / f"{written:03d}.md").write_text(
                    f"<!-- request for session {name} -->\n# System\n{system}\n\n"
                    f"# JSON schema of the reply\n{schema}\n\n# User\n{chunk.text}\n", "utf-8")
        for reply in replies.get(traj.id, {}).get("chunks", {}).values():
            parsed = parse_learn_reply(orjson.dumps(reply).decode(), session, backend, 0.7)
            proposed[fmt] += len(parsed.proposals)
            ok, bad = checked(parsed.proposals, session)
            verified[fmt] += len(ok)
            for p, why in bad:
                rejected[fmt][why[0][0]] += 1
                if args.verbose:
                    print(f"  rejected {traj.id[:12]} {p.draft.title[:60]!r}: {why[0][1]}")
    print(f"{'format':<15}{'sessions':>9}{'w/ episode':>11}{'digest med':>11}{'max':>7}"
          f"{'raw/digest med':>15}{'calls/s':>8}")
    for fmt, r in rows.items():
        with_ep = [x for x in r if x[0]]
        toks = [x[1] for x in with_ep]
        ratio = [x[2] / max(1, x[1]) for x in with_ep]
        calls = [x[3] for x in with_ep]
        print(f"{fmt:<15}{len(r):>9}{len(with_ep):>11}"
              f"{statistics.median(toks) if toks else 0:>11.0f}{max(toks, default=0):>7}"
              f"{statistics.median(ratio) if ratio else 0:>15.1f}"
              f"{statistics.mean(calls) if calls else 0:>8.2f}")
    all_ep = [x for r in rows.values() for x in r if x[0]]
    print(f"all: {sum(len(r) for r in rows.values())} sessions, {len(all_ep)} with an episode, "
          f"digest median {statistics.median([x[1] for x in all_ep]):.0f} tokens, "
          f"raw/digest median {statistics.median([x[2] / max(1, x[1]) for x in all_ep]):.1f}x")
    if replies:
        print("\nrecorded replies: proposed / verified / rejected by rule (first round)")
        for fmt in sorted(proposed):
            print(f"  {fmt:<15}{proposed[fmt]:>4} {verified[fmt]:>4}  {dict(rejected[fmt])}")
    if replies:
        _replay(args.replies, args.root)
    if args.write_requests:
        print(f"\nwrote {written} requests to {args.write_requests}")


def _replay(path: Path, root: Path) -> None:
    """The recorded sessions through ``orf mine`` (gemini backend, fake server, send-backs)."""
    import tempfile

    from google import genai
    from google.genai import types

    from pipeline.config import load_settings
    from pipeline.mine import mine
    from pipeline.testing.fake_gemini import FakeGemini
    from pipeline.testing.replay import Replayer, load_replies

    recorded = load_replies(path)
    paths = sorted({root / e["file"] for e in recorded.values()})
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"store": Path(tmp) / "experiences", "backend": "gemini",
                                  "ledger": Path(tmp) / "ledger.db",
                                  "max_sessions_per_run": 100_000})
        replayer = Replayer(recorded)
        with FakeGemini(responder=replayer) as server:
            client = genai.Client(api_key="replay",
                                  http_options=types.HttpOptions(base_url=server.url))
            s = mine(paths, settings, client=client)
            calls = server.model_calls
    written = s.drafts["new"] + s.drafts["related"]
    print(f"\nreplayed through orf mine: {len(recorded)} recorded sessions, {calls} model calls "
          f"({len(replayer.send_backs)} send-backs); written {written}"
          f", reinforced {s.drafts['duplicate']}, dropped {s.drafts['dropped']}: "
          f"{dict(s.dropped)}")


if __name__ == "__main__":
    main()
