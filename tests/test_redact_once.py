"""Each parsed string is redacted once, at the source; the public helpers stay safe on raw text.

``error_signature`` and ``bounded`` redact what they are given unless told it was already
redacted whole; the step builders tell them so, and Codex bounds its task and final message
from the text its step was redacted to. No second scan, and nothing depends on one: the
planted values stay out of everything parsed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
from _secret_corpus import write_corpus

from pipeline import normalize
from pipeline.formats import common
from pipeline.formats.base import ParseContext
from pipeline.formats.common import bounded
from pipeline.formats.discover import discover, parse_source
from pipeline.formats.steps import set_output, text_step, text_step_and_text, tool_step
from pipeline.model import Trajectory
from pipeline.normalize import error_signature
from pipeline.privacy import SessionSecrets, memory

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "trajectories"
KEY = "sk-ant-api03-" + "Q7vLm2Xp9RtZ4wYb8NcK1dHf6JsG3uEa5oPi0qTl" + "-AbCdEfGh"
"""A key-shaped value the redactor knows by its prefix (none of the helpers may return it)."""


def _no_module_redact(monkeypatch: pytest.MonkeyPatch, *, bounded_too: bool = True) -> list[str]:
    """Make the module-level ``redact`` of the step builders record each text it scans.

    ``error_signature`` always; ``bounded`` too unless ``bounded_too`` is False.
    """
    seen: list[str] = []

    def record(text: str, counts: Counter[str] | None = None) -> str:
        seen.append(text)
        return text

    monkeypatch.setattr(normalize, "redact", record)
    if bounded_too:
        monkeypatch.setattr(common, "redact", record)
    return seen


def _session_scans(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the session memory's scans (cache misses) per text."""
    scans: Counter[str] = Counter()
    real = memory._scan_text

    def count(text: str) -> list:
        scans[text] += 1
        return real(text)

    monkeypatch.setattr(memory, "_scan_text", count)
    return scans


def test_error_signature_of_raw_text_redacts_its_line() -> None:
    raw = f"Error: invalid x-api-key ({KEY})\n"
    sig = error_signature(raw)
    assert sig == "Error: invalid x-api-key ([REDACTED:anthropic-api-key])"


def test_error_signature_of_redacted_text_does_not_scan_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clean = SessionSecrets().redact(f"Error: invalid x-api-key ({KEY})\n")
    seen = _no_module_redact(monkeypatch)
    assert error_signature(clean, redacted=True) == (
        "Error: invalid x-api-key ([REDACTED:anthropic-api-key])")
    assert seen == []


def test_bounded_redacts_raw_text_and_trusts_redacted_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert bounded(f"  deploy with {KEY}  ") == "deploy with [REDACTED:anthropic-api-key]"
    seen = _no_module_redact(monkeypatch)
    assert bounded("  deploy with [REDACTED:anthropic-api-key]\n", redacted=True) == (
        "deploy with [REDACTED:anthropic-api-key]")
    assert bounded(" \n ", redacted=True) is None
    assert seen == []


def test_text_step_and_text_gives_the_whole_redacted_text() -> None:
    ctx = ParseContext(output_max_chars=200)
    raw = "x" * 300 + f" token {KEY} " + "y" * 300
    step, clean = text_step_and_text(0, "m1", "message", raw, ctx)
    assert clean == "x" * 300 + " token [REDACTED:anthropic-api-key] " + "y" * 300
    assert step.output_len == len(raw)
    assert step.output == text_step(0, "m1", "message", raw, ParseContext(
        output_max_chars=200)).output
    assert KEY[:20] not in step.output and len(step.output) < len(clean)


def test_step_builders_scan_each_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _no_module_redact(monkeypatch)
    scans = _session_scans(monkeypatch)
    ctx = ParseContext()
    failure = f"Traceback (most recent call last):\nAuthError: bad token {KEY} given\n"
    step = tool_step(0, "c1", "bash", {"command": "deploy"}, "", ctx)
    set_output(step, failure, ctx, exit_code=1)
    err = text_step(1, "e1", "system", f"stream error: token {KEY} rejected", ctx,
                    is_error=True)
    assert step.error_signature == "AuthError: bad token [REDACTED:anthropic-api-key] given"
    assert err.error_signature == "stream error: token [REDACTED:anthropic-api-key] rejected"
    assert seen == []
    assert max(scans.values()) == 1


