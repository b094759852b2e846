"""Recorded replies of a stand-in model, replayed through the real SDK and the fake server.

``tests/data/learn_replies.json`` holds what a strong model (a helper that had not seen orf's
code, answering from the request text alone) replied to orf's learn requests for 30 real
sample sessions (the tuning split), and to the send-backs of the drafts the verifier
rejected; ``learn_replies_heldout.json`` the same for the 25 sessions with an episode of the
held-out third of the December batch, scored once; ``learn_replies_fresh.json`` 24 sessions
of the December batch no recording had used, scored once after the digest fixes, and
``learn_replies_fresh2.json`` 24 more, scored once after the next round. ``orf mine``
with the gemini backend reads those sessions through the fake Gemini server; the counts are
what the verifier and the screens make of the replies.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from pipeline.config import load_settings
from pipeline.ledger import Ledger
from pipeline.mine import mine
from pipeline.orf import Store, validate_store
from pipeline.testing.fake_gemini import FakeGemini
from pipeline.testing.replay import Replayer, load_replies, request_text

DATA = Path(__file__).resolve().parent / "data"
pytestmark = [pytest.mark.episodes, pytest.mark.slow]

CASES = {
    # sessions read beyond the recording (other sessions of the same files get an empty
    # reply), learn calls, send-backs, other calls (dedupe asking about a look-alike pair),
    # drafts by outcome, dropped by reason (the quality screen names each field it objects to)
    "learn_replies.json": dict(
        extra=2, learn_calls=45, send_backs=8, other_calls=1,
        drafts={"new": 25, "related": 1, "duplicate": 2, "dropped": 3},
        dropped={"verifier path_ran": 2, "verifier error_gone": 1}, rejected=3),
    "learn_replies_heldout.json": dict(
        extra=0, learn_calls=40, send_backs=12, other_calls=0,
        drafts={"new": 22, "duplicate": 1, "dropped": 7},
        dropped={"verifier path_ran": 4, "verifier error_quoted": 1,
                 "verifier fix_succeeded": 1, "verifier cause_not_contradicted": 1},
        rejected=7),
    "learn_replies_fresh2.json": dict(
        extra=0, learn_calls=38, send_backs=10, other_calls=0,
        drafts={"new": 21, "duplicate": 1, "dropped": 5},
        dropped={"verifier error_gone": 1, "verifier error_quoted": 1, "verifier path_ran": 1,
                 "verifier cause_not_contradicted": 2}, rejected=5),
    "learn_replies_round3.json": dict(
        extra=2, learn_calls=53, send_backs=10, other_calls=1,
        drafts={"new": 24, "related": 1, "duplicate": 2, "dropped": 5},
        dropped={"verifier fix_on_target": 2, "verifier error_quoted": 1,
                 "verifier path_ran": 1, "verifier cause_not_contradicted": 1}, rejected=5),
    "learn_replies_round4.json": dict(
        extra=2, learn_calls=55, send_backs=12, other_calls=1,
        drafts={"new": 26, "related": 1, "duplicate": 1, "dropped": 4},
        dropped={"verifier fix_on_target": 1, "verifier error_gone": 2,
                 "verifier error_quoted": 1}, rejected=4),
    "learn_replies_fresh.json": dict(
        extra=0, learn_calls=41, send_backs=11, other_calls=0,
        drafts={"new": 21, "dropped": 10},
        dropped={"verifier fix_on_target": 4, "verifier path_ran": 3, "verifier not_undone": 1,
                 "verifier error_gone": 1, "verifier error_quoted": 1}, rejected=10),
}


def _setup(name: str, shared: Path, tmp_path: Path) -> tuple[dict[str, Any], list[Path], Any]:
    """The recording, the sample files it covers, and gemini settings for a scratch store."""
    recorded = load_replies(DATA / name)
    paths = sorted({shared / e["file"] for e in recorded.values()})
    settings = load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "l.db",
                              "jobs": 2, "backend": "gemini", "max_sessions_per_run": 1000})
    return recorded, paths, settings


def _client(server: FakeGemini) -> Any:
    return genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_replies_give_exact_counts_and_a_rerun_costs_nothing(
        name: str, shared_trajectories: Path, tmp_path: Path) -> None:
    want: dict[str, Any] = CASES[name]
    recorded, paths, settings = _setup(name, shared_trajectories, tmp_path)
    replayer = Replayer(recorded)
    with FakeGemini(responder=replayer) as server:
        client = _client(server)
        first = mine(paths, settings, client=client)  # type: ignore[arg-type]
        calls = server.model_calls
        named = (re.search(r"^# Session (\S+) \(", request_text(r.json), re.M)
                 for r in server.requests if r.path.endswith(":generateContent"))
        per_session = Counter(m.group(1) for m in named if m)
        again = mine(paths, settings, client=client)  # type: ignore[arg-type]
        assert server.model_calls == calls and again.llm_calls == 0
    assert first.exit_code == 0, first.errors
    # every recorded session read, none over three calls (two digest chunks and a send-back)
    assert set(recorded) <= set(per_session)
    assert len(per_session) == len(recorded) + want["extra"]
    assert max(per_session.values()) == 3
    learn_calls = sum(per_session.values())
    assert (learn_calls, len(replayer.send_backs), calls - learn_calls) == (
        want["learn_calls"], want["send_backs"], want["other_calls"])
    assert {k: n for k, n in first.drafts.items() if n} == want["drafts"]
    assert first.dropped == Counter(want["dropped"])
    exps = Store(tmp_path / "experiences").experiences()
    written = want["drafts"]["new"] + want["drafts"].get("related", 0)
    assert len(exps) == written and validate_store(tmp_path / "experiences") == []
    with Ledger(tmp_path / "l.db") as led:
        rows = led.db.execute("SELECT reason FROM candidates WHERE status = 'dropped' AND "
                              "reason LIKE 'rejected:%'").fetchall()
    assert len(rows) == want["rejected"]
    for exp in exps:
        prov = exp.provenance or {}
        assert prov["drafted_by"] == "model" and prov["finding_kind"] == "episode"
        assert prov["evidence"]["trap_steps"] and prov["evidence"]["fix_steps"]


def test_batch_mode_reads_the_same_episodes_in_two_jobs(shared_trajectories: Path,
                                                       tmp_path: Path) -> None:
    """Round 1 holds every digest chunk, round 2 every send-back: the online outcome."""
    want: dict[str, Any] = CASES["learn_replies_heldout.json"]
    recorded, paths, settings = _setup("learn_replies_heldout.json", shared_trajectories,
                                       tmp_path)
    replayer = Replayer(recorded)
    with FakeGemini(responder=replayer) as server:
        client = _client(server)
        run = mine(paths, settings, client=client, batch=True)  # type: ignore[arg-type]
        assert server.count(":batchGenerateContent") == 2
    assert len(replayer.send_backs) == want["send_backs"]
    assert {k: n for k, n in run.drafts.items() if n} == want["drafts"]
    assert run.dropped == Counter(want["dropped"])
