"""orf consolidate: overlapping and conflicting playbooks become one reviewed candidate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from _trends_helpers import git, init_repo
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ledger import Ledger
from pipeline.orf import Store, validate_store
from pipeline.pr import pr_body
from pipeline.review import list_candidates

PYTEST_A: dict[str, Any] = dict(
    domain="python-testing", title="Install missing test dependencies before rerunning pytest",
    description="Use when pytest fails at import time with ModuleNotFoundError for a "
                "third-party package.",
    keywords=["pytest", "modulenotfounderror"], complexity="low",
    objective="Get the test suite to run when collection fails on a missing module.",
    trap="pytest -x failed 4 times with ModuleNotFoundError: No module named 'requests' "
         "because the dependency was never installed in the virtualenv.",
    insight="An import error at collection time is an environment problem; rerunning the "
            "same command cannot fix it.",
    validated_path="1. Run `pip install requests`.\n2. Rerun `pytest -x tests/`.",
    checklist=["The missing package is installed", "pytest collects without errors"],
    provenance={"signature": "b2:sig-a", "wasted_steps": 3,
                "sessions": [{"id": "sess-a", "steps": "1-4", "wasted_steps": 3}]},
)
PYTEST_B: dict[str, Any] = dict(
    PYTEST_A, title="Install the missing module instead of rerunning pytest",
    keywords=["pytest", "dependencies", "virtualenv"], complexity="medium",
    trap="pytest failed 3 times with ModuleNotFoundError: No module named 'yaml' because the "
         "dependency was never installed in the virtualenv.",
    checklist=["The missing package is installed", "The lock file lists the package"],
    provenance={"signature": "b2:sig-b", "wasted_steps": 2,
                "sessions": [{"id": "sess-b", "steps": "2-4", "wasted_steps": 2}]},
)
GIT_C: dict[str, Any] = dict(
    domain="git", title="Resolve rebase conflicts file by file",
    description="Use when git rebase stops with merge conflicts in several files.",
    keywords=["git", "rebase"], complexity="medium",
    objective="Finish an interrupted rebase without losing commits.",
    trap="The agent ran git rebase --continue five times while conflict markers were still "
         "in the files.",
    insight="A rebase only continues once every conflicted file is edited and staged.",
    validated_path="1. `git status` lists the conflicted files.\n2. Fix each, `git add` it.\n"
                   "3. `git rebase --continue`.",
    checklist=["No conflict markers remain"],
    provenance={"signature": "b2:sig-c", "wasted_steps": 4,
                "sessions": [{"id": "sess-c", "steps": "5-9", "wasted_steps": 4}]},
)


def _store(tmp_path: Path, *playbooks: dict[str, Any]) -> tuple[Store, list[str]]:
    repo = tmp_path / "repo"
    init_repo(repo)
    store = Store(repo / "experiences")
    store.init()
    ids = [store.create_experience(**p).id for p in playbooks]
    git(repo, "add", "experiences")
    git(repo, "commit", "-q", "-m", "store")
    return store, ids


def _orf(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_two_overlapping_and_one_unrelated_give_one_merged_candidate(tmp_path: Path) -> None:
    store, (a, b, c) = _store(tmp_path, PYTEST_A, PYTEST_B, GIT_C)
    flags = ["--store", str(store.root), "--ledger", str(tmp_path / "ledger.db")]
    dry = orjson.loads(_orf("consolidate", *flags, "--dry-run", "--json"))
    assert [(g["ids"], g["kind"], g["written"]) for g in dry["groups"]] == [([a, b], "overlap",
                                                                             None)]
    assert dry["groups"][0]["title"] == PYTEST_A["title"]  # A has the most evidence
    assert len(store.experiences()) == 3

    text = _orf("consolidate", *flags)
    merged_id = sorted(e.id for e in store.experiences())[-1]
    assert text.splitlines()[0] == f"overlap: {a} + {b} -> {merged_id}"
    assert text.splitlines()[1] == f"  merged title: {PYTEST_A['title']}"
    assert validate_store(store.root) == []
    merged = store.read_experience(merged_id)
    prov = merged.provenance or {}
    assert prov["consolidates"] == [a, b]
    assert prov["signatures"] == ["b2:sig-a", "b2:sig-b"]
    assert [s["id"] for s in prov["sessions"]] == ["sess-a", "sess-b"]
    assert prov["wasted_steps"] == 3 + 3 + 2 + 2  # each source's own count plus its sessions'
    assert set(prov["sources"]) == {a, b}
    assert merged.complexity == "medium"
    assert merged.checklist == ["The missing package is installed",
                                "pytest collects without errors",
                                "The lock file lists the package"]
    assert f"Also seen as ({b}): {PYTEST_B['trap']}" in merged.trap

    # Review shows the group and the evidence weight; the PR body too.
    review = _orf("review", *flags)
    assert f"  consolidates (overlap): {a}, {b}; delete them in the same PR when you keep " \
           "this one" in review
    assert "  evidence weight: 2 session(s), 10 wasted step(s), wasted tokens unknown (no " \
           "counts in the log) it would have saved" in review
    with Ledger(tmp_path / "ledger.db", store=store.root) as led:
        [cand] = list_candidates(store, led)
    assert cand.replaces == [a, b]
    body = pr_body([cand])
    assert f"- consolidates (overlap): `{a}`, `{b}` — delete them in this PR if this one is " \
           "kept" in body
    assert "- evidence weight: 2 session(s), 10 wasted step(s), wasted tokens unknown (no " \
           "counts in the log) in the mined history" in body
    # Already proposed: a second run finds nothing new.
    assert _orf("consolidate", *flags) == "No overlapping or conflicting playbooks.\n"


def test_same_trigger_with_contradicting_paths_is_a_conflict(tmp_path: Path) -> None:
    pin = dict(PYTEST_B, title="Pin the dependency in requirements.txt, never pip install it",
               trap="The agent edited conftest.py three times to skip the import of yaml.",
               insight="Missing modules belong in the project's declared dependencies.",
               validated_path="1. Add `PyYAML==6.0.1` to requirements.txt.\n"
                              "2. Ask the user to rebuild the container image.",
               provenance={"signature": "b2:sig-pin", "wasted_steps": 1, "sessions": []})
    store, (a, b, _c) = _store(tmp_path, PYTEST_A, pin, GIT_C)
    groups = orjson.loads(_orf("consolidate", "--store", str(store.root), "--ledger",
                               str(tmp_path / "ledger.db"), "--json"))["groups"]
    assert [(g["ids"], g["kind"]) for g in groups] == [([a, b], "conflict")]
    assert "validated paths disagree" in groups[0]["reasons"][0]
    merged = store.read_experience(groups[0]["written"])
    assert merged.validated_path.startswith(f"Path from {a} (the most evidence):")
    assert f"Path from {b} (contradicts the one above; keep one):" in merged.validated_path
    assert "PyYAML==6.0.1" in merged.validated_path


def test_shared_signature_groups_even_unlike_texts(tmp_path: Path) -> None:
    # One trap, two unlike playbooks: their paths disagree, so it is a conflict.
    other = dict(GIT_C, provenance={"signature": "b2:sig-a", "wasted_steps": 1,
                                    "sessions": []})
    store, (a, b) = _store(tmp_path, PYTEST_A, other)
    groups = orjson.loads(_orf("consolidate", "--store", str(store.root), "--ledger",
                               str(tmp_path / "ledger.db"), "--dry-run", "--json"))["groups"]
    assert [(g["ids"], g["kind"]) for g in groups] == [([a, b], "conflict")]
    assert groups[0]["reasons"][0].startswith(f"{a} ~ {b}: shared signature, validated paths "
                                              "disagree (similarity ")


def test_missing_store_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["consolidate", "--store", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output == (f"Error: no ORF store at {tmp_path / 'none'} (INDEX.md not "
                             f"found); create one with `orf init --store {tmp_path / 'none'}`\n")
