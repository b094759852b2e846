"""Ctrl-C stops `orf mine` in every phase: discovery, the scan's end, drafting, writing.

Each moment is reached through the pause hook (``stages/pause.py``): the process sleeps
there, the test sends SIGINT, and the run must end with 130, the resume line and nothing
half-written. The scan pool mid-work is `test_edges.py`'s case. The seconds are a hang guard,
not a speed figure (`bench/interrupt.py` prints the figures per phase).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _mine_helpers import claude_session, interrupt_mine

from pipeline.orf import Store, validate_store

RESUME = "Interrupted: nothing half-written; the next `orf mine` resumes the work."


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    for i in range(12):
        (folder / f"s{i:02d}.jsonl").write_text(claude_session(
            f"c0ffee00-0000-4000-8000-{i:012d}", 2 + i % 3, cwd=f"/home/dev/p{i % 3}"))
    return folder


@pytest.mark.parametrize("point", ["sources", "scanned", "drafting", "writing", "written"])
def test_ctrl_c_at_each_phase_exits_130_at_once(point: str, logs: Path, tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    Store(store).init()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORF_", "GEMINI", "GOOGLE"))}
    code, elapsed, rest = interrupt_mine(
        logs, store, {**env, "ORF_TEST_PAUSE_AT": point},
        lambda line: line.strip() == f"orf: paused at {point}")
    assert code == 130, rest
    assert elapsed < 5.0, f"{point}: exit took {elapsed:.2f}s after SIGINT"
    assert rest.splitlines()[-1] == RESUME and "Traceback" not in rest
    assert validate_store(store) == [] and not list(store.rglob(".*.tmp"))


def test_ctrl_c_during_a_slow_model_call_does_not_wait_for_it(tmp_path: Path) -> None:
    """The calls in flight are left behind: the ledger and the store are safe as on SIGKILL."""
    import shutil

    from pipeline.testing.fake_gemini import FakeGemini

    logs = tmp_path / "logs"
    logs.mkdir()
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "mine"
    for name in ("alpha-session.jsonl", "beta-session.jsonl"):
        shutil.copy(fixtures / name, logs / name)
    store = tmp_path / "experiences"
    Store(store).init()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORF_", "GEMINI", "GOOGLE"))}
    with FakeGemini(latency_s=60) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "mine", str(logs), "--store", str(store),
             "--backend", "gemini"],
            env={**env, "GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": server.url},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not server.requests and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        elapsed = time.monotonic() - sent
    assert proc.stderr is not None
    rest = proc.stderr.read()
    assert code == 130, rest
    assert elapsed < 5.0, f"exit took {elapsed:.2f}s after SIGINT (the call waits 60 s)"
    assert rest.splitlines()[-1] == RESUME and "Traceback" not in rest
    assert validate_store(store) == []
