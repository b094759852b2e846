"""orf mine as a subprocess: SIGKILL at several points, then resume; concurrent runs."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.orf import Store, validate_store
from pipeline.testing.fake_gemini import FakeGemini

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mine"
NAMES = ["alpha-session.jsonl", "beta-session.jsonl", "gamma-session.jsonl"]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")


def _logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    for name in NAMES:
        shutil.copy(FIX / name, logs / name)
    return logs


def _cmd(logs: Path, root: Path, *extra: str) -> list[str]:
    store = Store(root / "experiences")
    if not store.exists():  # only `orf init` creates a store; `orf mine` refuses a missing one
        store.init()
    return [sys.executable, "-m", "pipeline", "mine", str(logs), "--store",
            str(root / "experiences"), "--ledger", str(root / "ledger.db"), "--jobs", "1",
            "--quiet", *extra]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORF_", "GEMINI", "GOOGLE"))
           or k == "ORF_READER"}
    env.update(extra)
    return env


def _snapshot(store: Path, backend: str = "heuristic") -> dict[str, str]:
    """Every file of the store, with the run timestamps and the per-store write key masked.

    On gemini the fake server's replies to repair attempts may differ between runs, so the
    verdict reason (a judge reply) is masked too; titles and bodies must match exactly.
    """
    out = {}
    for path in sorted(store.rglob("*.md")):
        text = path.read_text()
        # write_key is per store (it hashes the store's path): ref and killed differ there.
        text = re.sub(r"(first_seen|last_seen|last_updated|write_key): .*", r"\1: X", text)
        if backend == "gemini":
            text = re.sub(r"(\n    reason): .*", r"\1: X", text)
        out[str(path.relative_to(store))] = text
    return out


def _run_until_paused(cmd: list[str], env: dict[str, str], point: str) -> None:
    proc = subprocess.Popen(cmd, env={**env, "ORF_TEST_PAUSE_AT": point},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip() == f"orf: paused at {point}":
                break
        else:
            pytest.fail(f"never reached {point}; exit {proc.wait()}")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


@pytest.fixture(scope="module")
def fake_server() -> FakeGemini:
    with FakeGemini() as server:
        yield server  # type: ignore[misc]


@pytest.mark.slow
@pytest.mark.parametrize("point,backend", [
    ("scanned", "heuristic"), ("drafting", "gemini"), ("writing", "heuristic"),
    ("written", "gemini"),
])
def test_sigkill_then_rerun_gives_the_uninterrupted_result(
    tmp_path: Path, point: str, backend: str, fake_server: FakeGemini,
) -> None:
    logs = _logs(tmp_path)
    env = _env(GEMINI_API_KEY="test", GOOGLE_GEMINI_BASE_URL=fake_server.url)
    ref, killed = tmp_path / "ref", tmp_path / "killed"
    done = subprocess.run(_cmd(logs, ref, "--backend", backend), env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    expected = _snapshot(ref / "experiences", backend)
    assert len([k for k in expected if "/EXP-" in k]) == 2

    _run_until_paused(_cmd(logs, killed, "--backend", backend), env, point)
    calls = fake_server.model_calls
    resumed = subprocess.run(_cmd(logs, killed, "--backend", backend), env=env,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    if point == "written":
        assert fake_server.model_calls == calls  # drafts were all written: nothing to redo
    assert _snapshot(killed / "experiences", backend) == expected
    assert validate_store(killed / "experiences") == []
    leftovers = [p for p in (killed / "experiences").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    # And one more run finds nothing to do.
    last = subprocess.run(_cmd(logs, killed, "--backend", backend, "--json"), env=env,
                          capture_output=True, text=True)
    assert '"new": 0' in last.stdout
    assert _snapshot(killed / "experiences", backend) == expected


@pytest.mark.slow
def test_second_run_times_out_on_the_lock_with_a_clear_message(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    env = _env()
    holder = subprocess.Popen(_cmd(logs, tmp_path, "--backend", "heuristic"),
                              env={**env, "ORF_TEST_PAUSE_AT": "written"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stderr is not None
        for line in holder.stderr:
            if "paused at written" in line:
                break
        second = subprocess.run(_cmd(logs, tmp_path, "--backend", "heuristic",
                                     "--lock-timeout", "0.5"),
                                env=env, capture_output=True, text=True)
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 1
    store = tmp_path / "experiences"
    assert second.stderr.strip().splitlines()[-1] == (
        f"Error: another orf process holds the lock on {store} (waited 0.5s); "
        "try again when it finishes, or raise --lock-timeout")


@pytest.mark.slow
def test_two_concurrent_runs_both_finish_with_one_set_of_files(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    env = _env()
    procs = [subprocess.Popen(_cmd(logs, tmp_path, "--backend", "heuristic"), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    store = tmp_path / "experiences"
    assert len(list(store.glob("*/EXP-*.md"))) == 2
    assert validate_store(store) == []
    text = (store / "INDEX.md").read_text()
    assert text.count("* [EXP-") == 2
