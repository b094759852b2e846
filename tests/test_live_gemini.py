"""Against the real Gemini API: only with `pytest --runapi` and a key in the environment."""

from __future__ import annotations

import os

import orjson
import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from pipeline.cli import main

pytestmark = pytest.mark.runapi


@pytest.fixture
def real_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # The autouse fixture clears keys; --runapi runs restore them from ORF_LIVE_GEMINI_API_KEY.
    key = os.environ.get("ORF_LIVE_GEMINI_API_KEY")
    if not key:
        pytest.skip("set ORF_LIVE_GEMINI_API_KEY to run live API tests")
    monkeypatch.setenv("GEMINI_API_KEY", key)


def test_live_draft_of_a_real_loop(real_key: None, tmp_path) -> None:
    result = CliRunner().invoke(main, [
        "analyze", str(FIXTURES / "swe-agent" / "calc-1x.traj"), "--json", "--draft",
        "--backend", "gemini", "--store", str(tmp_path / "experiences"),
    ], env={"ORF_LEDGER": str(tmp_path / "ledger.db")})
    assert result.exit_code == 0, result.output
    obj = orjson.loads(result.stdout.splitlines()[0])
    assert obj["verdict"]["outcome"] in {"success", "failure", "unknown"}
    assert obj["drafts"] or obj["draft_failures"]
