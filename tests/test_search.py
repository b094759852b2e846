"""`orf search`: tokenizer, BM25 scores, ranking, the cached index and safe reads."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import pytest
from _agents_helpers import DAY, EDIT_ERROR, MODULE_ERROR, build_store, run_cli

from pipeline.agents import search as search_mod
from pipeline.agents.bm25 import Bm25Index, tokenize
from pipeline.agents.search import SearchIndex, cache_file, error_lines, scan
from pipeline.orf import Store


def test_tokenize_splits_identifiers_and_drops_noise() -> None:
    assert tokenize("ModuleNotFoundError: No module named 'requests'") == [
        "modulenotfounderror", "module", "found", "error", "module", "named", "requests"]
    assert tokenize("tests/test_api.py:12 error[E0432]") == [
        "tests", "test_api.py", "test", "api", "py", "error", "e0432"]
    assert tokenize("exit 127 and the of " + "a" * 50) == ["exit"]


def test_bm25_matches_the_lucene_formula_by_hand() -> None:
    docs = [{"pytest": 2, "error": 1}, {"error": 1, "cargo": 1, "build": 1}, {"notes": 4}]
    index = Bm25Index.build(docs)
    lengths = [3, 3, 4]
    avgdl = sum(lengths) / 3

    def part(tf: int, df: int, dl: int) -> float:
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))

    scores = index.scores(["pytest", "error", "pytest"])  # a repeated term counts once
    assert scores[0] == pytest.approx(part(2, 1, 3) + part(1, 2, 3))
    assert scores[1] == pytest.approx(part(1, 2, 3))
    assert 2 not in scores
    assert index.top(["pytest", "error"], 1) == [(0, scores[0])]
    assert Bm25Index.build([]).scores(["x"]) == {}


def test_error_lines_come_from_provenance_then_quoted_errors() -> None:
    prov = {"lesson": {"symptom_line": "E   ImportError: cannot import name 'x'",
                       "error_class": "missing_module"}, "signature": "b2:1"}
    lines = error_lines(prov, "Trigger when `npm test` fails (`Error: Cannot find module 'y'`)",
                        "ran `ls` twice, then ``Parameter `old_str` is required.`` (invalid)")
    assert lines == ["E   ImportError: cannot import name 'x'", "Error: Cannot find module 'y'",
                     "Parameter `old_str` is required."]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "experiences"
    build_store(root)
    return root


def test_error_text_finds_the_playbook_whose_trap_it_is(store: Path) -> None:
    index = SearchIndex.load(store)
    traceback = ("============ ERRORS ============\nImportError while loading conftest "
                 f"'/home/u/app/tests/conftest.py'.\ntests/conftest.py:3: in <module>\n"
                 f"    import requests\nE   {MODULE_ERROR}\n")
    hits = index.search(traceback, 3)
    assert hits[0].doc.title == "Install the missing module before rerunning pytest"
    assert index.search(f"Edit failed: {EDIT_ERROR}\nString: foo()", 1)[0].doc.title == (
        "Re-read the file before retrying a failed edit")
    assert index.search("open the same file again", 1)[0].doc.title == (
        "Keep notes instead of re-reading a file")
    assert index.search("zzz qqq", 5) == []


def test_cli_prints_yaml_like_the_orf_verbs_and_json(store: Path) -> None:
    code, out, err = run_cli("search", MODULE_ERROR, "--store", store, "--limit", "1")
    assert (code, err) == (0, "")
    score = SearchIndex.load(store).search(MODULE_ERROR, 1)[0].score
    assert out == (
        "results:\n"
        "- id: EXP-20260502-0001\n"
        "  title: Install the missing module before rerunning pytest\n"
        "  description: 'Trigger when `pytest` fails with ModuleNotFoundError "
        "(`ModuleNotFoundError: No module named ''requests''`) and the next move would be to "
        "run it again unchanged.'\n"
        "  domain: python-tooling\n"
        f"  score: {round(score, 3)}\n"
        f"  file_path: {store}/python-tooling/EXP-20260502-0001.md\n")
    code, out, _ = run_cli("search", "edit", "old_string", "--store", store, "--json")
    assert code == 0
    assert [r["id"] for r in json.loads(out)["results"]] == ["EXP-20260502-0002"]


def test_a_query_sharing_only_common_words_is_no_match(store: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    index = SearchIndex.load(store)
    # "module" and "error" are in the module playbook, but not what the query is about.
    assert index.search("Build the workspace module before the error page", 5) == []
    code, out, err = run_cli("search", "kubernetes pod crashloop backoff", "--store", store)
    assert (code, out, err) == (0, "results: []\n", "orf: no playbook matches this query\n")
    from pipeline.agents import views

    assert views.search_text(Store(store), "kubernetes pod crashloop", 5) == (
        "no playbook matches this query\n")


def test_the_coverage_floor_is_inclusive(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit at exactly ``MIN_COVERAGE`` passes, a hair below does not (``>=``)."""
    index = SearchIndex.load(store)
    query = "rerunning pytest kubernetes"
    (hit,) = index.search_terms(tokenize(query), 1)
    share = index.bm25.coverage(hit.number, tokenize(query))
    assert 0 < share < 1
    monkeypatch.setattr(search_mod, "MIN_COVERAGE", share)
    assert [h.doc.id for h in index.search(query, 5)] == [hit.doc.id]
    monkeypatch.setattr(search_mod, "MIN_COVERAGE", share + 1e-9)
    assert index.search(query, 5) == []


