"""The provider seam: a toy provider registered here runs `orf analyze --draft` end to end.

It shows what adding a backend takes (a ``Provider`` subclass and one ``ProviderSpec``), that
the shared wrapper records its calls in the ledger, and the registry's error lines.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from _llm_helpers import fast_retry_waits  # noqa: F401
from click.testing import CliRunner
from conftest import FIXTURES

from pipeline.cli import main
from pipeline.config import Settings
from pipeline.errors import BackendError
from pipeline.ledger import Ledger
from pipeline.llm.backend import LLMRequest
from pipeline.llm.provider import Envelope, Provider
from pipeline.llm.registry import (
    PROVIDERS,
    ProviderSpec,
    backend_names,
    get_backend,
    register_provider,
)

SESSION = FIXTURES / "atif" / "calc.atif.json"
TOY_REASON = "the toy read the end of the run and calls it a failure"
TOY_TITLE = "ModuleNotFoundError under pytest: put the package directory on the import path"
TOY_DRAFT = {
    "finding": 0, "title": TOY_TITLE,
    "description": "Trigger when pytest stops on ModuleNotFoundError for the project's package.",
    "domain": "python-tooling", "keywords": ["pytest", "modulenotfounderror", "pythonpath"],
    "complexity": "low", "objective": "Make the tests import the project's package.",
    "trap": "Re-running pytest unchanged repeats the same ModuleNotFoundError.",
    "insight": "A missing module under pytest means the package directory is not on the "
               "import path; add it to the path instead of re-running.",
    "validated_path": "1. `PYTHONPATH=src pytest tests/test_calc.py`",
    "checklist": ["`PYTHONPATH=src pytest tests/test_calc.py` passes"],
}


class ToyProvider(Provider):
    """Canned replies: a verdict for judge requests, one playbook for draft requests."""

    name: ClassVar[str] = "toy"

    def __init__(self) -> None:
        self.model = "toy-1"

    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """The canned reply for the request's purpose."""
        reply: dict[str, Any] = (
            {"outcome": "failure", "reason": TOY_REASON, "confidence": 0.9}
            if request.purpose == "judge" else {"drafts": [TOY_DRAFT]})
        return {"text": json.dumps(reply), "finish": "stop", "tokens_in": 100, "tokens_out": 10}


@pytest.fixture
def toy() -> Iterator[ProviderSpec]:
    """The toy backend, registered for one test the way a plugin does it."""
    assert "toy" not in PROVIDERS
    spec = register_provider(ProviderSpec(
        name="toy", factory=lambda settings, client: ToyProvider(),
        help="canned replies (tests)", offline=True))
    assert PROVIDERS["toy"] is spec
    yield spec
    del PROVIDERS["toy"]  # the registry is process-wide: leave it as found