def _codex_log(folder: Path, complete: bool = True) -> Path:
    """A Codex rollout whose task and messages hold ``KEY`` (and its last agent message)."""
    rows: list[dict[str, object]] = []

    def add(typ: str, payload: dict[str, object]) -> None:
        rows.append({"timestamp": f"2026-03-06T10:00:{len(rows):02d}.000Z", "type": typ,
                     "payload": payload})

    add("session_meta", {"id": "019ca000-2222-7333-8444-555566667777",
                         "timestamp": "2026-03-06T10:00:00.000Z", "cwd": "/home/dev/app",
                         "originator": "codex_cli_rs", "cli_version": "0.110.0"})
    add("event_msg", {"type": "user_message", "message": f"ship it; the key is {KEY}"})
    add("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1",
                          "arguments": json.dumps({"cmd": "make deploy"})})
    add("response_item", {"type": "function_call_output", "call_id": "c1",
                          "output": f"Process exited with code 1\nOutput:\nError: key {KEY} "
                                    "was revoked\n"})
    last = f"Deploy failed: the key `{KEY}` was revoked; rotate it."
    add("response_item", {"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": last}]})
    if complete:
        add("event_msg", {"type": "task_complete", "last_agent_message": last})
    path = folder / "codex" / "rollout-2026-03-06T10-00-00-019ca000-2222.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _parse(root: Path) -> list[Trajectory]:
    out: list[Trajectory] = []
    for src in discover([root], issues=[]):
        out.extend(parse_source(src, ParseContext()))
    return out


def test_codex_bounds_task_and_final_message_from_its_redacted_steps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _codex_log(tmp_path)
    seen = _no_module_redact(monkeypatch)
    [traj] = _parse(tmp_path)
    assert seen == []
    assert traj.task == "ship it; the key is [REDACTED:anthropic-api-key]"
    assert traj.outcome.final_message == (
        "Deploy failed: the key `[REDACTED:anthropic-api-key]` was revoked; rotate it.")
    [tool] = [s for s in traj.steps if s.kind == "tool"]
    assert tool.error_signature == "Error: key [REDACTED:anthropic-api-key] was revoked"
    dumped = json.dumps(asdict(traj), default=str)
    assert KEY[:12] not in dumped and KEY[-12:] not in dumped


@pytest.mark.parametrize("complete", [True, False], ids=["task_complete", "last_message"])
def test_codex_texts_do_not_depend_on_the_finishing_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complete: bool) -> None:
    """Without ``clean_trajectory``'s pass over task and final message, nothing leaks either."""
    _codex_log(tmp_path, complete)
    monkeypatch.setattr(common, "_finish_redaction", lambda traj, secrets: None)
    [traj] = _parse(tmp_path)
    assert traj.task == "ship it; the key is [REDACTED:anthropic-api-key]"
    assert traj.outcome.final_message == (
        "Deploy failed: the key `[REDACTED:anthropic-api-key]` was revoked; rotate it.")
    dumped = json.dumps(asdict(traj), default=str)
    assert KEY[:12] not in dumped and KEY[-12:] not in dumped


def test_planted_codex_session_needs_no_module_level_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = write_corpus(tmp_path)
    seen = _no_module_redact(monkeypatch)
    trajs = _parse(tmp_path / "codex")
    assert [t.source.format for t in trajs] == ["codex"] and seen == []
    assert corpus.leaks(json.dumps(asdict(trajs[0]), default=str)) == []


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="real samples not present")
def test_real_samples_take_signatures_and_codex_texts_without_a_second_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    signature_scans = _no_module_redact(monkeypatch, bounded_too=False)
    bounded_scans: list[str] = []
    real = common.redact

    def record(text: str, counts: Counter[str] | None = None) -> str:
        bounded_scans.append(text)
        return real(text, counts)

    monkeypatch.setattr(common, "redact", record)
    failed = codex = 0
    for src in discover([SAMPLES], issues=[]):
        bounded_scans.clear()
        trajs = list(parse_source(src, ParseContext()))
        failed += sum(1 for t in trajs for s in t.steps if s.is_error and s.error_signature)
        if trajs and all(t.source.format == "codex" for t in trajs):
            codex += 1
            assert bounded_scans == [], src.path
    if not codex:
        pytest.skip("no Codex sample")
    assert failed > 0  # the samples hold failures, so error_signature ran on them
    assert signature_scans == []
