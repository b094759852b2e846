"""The last check before sending: a request still holding a credential shape is never sent.

Through the real google-genai SDK against the fake server, online and in Batch Mode: the
refused request is recorded in the ledger as failed with the reason, the others go on.
"""

from __future__ import annotations

import json
from pathlib import Path

from _llm_helpers import fake, fast_retry_waits, gemini_backend, open_ledger  # noqa: F401

from pipeline.llm import batch as batch_mod
from pipeline.llm.backend import LLMRequest
from pipeline.llm.service import refusal
from pipeline.testing.fake_gemini import FakeGemini

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
TOKEN = "gh" + "p_" + "Zk8Qw2Lm9Xv4Rt7Yp3Nb6Hc1Jd5Fg0Se2Ua"


def _request(key: str, prompt: str, system: str = "Answer in JSON.") -> LLMRequest:
    return LLMRequest(key=key, purpose="judge", session_id=f"s-{key}", system=system,
                      prompt=prompt, schema=SCHEMA)


def test_refusal_names_each_kind_once() -> None:
    req = _request("k", f"push with {TOKEN} then {TOKEN}", system="DB_PASSWORD=Zq8vL2mWx4p")
    assert refusal(req) == ("refused: credential-shaped string (github-token, password) in "
                            "request")
    assert refusal(_request("k2", "push with [REDACTED:github-token]")) is None


def test_online_request_with_a_credential_is_refused_and_recorded(
    fake: FakeGemini, tmp_path: Path  # noqa: F811
) -> None:
    fake.responder = lambda body: json.dumps({"ok": True})
    with open_ledger(tmp_path) as ledger:
        backend = gemini_backend(fake, ledger)
        bad = backend.generate(_request("bad", f"the log says: git push https://x:{TOKEN}@h/r"))
        good = backend.generate(_request("good", "the log says: [REDACTED:github-token]"))
        rows = ledger.db.execute(
            "SELECT cache_key, status, error FROM llm_calls ORDER BY id").fetchall()
    assert bad.text is None
    assert bad.error == "refused: credential-shaped string (github-token) in request"
    assert good.error is None and json.loads(good.text or "") == {"ok": True}
    assert [tuple(r) for r in rows] == [
        ("bad", "failed", "refused: credential-shaped string (github-token) in request"),
        ("good", "ok", None)]
    bodies = [r.text for r in fake.requests]
    assert len(bodies) == 1 and TOKEN not in bodies[0]


def test_batch_request_with_a_credential_is_refused_and_recorded(
    fake: FakeGemini, tmp_path: Path  # noqa: F811
) -> None:
    fake.responder = lambda body: json.dumps({"ok": True})
    with open_ledger(tmp_path) as ledger:
        backend = gemini_backend(fake, ledger)
        replies = batch_mod.run_batch(backend, [
            _request("bad", f"token {TOKEN}"), _request("good", "nothing secret here")],
            max_attempts=backend.settings.max_attempts)
        rows = dict(ledger.db.execute("SELECT cache_key, error FROM llm_calls").fetchall())
    assert replies[0].error == "refused: credential-shaped string (github-token) in request"
    assert replies[1].error is None
    assert rows["bad"] == "refused: credential-shaped string (github-token) in request"
    assert all(TOKEN not in r.text for r in fake.requests)
