"""The openai-compatible backend: the real ``openai`` SDK against the fake server on 127.0.0.1.

The provider is built by the registry from the ``ORF_OPENAI_*`` variables, exactly as
``--backend openai-compatible`` builds it; nothing of it is patched. The faults are the Gemini
tests' ones (429 with Retry-After, 5xx, timeout, bad JSON), plus a server that rejects
``json_schema`` and the pre-send credential refusal.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import shutil
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from _llm_helpers import (  # noqa: F401
    GOOD_DRAFT,
    STORE,
    fast_retry_waits,
    make_finding,
    make_traj,
    open_ledger,
)
from click.testing import CliRunner
from conftest import FIXTURES

from pipeline.cli import main
from pipeline.config import Settings, load_settings
from pipeline.errors import BackendError
from pipeline.ledger import Ledger
from pipeline.llm.backend import Backend, LLMRequest
from pipeline.llm.registry import backend_names, get_backend
from pipeline.orf import Store
from pipeline.stages.analysis import analyze_sessions, draft_session, judge_session
from pipeline.testing.fake_openai import (
    REJECTED_FORMAT,
    SCHEMA_MARKER,
    FakeOpenAI,
    Fault,
    Item,
    filtered,
    invalid_json,
    no_choices,
    rate_limited,
    request_schema,
    server_error,
    slow,
    text_reply,
    truncated,
)

pytest.importorskip("openai")

MODEL = "qwen-fake"
JUDGE_OK = json.dumps({"outcome": "failure", "reason": "tests still fail", "confidence": 0.8})
DRAFT_OK = json.dumps({"drafts": [GOOD_DRAFT]})
TOKEN = "gh" + "p_" + "Zk8Qw2Lm9Xv4Rt7Yp3Nb6Hc1Jd5Fg0Se2Ua"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A fake server the ``ORF_OPENAI_*`` variables point at."""
    with FakeOpenAI(model=MODEL) as fake:
        monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("ORF_OPENAI_MODEL", MODEL)
        yield fake


def settings_for(**settings: Any) -> Settings:
    """The settings ``backend_for`` builds its backend with (the stages get them too)."""
    opts: dict[str, Any] = {"backend": "openai-compatible", "call_timeout_s": 5.0}
    opts.update(settings)
    return load_settings(opts)  # the ORF_OPENAI_* variables are settings


def backend_for(ledger: Ledger | None, **settings: Any) -> Backend:
    return get_backend(settings_for(**settings), ledger)


def purpose_of(body: dict[str, Any]) -> str:
    """``judge`` or ``draft``, from the schema the request carries (either mode)."""
    schema = request_schema(body) or {}
    return "judge" if "outcome" in schema.get("properties", {}) else "draft"


def auth_headers(fake: FakeOpenAI) -> set[str | None]:
    """The ``Authorization`` values the server saw (header names are case-insensitive)."""
    return {next((v for k, v in r.headers.items() if k.lower() == "authorization"), None)
            for r in fake.completions}


def scripted(**per_purpose: list[Item]) -> Any:
    """A responder that answers judge and draft requests from separate scripts."""
    queues = {k: deque(v) for k, v in per_purpose.items()}
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Item | None:
        with lock:
            queue = queues.get(purpose_of(body))
            return queue.popleft() if queue else None

    return respond


def bodies(fake: FakeOpenAI, purpose: str | None = None) -> list[dict[str, Any]]:
    out = [r.json for r in fake.completions]
    return [b for b in out if purpose is None or purpose_of(b) == purpose]


def run_once(tmp_path: Path, **settings: Any) -> tuple[Any, Any]:
    traj = make_traj()
    findings = [make_finding(traj)]
    with open_ledger(tmp_path) as ledger:
        backend, run = backend_for(ledger, **settings), settings_for(**settings)
        verdict = judge_session(traj, findings, backend, run)
        result = draft_session(traj, findings, verdict, backend, STORE, run)
    return verdict, result


