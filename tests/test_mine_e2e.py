"""orf mine end to end, in process: offline backend and the real SDK against the fake server."""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path

import orjson
import pytest
from _mine_helpers import claude_session
from click.testing import CliRunner
from google import genai
from google.genai import types

from pipeline.cli import main
from pipeline.config import load_settings
from pipeline.ledger import Ledger
from pipeline.mine import mine
from pipeline.orf import Store, validate_store
from pipeline.review import list_candidates, reject
from pipeline.testing.fake_gemini import FakeGemini

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mine"
SAME_TRAP = ["alpha-session.jsonl", "beta-session.jsonl"]


def _logs(tmp_path: Path, names: list[str] | None = None) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    for name in names or SAME_TRAP:
        shutil.copy(FIX / name, logs / name)
    return logs


def _settings(tmp_path: Path, **kw: object) -> object:
    base = {"store": tmp_path / "experiences", "ledger": tmp_path / "ledger.db", "jobs": 1}
    base.update(kw)
    return load_settings(base)


def test_same_trap_twice_gives_one_playbook_and_one_reinforcement(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    settings = _settings(tmp_path, backend="heuristic")
    first = mine([logs], settings)  # type: ignore[arg-type]
    assert first.exit_code == 0, first.errors
    assert (first.sessions_seen, first.sessions_new, first.findings) == (2, 2, 2)
    assert (first.drafts["new"], first.drafts["duplicate"]) == (1, 1)
    exps = Store(tmp_path / "experiences").experiences()
    assert len(exps) == 1
    assert validate_store(tmp_path / "experiences") == []
    assert first.reinforced == [{"exp_id": exps[0].id,
                                 "session_id": "b2e1d3c5-0000-4000-8000-000000000002"}]
    with Ledger(tmp_path / "ledger.db") as led:
        row = led.db.execute("SELECT reinforcements, last_seen FROM candidates"
                             " WHERE exp_id = ?", (exps[0].id,)).fetchone()
        assert row["reinforcements"] == 1 and row["last_seen"] > 0
    prov = exps[0].provenance or {}
    assert prov["sessions"][0]["id"] == "a1f0c2d4-0000-4000-8000-000000000001"
    assert prov["sessions"][0]["steps"] == "1-4"
    assert prov["backend"] == "heuristic"
    assert prov["first_seen"] and prov["last_seen"] and prov["signature"].startswith("b2:")

    again = mine([logs], settings)  # type: ignore[arg-type]
    assert (again.sessions_unchanged, again.sessions_new, again.findings) == (2, 0, 0)
    assert sum(again.drafts.values()) == 0
    assert len(Store(tmp_path / "experiences").experiences()) == 1


def test_gemini_rerun_over_same_logs_sends_no_request(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    settings = _settings(tmp_path, backend="gemini")
    with FakeGemini() as server:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        first = mine([logs], settings, client=client)  # type: ignore[arg-type]
        calls = server.model_calls
        assert calls > 0 and first.llm_calls == calls
        assert (first.drafts["new"], first.drafts["duplicate"]) == (1, 1)
        assert first.tokens_in > 0 and first.cost_usd > 0
        # Touch the files: size+mtime differ from the ledger, the content hash does not.
        for f in logs.iterdir():
            os.utime(f, (1_700_000_000, 1_700_000_000))
        again = mine([logs], settings, client=client)  # type: ignore[arg-type]
        assert server.model_calls == calls
        assert again.llm_calls == 0 and again.sessions_unchanged == 2
    assert len(Store(tmp_path / "experiences").experiences()) == 1


def test_grown_session_is_reprocessed_without_duplicate_files(tmp_path: Path) -> None:
    logs = _logs(tmp_path, ["alpha-session.jsonl"])
    settings = _settings(tmp_path, backend="heuristic")
    mine([logs], settings)  # type: ignore[arg-type]
    with (logs / "alpha-session.jsonl").open("a") as fh:
        fh.write('{"type":"user","sessionId":"a1f0c2d4-0000-4000-8000-000000000001",'
                 '"uuid":"late","message":{"role":"user","content":"thanks"}}\n')
    again = mine([logs], settings)  # type: ignore[arg-type]
    # Re-read, but its findings did not change: not sent to judge/draft again.
    assert again.sessions_new == 1 and again.sessions_selected == 0
    # More waste in the same session: analysed again, and the playbook is not duplicated.
    sid = "e5e5e5e5-0000-4000-8000-000000000005"
    (logs / "grow.jsonl").write_text(claude_session(sid, 3))
    mine([logs], settings)  # type: ignore[arg-type]
    (logs / "grow.jsonl").write_text(claude_session(sid, 5))
    grown = mine([logs], settings)  # type: ignore[arg-type]
    assert grown.sessions_selected == 1
    assert grown.drafts["existing"] + grown.drafts["duplicate"] == 1
    assert len(Store(tmp_path / "experiences").experiences()) == 1


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    settings = _settings(tmp_path, backend="heuristic")
    out = mine([logs], settings, dry_run=True)  # type: ignore[arg-type]
    assert out.dry_run and out.drafts["new"] == 1 and out.drafts["duplicate"] == 1
    assert out.written[0]["id"] is None and out.written[0]["title"]
    assert not (tmp_path / "experiences").exists()
    with Ledger(tmp_path / "ledger.db") as led:
        assert led.db.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 0
        assert led.db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0] == 0
    real = mine([logs], settings)  # type: ignore[arg-type]
    assert real.drafts["new"] == 1


def test_rejected_signature_is_not_written_again_unless_evidence_grows(tmp_path: Path) -> None:
    logs = _logs(tmp_path, ["alpha-session.jsonl"])
    settings = _settings(tmp_path, backend="heuristic")
    mine([logs], settings)  # type: ignore[arg-type]
    store = Store(tmp_path / "experiences")
    with Ledger(tmp_path / "ledger.db") as led:
        reject(store, led, list_candidates(store, led)[0].exp_id)
    # Another session with the same trap and no more waste (beta has 2 wasted steps).
    _logs(tmp_path, ["beta-session.jsonl"])
    out = mine([logs], settings)  # type: ignore[arg-type]
    assert store.experiences() == []
    assert out.sessions_selected == 0 and out.drafts["new"] == 0
    # A session with more waste than when rejected brings it back.
    (logs / "delta.jsonl").write_text(claude_session("d4d4d4d4-0000-4000-8000-000000000004", 6))
    out = mine([logs], settings)  # type: ignore[arg-type]
    assert out.drafts["new"] == 1


def test_selection_limits_and_since(tmp_path: Path) -> None:
    logs = _logs(tmp_path, [*SAME_TRAP, "gamma-session.jsonl"])
    settings = _settings(tmp_path, backend="heuristic", max_sessions_per_run=1)
    out = mine([logs], settings)  # type: ignore[arg-type]
    assert (out.sessions_selected, out.sessions_deferred) == (1, 2)
    assert out.written[0]["session_id"].startswith("a1f0c2d4")  # most wasted steps first
    nxt = mine([logs], settings)  # type: ignore[arg-type]
    assert nxt.sessions_unchanged == 1 and nxt.sessions_selected == 1
    future = datetime.date.today() + datetime.timedelta(days=2)
    later = mine([logs], settings, since=future)  # type: ignore[arg-type]
    assert later.sessions_new == 0 and later.sessions_unchanged == 3
    high = _settings(tmp_path, backend="heuristic", min_wasted_steps=10)
    assert mine([logs], high).sessions_selected == 0  # type: ignore[arg-type]


def test_bad_input_is_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    # Claimed by the Gemini CLI adapter (positive evidence), then cut off: a failure.
    (logs / "broken.json").write_text('{"sessionId": "s", "projectHash": "p", "messages": [')
    # No adapter claims these: skipped as not session logs, never failures.
    (logs / "binary.jsonl").write_bytes(b"\x00\x01\x02 not a log")
    (logs / "report.json").write_text('{"resolved": false}')
    settings = _settings(tmp_path, backend="heuristic", fail_on_error=0.9)
    out = mine([logs], settings)  # type: ignore[arg-type]
    assert out.exit_code == 3
    assert out.sessions_failed == 1 and any("broken.json" in i for i in out.issues)
    assert out.skipped == [
        f"{logs / 'binary.jsonl'}: not a session log (binary file (NUL bytes), not a text log)",
        f"{logs / 'report.json'}: not a session log"]
    assert out.drafts["new"] == 1
    # Reported once: the unchanged broken file is not a new failure on the next run.
    again = mine([logs], settings)  # type: ignore[arg-type]
    assert again.exit_code == 0 and again.sessions_failed == 0


def test_cli_json_summary_and_parallel_jobs(tmp_path: Path) -> None:
    logs = _logs(tmp_path, [*SAME_TRAP, "gamma-session.jsonl"])
    Store(tmp_path / "experiences").init()
    result = CliRunner().invoke(main, [
        "mine", str(logs), "--store", str(tmp_path / "experiences"), "--ledger",
        str(tmp_path / "ledger.db"), "--backend", "heuristic", "--jobs", "2", "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert doc["schema"] == "orf.mine/1"
    assert doc["drafts"]["new"] == 1 and doc["drafts"]["related"] == 1
    assert doc["drafts"]["duplicate"] == 1
    assert doc["sessions"] == {"seen": 3, "unchanged": 0, "new": 3, "failed": 0,
                               "selected": 3, "deferred": 0}
    related = [w for w in doc["written"] if w["outcome"] == "related"][0]
    exp = Store(tmp_path / "experiences").read_experience(related["id"])
    assert (exp.provenance or {})["related_to"] == related["related_to"]
    table = CliRunner().invoke(main, [
        "mine", str(logs), "--store", str(tmp_path / "experiences"), "--ledger",
        str(tmp_path / "ledger.db"), "--backend", "heuristic", "--quiet"])
    assert table.exit_code == 0
    assert "3 seen, 0 new, 3 unchanged, 0 failed" in table.stdout


def test_cli_requires_a_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["mine", "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "give at least one PATH, or --default-locations" in result.output


@pytest.mark.parametrize("flag", ["--since"])
def test_cli_bad_since(tmp_path: Path, flag: str) -> None:
    result = CliRunner().invoke(main, ["mine", str(tmp_path), flag, "yesterday"])
    assert result.exit_code == 2
    assert "'yesterday' is not a date (use YYYY-MM-DD)" in result.output


def test_batch_mode_goes_through_one_batch_job(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    settings = _settings(tmp_path, backend="gemini")
    with FakeGemini() as server:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        out = mine([logs], settings, batch=True, client=client)  # type: ignore[arg-type]
        assert server.count(":batchGenerateContent") >= 1
        assert server.count(":generateContent") == 0
    assert out.exit_code == 0, out.errors
    assert (out.drafts["new"], out.drafts["duplicate"]) == (1, 1)


def test_default_locations_expand_each_agents_folder(tmp_path: Path) -> None:
    from pipeline.mine import default_locations

    for rel in (".claude/projects", ".codex/sessions", ".gemini/tmp/abc123/chats",
                ".gemini/antigravity/brain"):
        (tmp_path / rel).mkdir(parents=True)
    found = [p.relative_to(tmp_path).as_posix() for p in default_locations(tmp_path)]
    assert found == [".claude/projects", ".codex/sessions", ".gemini/tmp/abc123/chats",
                     ".gemini/antigravity/brain"]
    assert default_locations(tmp_path / "nobody") == []


@pytest.mark.episodes
def test_unusable_replies_are_retried_twice_then_cost_nothing(tmp_path: Path) -> None:
    """A session the model cannot draft is sent again on the next run, then recorded."""
    from pipeline.testing.fake_gemini import invalid_json

    logs = _logs(tmp_path, ["alpha-session.jsonl"])
    settings = _settings(tmp_path, backend="gemini")
    with FakeGemini(responder=lambda body: invalid_json()) as server:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        counts = []
        for n in range(3):
            run = mine([logs], settings, client=client)  # type: ignore[arg-type]
            counts.append(server.model_calls)
            assert run.exit_code in (0, 1)  # 1: every session read failed the model
            # A new category changes the prompt, as a night's new playbooks do: no cache hit.
            Store(tmp_path / "experiences").create_experience(
                domain=f"area-{n}", title=f"Playbook {n}", description="d", keywords=["k"],
                complexity="low", objective="o", trap="t", insight="i", validated_path="v",
                checklist=["c"], domain_title=f"Area {n}", domain_description="d")
    # a request and its send-back on each of max_draft_retries (2) runs; then none
    assert counts == [2, 4, 4]
    with Ledger(tmp_path / "ledger.db") as led:
        row = led.db.execute("SELECT attempts, reason FROM draft_retries").fetchone()
    assert row["attempts"] == 2 and "the reply is not JSON" in row["reason"]
