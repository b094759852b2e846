"""Builders and fixtures shared by the LLM/stage tests (import the fixtures you use)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from pipeline.config import Settings
from pipeline.ledger import Ledger
from pipeline.llm import retry
from pipeline.llm.gemini import GeminiBackend
from pipeline.model import Evidence, Finding, OutcomeHints, Resolution, SourceInfo, Step, Trajectory
from pipeline.stages.view import StoreContext
from pipeline.testing.fake_gemini import FakeGemini

MODEL = Settings().model


@pytest.fixture(autouse=True)
def fast_retry_waits(request: pytest.FixtureRequest,
                     monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Zero tenacity/batch waits; the requested delays are recorded for assertions."""
    waits: list[float] = []
    if request.node.get_closest_marker("real_retry_waits") is None:
        monkeypatch.setattr(retry, "sleep", waits.append)
    return waits


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
        yield server


def client_for(server: FakeGemini) -> Any:
    return genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))


def gemini_settings(**settings: Any) -> Settings:
    """The settings ``gemini_backend`` builds its backend with (the stages get them too)."""
    opts: dict[str, Any] = {"backend": "gemini", "call_timeout_s": 5.0}
    opts.update(settings)
    return Settings(**opts)


def gemini_backend(server: FakeGemini, ledger: Ledger | None, **settings: Any) -> GeminiBackend:
    return GeminiBackend(gemini_settings(**settings), ledger, client=client_for(server))


def open_ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.db")


def make_traj(sid: str = "s1", *, outcome: OutcomeHints | None = None, repeats: int = 4,
              task: str = "Make the test suite pass", command: str = "python app.py"
              ) -> Trajectory:
    """A failing command repeated, then ``pip install -e . && <command>`` succeeding.

    The default command runs no tests, so the log is silent about the outcome and the judge
    must ask the model; pass ``command="pytest -x"`` for a log whose last test run passed.
    """
    steps: list[Step] = []
    for i in range(repeats):
        steps.append(Step(index=i, source_id=f"{sid}-c{i}", kind="tool", tool="bash",
                          args={"command": command},
                          action_key=f'bash {{"command":"{command}"}}',
                          output="E   ModuleNotFoundError: No module named 'foo'", exit_code=1,
                          is_error=True,
                          error_signature="ModuleNotFoundError: No module named <q>"))
    steps.append(Step(index=repeats, source_id=f"{sid}-c{repeats}", kind="tool", tool="bash",
                      args={"command": f"pip install -e . && {command}"},
                      action_key=f'bash {{"command":"pip install -e . && {command}"}}',
                      output="3 passed", exit_code=0))
    return Trajectory(id=sid, source=SourceInfo(format="claude-code", path=f"/logs/{sid}.jsonl"),
                      agent="claude-code", task=task, steps=steps,
                      outcome=outcome or OutcomeHints())


def make_finding(traj: Trajectory, *, resolved: bool = True, kind: str = "exact_repeat",
                 signature: str = "b2:sig-pytest") -> Finding:
    loop = [s for s in traj.steps if s.is_error]
    return Finding(
        kind=kind, steps=[s.index for s in loop], source_ids=[s.source_id for s in loop],
        wasted_source_ids=[s.source_id for s in loop[1:]], wasted_steps=len(loop) - 1,
        signature=signature,
        evidence=[Evidence(step=s.index, source_id=s.source_id,
                           quote=f"$ pytest -x -> {s.output}") for s in loop[:2]],
        resolution=Resolution(step=traj.steps[-1].index, source_id=traj.steps[-1].source_id,
                              change="installed the package in editable mode first",
                              action="pip install -e . && pytest -x") if resolved else None,
        summary=f"pytest -x failed {len(loop)}x with ModuleNotFoundError",
        error_signature="ModuleNotFoundError: No module named <q>",
    )


STORE = StoreContext(categories=[("python-env", "Python environments",
                                  "Virtualenvs, packaging, imports and module errors")],
                     titles=["Pin the Node version before npm install"])

GOOD_DRAFT: dict[str, Any] = {
    "finding": 0, "title": "Install the package before running its tests",
    "description": "Tests fail with ModuleNotFoundError for the project's own package.",
    "domain": "python-env", "keywords": ["pytest", "import", "editable-install"],
    "complexity": "low", "objective": "Run a project's tests from a fresh checkout.",
    "trap": "Re-running pytest -x kept failing with ModuleNotFoundError.",
    "insight": "An import error of the project itself means it is not installed; fix the "
               "environment, not the test.",
    "validated_path": "1. `pip install -e .`\n2. `pytest -x`",
    "checklist": ["pytest -x exits 0", "python -c 'import foo' works"],
}