def call_rows(tmp_path: Path) -> list[tuple[str, str | None]]:
    with open_ledger(tmp_path) as ledger:
        rows = ledger.db.execute("SELECT status, error FROM llm_calls ORDER BY id").fetchall()
    return [(r[0], r[1]) for r in rows]


# ---- the CLI, end to end ----


def test_analyze_draft_through_the_cli(server: FakeOpenAI, tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    assert CliRunner().invoke(main, ["init", str(store)]).exit_code == 0
    # The store's ledger, as `orf mine` leaves it: analyze caches its calls there (it
    # creates none of its own).
    Ledger(tmp_path / ".orf" / "ledger.db").close()
    log = FIXTURES / "mine" / "alpha-session.jsonl"
    args = ["analyze", str(log), "--json", "--draft", "--backend", "openai-compatible",
            "--store", str(store)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (obj,) = [orjson.loads(line) for line in result.stdout.splitlines() if line.strip()]
    # The fake answers the judge schema with its first enum value and full confidence.
    assert obj["verdict"]["outcome"] == "failure"
    assert obj["verdict"]["decided_by"] == f"openai-compatible:{MODEL}"
    (drafted,) = obj["drafts"]
    assert drafted["title"].startswith("title ")
    assert drafted["provenance"]["backend"] == "openai-compatible"
    assert drafted["provenance"]["model"] == MODEL
    assert drafted["provenance"]["drafted_by"] == f"openai-compatible:{MODEL}"
    sent = bodies(server)
    assert [purpose_of(b) for b in sent] == ["judge", "draft"]
    assert all(b["model"] == MODEL for b in sent)
    assert all(b["response_format"]["type"] == "json_schema" for b in sent)
    assert auth_headers(server) == {"Bearer no-key"}
    # A rerun is answered from the ledger: no new request reaches the server.
    before = len(server.completions)
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert len(server.completions) == before
    assert orjson.loads(again.stdout.splitlines()[0])["drafts"] == obj["drafts"]
    with Ledger(tmp_path / ".orf" / "ledger.db") as ledger:
        rows = ledger.db.execute("SELECT status, model FROM llm_calls ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("ok", MODEL)] * 2 + [("cached", MODEL)] * 2


@pytest.mark.parametrize("batch", [[], ["--batch"]], ids=["online", "batch-flag"])
def test_mine_writes_the_playbook_once_and_reruns_from_the_ledger(
    server: FakeOpenAI, tmp_path: Path, batch: list[str]
) -> None:
    # Batch Mode is Gemini's: with --batch this backend answers the same rounds online.
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("alpha-session.jsonl", "beta-session.jsonl"):  # the same trap twice
        shutil.copy(FIXTURES / "mine" / name, logs / name)
    store = tmp_path / "experiences"
    Store(store).init()
    args = ["mine", str(logs), "--store", str(store), "--ledger", str(tmp_path / "ledger.db"),
            "--backend", "openai-compatible", "--jobs", "1", "--json", *batch]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert (doc["drafts"]["new"], doc["drafts"]["duplicate"]) == (1, 1)
    (exp,) = Store(store).experiences()
    assert (exp.provenance or {})["drafted_by"] == f"openai-compatible:{MODEL}"
    assert (exp.provenance or {})["verdict_by"] == f"openai-compatible:{MODEL}"
    sent = len(server.completions)
    assert sent == 4  # judge + draft for each session
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert orjson.loads(again.stdout)["sessions"]["unchanged"] == 2
    assert len(server.completions) == sent


def test_backend_is_listed_and_missing_config_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert "openai-compatible" in backend_names()
    with pytest.raises(BackendError, match="^the openai-compatible backend needs "
                                           "ORF_OPENAI_BASE_URL "):
        backend_for(None)
    monkeypatch.setenv("ORF_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(BackendError, match="needs ORF_OPENAI_MODEL "):
        backend_for(None)
    monkeypatch.delenv("ORF_OPENAI_BASE_URL")
    store = tmp_path / "experiences"
    assert CliRunner().invoke(main, ["init", str(store)]).exit_code == 0
    result = CliRunner().invoke(main, ["analyze", str(FIXTURES / "mine" / "alpha-session.jsonl"),
                                       "--draft", "--backend", "openai-compatible",
                                       "--store", str(store)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: the openai-compatible backend needs ORF_OPENAI_BASE_URL "
        "(e.g. ORF_OPENAI_BASE_URL=http://127.0.0.1:11434/v1)"]


def test_missing_sdk_gives_the_pip_line(server: FakeOpenAI,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai now raises ImportError
    with pytest.raises(BackendError) as caught:
        backend_for(None)
    assert str(caught.value) == ("The openai-compatible backend needs the 'openai' package - "
                                 "run: pip install 'orf-pipeline[openai]'")


def test_api_key_is_sent_as_bearer(server: FakeOpenAI, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORF_OPENAI_API_KEY", "sk-local-test")
    run_once(tmp_path)
    assert auth_headers(server) == {"Bearer sk-local-test"}


# ---- faults ----


@pytest.mark.real_retry_waits
def test_429_waits_the_retry_after_then_succeeds(server: FakeOpenAI, tmp_path: Path) -> None:
    arrivals: list[float] = []
    script = scripted(judge=[rate_limited(0.3), JUDGE_OK], draft=[DRAFT_OK])

    def respond(body: dict[str, Any]) -> Item | None:
        if purpose_of(body) == "judge":
            arrivals.append(time.monotonic())
        return script(body)  # type: ignore[no-any-return]

    server.responder = respond
    verdict, result = run_once(tmp_path)
    assert verdict.outcome == "failure" and verdict.reason == "tests still fail"
    assert verdict.decided_by == f"openai-compatible:{MODEL}"
    assert [d.title for d in result.drafts] == [GOOD_DRAFT["title"]]
    assert len(bodies(server, "judge")) == 2
    assert arrivals[1] - arrivals[0] >= 0.3  # the server's Retry-After was waited out
    assert call_rows(tmp_path) == [("ok", None), ("ok", None)]


def test_retry_after_is_capped(server: FakeOpenAI, tmp_path: Path,
                               fast_retry_waits: list[float]) -> None:  # noqa: F811
    server.responder = scripted(judge=[rate_limited(9999), JUDGE_OK], draft=[DRAFT_OK])
    verdict, _ = run_once(tmp_path)
    assert verdict.reason == "tests still fail"
    assert fast_retry_waits == [120.0]


def test_retry_after_as_an_http_date(server: FakeOpenAI, tmp_path: Path,
                                     fast_retry_waits: list[float]) -> None:  # noqa: F811
    when = email.utils.format_datetime(
        datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=60),
        usegmt=True)
    server.responder = scripted(judge=[Fault("http", status=429, retry_after=when), JUDGE_OK],
                                draft=[DRAFT_OK])
    verdict, _ = run_once(tmp_path)
    assert verdict.reason == "tests still fail"
    (wait,) = fast_retry_waits
    assert 30.0 < wait <= 60.0  # a minute from when the header was written, less the trip


def test_500_then_success(server: FakeOpenAI, tmp_path: Path,
                          fast_retry_waits: list[float]) -> None:  # noqa: F811
    server.responder = scripted(judge=[server_error(500), JUDGE_OK],
                                draft=[server_error(503), DRAFT_OK])
    verdict, result = run_once(tmp_path)
    assert verdict.reason == "tests still fail"
    assert [d.title for d in result.drafts] == [GOOD_DRAFT["title"]]
    assert len(bodies(server)) == 4
    assert len(fast_retry_waits) == 2  # one backoff per 5xx
    assert call_rows(tmp_path) == [("ok", None), ("ok", None)]


def test_timeout_is_retried(server: FakeOpenAI, tmp_path: Path) -> None:
    # Spare good replies: on a loaded machine a fast reply may time out too.
    server.responder = scripted(judge=[slow(8.0), *[JUDGE_OK] * 3], draft=[DRAFT_OK] * 3)
    verdict, result = run_once(tmp_path, call_timeout_s=2.0)
    assert verdict.reason == "tests still fail"
    assert len(result.drafts) == 1
    assert len(bodies(server, "judge")) >= 2


def test_timeouts_until_out_of_attempts_are_recorded(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = lambda body: slow(6.0)
    verdict, result = run_once(tmp_path, call_timeout_s=0.3, max_attempts=2)
    assert verdict.unscored_reason == "grade_parse_failure: APITimeoutError: Request timed out."
    assert result.failures[-1] == "undrafted: APITimeoutError: Request timed out."
    assert {row for row in call_rows(tmp_path)} == {
        ("failed", "APITimeoutError: Request timed out.")}
    # 2 attempts x (first try + repair) x (judge + draft): the SDK's own retries are off.
    assert len(bodies(server)) == 8


def test_client_error_is_not_retried(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = lambda body: server_error(422)
    verdict, result = run_once(tmp_path)
    assert verdict.unscored_reason and "HTTP 422: fake error 422" in verdict.unscored_reason
    assert "HTTP 422: fake error 422" in result.failures[-1]
    assert len(bodies(server)) == 4  # one per try (first + repair) per stage, no retries
    assert {row for row in call_rows(tmp_path)} == {("failed", "HTTP 422: fake error 422")}


def test_bad_json_is_recorded_with_its_reason_and_the_run_goes_on(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    def respond(body: dict[str, Any]) -> Item | None:
        return invalid_json() if "task number 0" in json.dumps(body["messages"]) else None

    server.responder = respond
    items = []
    for i in range(2):
        traj = make_traj(f"s{i}", task=f"task number {i}")
        items.append((traj, [make_finding(traj, signature=f"b2:sig{i}")]))
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items, backend_for(ledger), STORE, settings_for(),
                                   concurrency=2)
    bad, good = results
    assert bad.verdict.outcome == "unknown"
    assert bad.verdict.unscored_reason and bad.verdict.unscored_reason.startswith(
        "grade_parse_failure: invalid reply: ")
    assert bad.drafts == []
    assert bad.failures[-1].startswith("undrafted: invalid JSON: ")
    assert good.verdict.decided_by == f"openai-compatible:{MODEL}"
    assert len(good.drafts) == 1


@pytest.mark.parametrize(("bad", "reason"), [
    (no_choices(), "empty reply: no choices"),
    (truncated(), "truncated: finish reason length"),
    (filtered(), "blocked: finish reason content_filter"),
], ids=["no-choices", "length", "content-filter"])
def test_unusable_replies_are_named_and_cached(server: FakeOpenAI, tmp_path: Path, bad: Item,
                                               reason: str) -> None:
    server.responder = scripted(judge=[bad, bad], draft=[bad, bad])
    verdict, result = run_once(tmp_path)
    assert verdict.unscored_reason == f"grade_parse_failure: {reason}"
    assert result.failures[-1] == f"undrafted: {reason}"
    before = len(server.completions)
    verdict2, _ = run_once(tmp_path)
    assert len(server.completions) == before  # the unusable answers are cached too
    assert verdict2.unscored_reason == verdict.unscored_reason


# ---- structured output: json_schema, else JSON mode ----


@pytest.mark.parametrize("status", [400, 422])
def test_json_schema_rejected_falls_back_to_json_mode(tmp_path: Path, status: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(json_schema=False, reject_status=status, model=MODEL) as fake:
        monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("ORF_OPENAI_MODEL", MODEL)
        fake.responder = scripted(judge=[JUDGE_OK], draft=[DRAFT_OK])
        verdict, result = run_once(tmp_path)
        sent = bodies(fake)
    assert verdict.reason == "tests still fail"
    assert [d.title for d in result.drafts] == [GOOD_DRAFT["title"]]
    kinds = [b["response_format"]["type"] for b in sent]
    # One refusal of json_schema; the provider remembers and asks JSON mode from then on.
    assert kinds == ["json_schema", "json_object", "json_object"]
    for body in sent[1:]:
        system = body["messages"][0]["content"]
        assert system.count(SCHEMA_MARKER) == 1
    assert json.loads(sent[1]["messages"][0]["content"].split(SCHEMA_MARKER, 1)[1]) == (
        sent[0]["response_format"]["json_schema"]["schema"])
    assert call_rows(tmp_path) == [("ok", None), ("ok", None)]
    assert REJECTED_FORMAT.startswith("response_format")


@pytest.mark.parametrize("json_schema", [True, False])
def test_reasoning_models_refusing_max_tokens_and_temperature(
        tmp_path: Path, json_schema: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenAI's o-series and gpt-5 answer 400 to ``max_tokens`` ("Use 'max_completion_tokens'
    instead") and to a temperature but 1, naming the parameter, not ``response_format``."""
    with FakeOpenAI(reasoning=True, json_schema=json_schema, model="o4-mini") as fake:
        monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("ORF_OPENAI_MODEL", "o4-mini")
        fake.responder = scripted(judge=[JUDGE_OK], draft=[DRAFT_OK])
        verdict, result = run_once(tmp_path)
        sent = bodies(fake)
    assert verdict.reason == "tests still fail"
    assert [d.title for d in result.drafts] == [GOOD_DRAFT["title"]]
    shapes = [(sorted(k for k in ("max_tokens", "max_completion_tokens", "temperature")
                      if k in b), b["response_format"]["type"]) for b in sent]
    first = [(["max_tokens", "temperature"], "json_schema"),
             (["max_completion_tokens", "temperature"], "json_schema"),
             (["max_completion_tokens"], "json_schema")]
    # Each refusal is met once; the draft request is sent right the first time.
    assert shapes == (first + [(["max_completion_tokens"], "json_schema")] if json_schema else
                      first + [(["max_completion_tokens"], "json_object")] * 2)
    assert sent[1]["max_completion_tokens"] == sent[0]["max_tokens"]  # the same budget
    assert call_rows(tmp_path) == [("ok", None), ("ok", None)]


def test_json_mode_reply_off_schema_is_unusable(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    off = text_reply(json.dumps({"outcome": "failure", "confidence": 0.9}))
    with FakeOpenAI(json_schema=False, model=MODEL) as fake:
        monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("ORF_OPENAI_MODEL", MODEL)
        fake.responder = scripted(judge=[off, JUDGE_OK], draft=[DRAFT_OK])
        verdict, result = run_once(tmp_path)
    # The first answer lacks "reason": the repair try gets the second.
    assert verdict.reason == "tests still fail"
    assert len(result.drafts) == 1
    assert call_rows(tmp_path)[0] == ("ok", "invalid reply: reply lacks 'reason'")


def test_the_automatic_reply_fills_the_schema_in_both_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for supports in (True, False):
        with FakeOpenAI(json_schema=supports, model=MODEL) as fake:
            monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
            monkeypatch.setenv("ORF_OPENAI_MODEL", MODEL)
            verdict, result = run_once(tmp_path / str(supports))
        assert verdict.unscored_reason is None, supports
        assert len(result.drafts) == 1, (supports, result.failures)


# ---- privacy and cost ----


def test_a_credential_never_reaches_the_server(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = lambda body: json.dumps({"ok": True})
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    with open_ledger(tmp_path) as ledger:
        backend = backend_for(ledger)
        bad = backend.generate(LLMRequest(
            key="bad", purpose="judge", session_id="s-bad", system="Answer in JSON.",
            prompt=f"the log says: git push https://x:{TOKEN}@h/r", schema=schema))
        good = backend.generate(LLMRequest(
            key="good", purpose="judge", session_id="s-good", system="Answer in JSON.",
            prompt="the log says: [REDACTED:github-token]", schema=schema))
    assert bad.text is None
    assert bad.error == "refused: credential-shaped string (github-token) in request"
    assert good.error is None and json.loads(good.text or "") == {"ok": True}
    assert len(server.completions) == 1
    assert all(TOKEN not in r.text for r in server.requests)
    assert call_rows(tmp_path) == [
        ("failed", "refused: credential-shaped string (github-token) in request"), ("ok", None)]


def test_stage_prompts_are_redacted_before_they_are_sent(server: FakeOpenAI,
                                                         tmp_path: Path) -> None:
    traj = make_traj(task=f"deploy with token {TOKEN}")
    traj.outcome.final_message = f"used {TOKEN}"
    finding = make_finding(traj)
    finding.evidence[0].quote += f" {TOKEN}"
    with open_ledger(tmp_path) as ledger:
        backend, settings = backend_for(ledger), settings_for()
        verdict = judge_session(traj, [finding], backend, settings)
        draft_session(traj, [finding], verdict, backend, STORE, settings)
    texts = [r.text for r in server.completions]
    assert len(texts) == 2  # judge + draft
    assert all(TOKEN not in t for t in texts)
    assert all("[REDACTED:github-token]" in t for t in texts)


def test_price_comes_from_settings_else_free(server: FakeOpenAI, tmp_path: Path) -> None:
    run_once(tmp_path / "free")
    run_once(tmp_path / "priced", prices={MODEL: (1_000_000.0, 0.0)})
    for name, priced in (("free", False), ("priced", True)):
        with open_ledger(tmp_path / name) as ledger:
            rows = ledger.db.execute("SELECT tokens_in, cost_usd FROM llm_calls").fetchall()
        assert len(rows) == 2 and all(r[0] > 0 for r in rows)
        assert all(r[1] == (float(r[0]) if priced else 0.0) for r in rows), rows


JUDGE_SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "prompts" /
                           "judge.schema.json").read_text())


@pytest.mark.parametrize(("text", "why"), [
    (JUDGE_OK, None),
    ("", None),  # left to the empty-reply reason
    ("{outcome: failure", "invalid JSON: "),
    ('["failure"]', "invalid reply: reply is not object"),
    ('{"outcome": "maybe", "reason": "r", "confidence": 0.5}',
     "invalid reply: reply.outcome is not one of ['failure', 'success', 'unknown']"),
    ('{"outcome": "failure", "reason": "r", "confidence": true}',
     "invalid reply: reply.confidence is not number"),
    ('{"outcome": "failure", "reason": 3, "confidence": 1}',
     "invalid reply: reply.reason is not string"),
])
def test_json_mode_check_against_the_judge_schema(text: str, why: str | None) -> None:
    from pipeline.llm.openai_compat import json_mode_problem

    found = json_mode_problem(text, JUDGE_SCHEMA)
    if why is None:
        assert found is None
    else:
        assert found is not None and found.startswith(why), found


def test_json_mode_check_against_the_draft_schema() -> None:
    from pipeline.llm.openai_compat import json_mode_problem
    from pipeline.stages.draft import draft_schema

    schema = draft_schema(3)
    assert json_mode_problem(DRAFT_OK, schema) is None
    item = {k: v for k, v in GOOD_DRAFT.items() if k != "finding"}
    assert json_mode_problem(json.dumps({"drafts": [item]}), schema) == (
        "invalid reply: reply.drafts[0] lacks 'finding'")
    assert json_mode_problem('{"drafts": "none"}', schema) == (
        "invalid reply: reply.drafts is not array")