def test_a_long_pasted_output_has_the_lower_floor(store: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """More than ``LONG_QUERY_TERMS`` distinct terms: names and paths no playbook holds."""
    index = SearchIndex.load(store)
    words = "install missing module rerunning pytest alpha beta gamma delta epsilon zeta eta"
    assert len(set(tokenize(words))) == search_mod.LONG_QUERY_TERMS
    (hit,) = index.search_terms(tokenize(words), 1)
    share = index.bm25.coverage(hit.number, tokenize(words))
    assert search_mod.MIN_COVERAGE_LONG <= share < search_mod.MIN_COVERAGE
    assert index.search(words, 5) == []  # twelve terms: still a typed query
    longer = words + " requests"  # a thirteenth term, one the playbook holds
    assert share < index.bm25.coverage(hit.number, tokenize(longer)) < search_mod.MIN_COVERAGE
    assert [h.doc.id for h in index.search(longer, 5)] == [hit.doc.id]


def test_cli_errors(tmp_path: Path, store: Path) -> None:
    code, _, err = run_cli("search", "x", "--store", tmp_path / "none")
    assert code == 1
    assert err == (f"Error: no ORF store at {tmp_path / 'none'} (INDEX.md not found); "
                   f"create one with `orf init --store {tmp_path / 'none'}`\n")
    code, _, err = run_cli("search", " ", "--store", store)
    assert (code, err) == (2, "Error: QUERY is empty\n")


def test_cache_is_reused_and_only_changed_files_are_parsed(store: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    first = SearchIndex.load(store)
    assert cache_file(store).is_file()
    parsed: list[str] = []
    real = search_mod._parse

    def counting(root: Path, rel: str) -> object:
        parsed.append(rel)
        return real(root, rel)

    monkeypatch.setattr(search_mod, "_parse", counting)
    again = SearchIndex.load(store)
    assert parsed == []
    assert [d.id for d in again.docs] == [d.id for d in first.docs]
    assert again.bm25.postings == first.bm25.postings
    Store(store).create_experience(
        domain="agent-loops", title="Wait for the lock instead of deleting it",
        description="Trigger when `fatal: Unable to create index.lock: File exists` appears.",
        keywords=["git", "lock"], complexity="low", objective="Commit.", trap="Deleted it.",
        insight="A lock means someone works.", validated_path="1. Wait.",
        checklist=["No lock deleted"], created_at=DAY)
    grown = SearchIndex.load(store)
    assert parsed == ["agent-loops/EXP-20260502-0004.md"]
    assert grown.search("fatal: Unable to create index.lock", 1)[0].doc.id == "EXP-20260502-0004"


def test_unreadable_cache_is_rebuilt(store: Path) -> None:
    SearchIndex.load(store)
    cache_file(store).write_text("{not json", encoding="utf-8")
    assert len(SearchIndex.load(store).docs) == 3


def test_temp_files_and_broken_playbooks_are_skipped(store: Path) -> None:
    (store / "agent-loops" / ".EXP-20260502-0009.md.x1.tmp").write_text("---\nid: half")
    (store / "agent-loops" / "EXP-20260502-0010.md").write_text("no frontmatter")
    assert "agent-loops/EXP-20260502-0010.md" in scan(store)
    assert sorted(d.id for d in SearchIndex.load(store).docs) == [
        "EXP-20260502-0001", "EXP-20260502-0002", "EXP-20260502-0003"]


def test_reader_never_sees_a_half_written_store(store: Path) -> None:
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            orf = Store(store)
            for n in range(25):
                orf.create_experience(
                    domain="agent-loops", title=f"Playbook marker{n}",
                    description=f"Trigger when error marker{n} appears.", keywords=["n"],
                    complexity="low", objective="o", trap="t", insight="i",
                    validated_path="v", checklist=["c"], created_at=DAY)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    loads = 0
    while not done.is_set() or loads == 0:
        index = SearchIndex.load(store)
        for doc in index.docs:
            assert doc.rel_path == f"{doc.domain}/{doc.id}.md"
            assert doc.title and doc.insight and doc.validated_path
        loads += 1
    writer.join()
    assert errors == []
    final = SearchIndex.load(store)
    assert len(final.docs) == 28
    assert final.search("error marker24", 1)[0].doc.title == "Playbook marker24"
