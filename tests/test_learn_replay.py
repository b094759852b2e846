"""Recorded replies of a stand-in model, replayed through the real SDK and the fake server.

``tests/data/learn_replies.json`` holds what a strong model (a helper that had not seen orf's
code, answering from the request text alone) replied to orf's learn requests for 30 real
sample sessions, and to the send-backs of the drafts the verifier rejected. ``orf mine`` with
the gemini backend reads those sessions through the fake Gemini server; the counts below are
what the verifier and the screens make of the replies.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from google import genai
from google.genai import types

from pipeline.config import load_settings
from pipeline.ledger import Ledger
from pipeline.mine import mine
from pipeline.orf import Store, validate_store
from pipeline.testing.fake_gemini import FakeGemini
from pipeline.testing.replay import Replayer, load_replies, request_text

REPLIES = Path(__file__).resolve().parent / "data" / "learn_replies.json"
pytestmark = [pytest.mark.episodes, pytest.mark.slow]


def test_recorded_replies_give_exact_counts_and_a_rerun_costs_nothing(
        shared_trajectories: Path, tmp_path: Path) -> None:
    recorded = load_replies(REPLIES)
    paths = sorted({shared_trajectories / e["file"] for e in recorded.values()})
    settings = load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "l.db",
                              "jobs": 2, "backend": "gemini", "max_sessions_per_run": 1000})
    replayer = Replayer(recorded)
    with FakeGemini(responder=replayer) as server:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        first = mine(paths, settings, client=client)  # type: ignore[arg-type]
        calls = server.model_calls
        named = (re.search(r"^# Session (\S+) \(", request_text(r.json), re.M)
                 for r in server.requests if r.path.endswith(":generateContent"))
        per_session = Counter(m.group(1) for m in named if m)
        again = mine(paths, settings, client=client)  # type: ignore[arg-type]
        assert server.model_calls == calls and again.llm_calls == 0
    assert first.exit_code == 0, first.errors
    # every session read, none over three calls (two digest chunks and one send-back)
    # (the files hold two more sessions than were recorded: they get an empty reply)
    assert set(recorded) < set(per_session) and len(per_session) == len(recorded) + 2
    assert max(per_session.values()) == 3
    assert (sum(per_session.values()), len(replayer.send_backs)) == (46, 8)
    assert calls - sum(per_session.values()) == 1  # dedupe asked about one look-alike pair
    assert {k: n for k, n in first.drafts.items() if n} == {
        "new": 23, "related": 1, "duplicate": 2, "dropped": 5}
    # by reason: the quality screen names each field it objects to
    assert first.dropped == Counter({"verifier path_ran": 2, "verifier error_gone": 1,
                                     "text cut mid-token": 2, "boilerplate as the error": 2})
    exps = Store(tmp_path / "experiences").experiences()
    assert len(exps) == 24 and validate_store(tmp_path / "experiences") == []
    with Ledger(tmp_path / "l.db") as led:
        rows = led.db.execute("SELECT reason FROM candidates WHERE status = 'dropped' AND "
                              "reason LIKE 'rejected:%'").fetchall()
    assert len(rows) == 3
    for exp in exps:
        prov = exp.provenance or {}
        assert prov["drafted_by"] == "model" and prov["finding_kind"] == "episode"
        assert prov["evidence"]["trap_steps"] and prov["evidence"]["fix_steps"]
