"""Retrieval on mined playbooks: another session's error text finds the playbook of its trap."""

from __future__ import annotations

from pathlib import Path

import pytest
from _agents_helpers import run_cli

from pipeline import ParseContext, discover, parse_source
from pipeline.agents.search import SearchIndex
from pipeline.orf import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HELD_OUT = FIXTURES / "mine" / "beta-session.jsonl"
"""Same trap as alpha-session.jsonl (a missing module), another session: never mined here."""


def first_error_output(log: Path) -> str:
    for source in discover([log], issues=[]):
        for traj in parse_source(source, ParseContext()):
            for step in traj.steps:
                if step.is_error and step.output:
                    return step.output
    raise AssertionError(f"{log} has no failed step")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("mined")
    inputs = [p for p in sorted(FIXTURES.iterdir()) if p.is_dir() and p.name != "mine"]
    inputs += [p for p in sorted((FIXTURES / "mine").glob("*.jsonl")) if p != HELD_OUT]
    store = tmp / "experiences"
    assert run_cli("init", "--store", store)[0] == 0
    code, _, err = run_cli("mine", *inputs, "--store", store, "--ledger", tmp / "ledger.db",
                           "--backend", "heuristic", "--quiet")
    assert code in (0, 3), err
    return store


def test_held_out_session_error_ranks_its_trap_first(mined: Path) -> None:
    experiences = Store(mined).experiences()
    assert len(experiences) >= 3, "need distractors for a ranking test"
    right = [e.id for e in experiences
             if any(str(p).endswith("mine/alpha-session.jsonl")
                    for p in (e.provenance or {}).get("source_paths", []))]
    assert len(right) == 1
    query = first_error_output(HELD_OUT)
    assert "ModuleNotFoundError" in query
    hits = SearchIndex.load(mined).search(query, 3)
    assert hits[0].doc.id == right[0]
    assert hits[0].score > hits[1].score


def test_every_mined_playbook_is_found_by_its_own_sessions_error(mined: Path) -> None:
    index = SearchIndex.load(mined)
    for exp in Store(mined).experiences():
        paths = (exp.provenance or {}).get("source_paths", [])
        logs = [Path(p) for p in paths if Path(p).is_file()]
        if not logs:
            continue
        query = first_error_output(logs[0])
        top3 = [h.doc.id for h in index.search(query, 3)]
        assert exp.id in top3, (exp.id, exp.title, query[:200], top3)