def test_orf_analyze_drafts_with_a_registered_toy_provider(
        toy: ProviderSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "logs" / SESSION.name
    log.parent.mkdir()
    shutil.copy(SESSION, log)
    ledger = tmp_path / "ledger.db"
    Ledger(ledger).close()  # analyze caches in an existing ledger and creates none
    monkeypatch.setenv("ORF_LEDGER", str(ledger))
    result = CliRunner().invoke(main, ["analyze", str(log), "--draft", "--backend", "toy",
                                       "--json"])
    assert result.exit_code == 0, result.output
    [doc] = [orjson.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert doc["verdict"]["decided_by"] == "toy:toy-1"
    assert doc["verdict"]["outcome"] == "failure"
    assert doc["verdict"]["reason"] == TOY_REASON
    assert [d["title"] for d in doc["drafts"]] == [TOY_TITLE]
    assert doc["drafts"][0]["provenance"]["backend"] == "toy"
    assert doc["drafts"][0]["provenance"]["model"] == "toy-1"
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT model, purpose, status, tokens_in, tokens_out, cost_usd "
                          "FROM llm_calls ORDER BY id").fetchall()
    assert rows == [("toy-1", "judge", "ok", 100, 10, 0.0), ("toy-1", "draft", "ok", 100, 10, 0.0)]
    # Same request again: both answers come from the ledger, recorded as cache hits.
    again = CliRunner().invoke(main, ["analyze", str(log), "--draft", "--backend", "toy",
                                      "--json"])
    assert again.exit_code == 0, again.output
    assert orjson.loads(again.stdout)["drafts"][0]["title"] == TOY_TITLE
    with sqlite3.connect(ledger) as db:
        statuses = [r[0] for r in db.execute("SELECT status FROM llm_calls ORDER BY id")]
    assert statuses == ["ok", "ok", "cached", "cached"]


def test_the_toy_is_listed_in_orf_config_and_the_backend_choices(toy: ProviderSpec) -> None:
    assert backend_names()[-1] == "toy"
    out = CliRunner().invoke(main, ["config"])
    assert out.exit_code == 0, out.output
    assert "  toy" in out.output and "canned replies (tests)" in out.output
    data = orjson.loads(CliRunner().invoke(main, ["config", "--json"]).output)
    assert {"name": "toy", "offline": True, "help": "canned replies (tests)"} in data["backends"]


def test_an_unknown_backend_lists_the_registered_ones() -> None:
    known = ", ".join(sorted(PROVIDERS))
    with pytest.raises(BackendError) as caught:
        get_backend(Settings(backend="nope"))
    assert str(caught.value) == f"unknown backend 'nope' - use one of: {known}"
    out = CliRunner().invoke(main, ["analyze", str(SESSION), "--draft", "--backend", "nope"])
    assert out.exit_code == 2
    choices = ", ".join(f"'{name}'" for name in backend_names())
    assert f"Invalid value for '--backend': 'nope' is not one of {choices}." in out.output


@pytest.mark.parametrize(("backend", "module", "hint"), [
    ("gemini", "google.genai",
     "The gemini backend needs the 'google-genai' package - run: pip install google-genai"),
    ("openai-compatible", "openai",
     "The openai-compatible backend needs the 'openai' package - run: pip install "
     "'orf-pipeline[openai]'"),
])
def test_a_missing_sdk_names_the_pip_line(backend: str, module: str, hint: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if backend not in PROVIDERS:
        pytest.skip(f"{backend} is not registered")
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    with pytest.raises(BackendError) as caught:
        get_backend(Settings(backend=backend))
    assert str(caught.value) == hint


class Flaky(Exception):
    """A transport error whose provider asks for a given wait (None: not retryable)."""

    def __init__(self, wait: float | None) -> None:
        super().__init__(f"flaky (wait {wait})")
        self.wait = wait


class ScriptedProvider(ToyProvider):
    """Raises the queued errors first, then answers like the toy."""

    def __init__(self, errors: list[Flaky]) -> None:
        super().__init__()
        self.errors = errors
        self.sent = 0

    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """The next queued error, else the canned reply."""
        self.sent += 1
        if self.errors:
            raise self.errors.pop(0)
        return super().send(request, timeout_s)

    def retry_delay(self, exc: BaseException) -> float | None:
        """The wait the error carries."""
        return exc.wait if isinstance(exc, Flaky) else None


def _judge_request(prompt: str = "the run ended") -> LLMRequest:
    return LLMRequest(key=f"k-{prompt}", purpose="judge", session_id="s1", system="judge",
                      prompt=prompt, schema={"type": "object"})


def _backend(provider: Provider, tmp_path: Path) -> tuple[Any, sqlite3.Connection]:
    from pipeline.ledger import Ledger
    from pipeline.llm.service import ModelBackend

    ledger = Ledger(tmp_path / "ledger.db")
    return ModelBackend(provider, Settings(max_attempts=3), ledger), sqlite3.connect(
        tmp_path / "ledger.db")


def test_the_wrapper_waits_what_the_provider_says_then_records_the_answer(
        tmp_path: Path, fast_retry_waits: list[float]) -> None:  # noqa: F811
    provider = ScriptedProvider([Flaky(7.0), Flaky(500.0)])
    backend, db = _backend(provider, tmp_path)
    reply = backend.generate(_judge_request())
    assert reply.ok and json.loads(reply.text)["reason"] == TOY_REASON
    # A server's wait is honoured, and capped at 120 s whatever it asks.
    assert fast_retry_waits == [7.0, 120.0]
    assert provider.sent == 3
    rows = db.execute("SELECT status, error FROM llm_calls").fetchall()
    assert rows == [("ok", None)]


def test_a_non_retryable_error_is_one_attempt_recorded_with_the_providers_line(
        tmp_path: Path, fast_retry_waits: list[float]) -> None:  # noqa: F811
    provider = ScriptedProvider([Flaky(None)])
    backend, db = _backend(provider, tmp_path)
    reply = backend.generate(_judge_request())
    assert reply.text is None and reply.error == "Flaky: flaky (wait None)"
    assert provider.sent == 1 and fast_retry_waits == []
    assert db.execute("SELECT status, error FROM llm_calls").fetchall() == [
        ("failed", "Flaky: flaky (wait None)")]


def test_a_request_holding_a_credential_never_reaches_the_provider(tmp_path: Path) -> None:
    provider = ScriptedProvider([])
    backend, db = _backend(provider, tmp_path)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    reply = backend.generate(_judge_request(f"git push https://x:{token}@github.com/o/r"))
    assert reply.error == "refused: credential-shaped string (github-token) in request"
    assert provider.sent == 0
    assert db.execute("SELECT status FROM llm_calls").fetchall() == [("failed",)]
