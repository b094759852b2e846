"""Typed provenance: one builder, stage methods, the mapping form unchanged, old files read."""

from __future__ import annotations

from pathlib import Path

from _mine_helpers import make_draft

from pipeline.ledger import Ledger
from pipeline.orf import Store
from pipeline.provenance import Provenance, SessionRef
from pipeline.review import candidate_from
from pipeline.stages.dedupe import Decision
from pipeline.stages.write import WriteItem, write_candidates

FRESH = {
    "sessions": ["sess-1"], "source_paths": ["/logs/a.jsonl"], "format": "codex",
    "agent": "codex", "signature": "b2:find", "finding_kind": "rerun_unchanged",
    "step_range": [5, 6], "source_ids": ["c1", "c2"], "wasted_steps": 1, "wasted_tokens": 40,
    "verdict": None, "verdict_by": None, "backend": "heuristic", "model": None,
    "drafted_by": "heuristic",
}


def _fresh() -> Provenance:
    return Provenance.for_draft(
        session_id="sess-1", source_path="/logs/a.jsonl", format="codex", agent="codex",
        signature="b2:find", finding_kind="rerun_unchanged", steps=[5, 6], source_ids=["c1", "c2"],
        wasted_steps=1, wasted_tokens=40, verdict=None, verdict_by=None, backend="heuristic",
        model=None, drafted_by="heuristic")


def test_the_builder_gives_the_draft_mapping_in_its_key_order() -> None:
    wire = _fresh().wire()
    assert wire == FRESH and list(wire) == list(FRESH)
    assert _fresh().sessions == [SessionRef.bare("sess-1")]


def test_the_stages_give_the_file_mapping_the_dict_code_wrote() -> None:
    prov = _fresh().with_lesson("b2:find", "b2:lesson", "missing_program", "python", ["program"])
    prov = prov.judged("unknown", "heuristic")
    prov = prov.screened(
        "b2:find", SessionRef(id="sess-1", path="/logs/a.jsonl", format="codex", steps="5-6",
                              wasted_steps=1),
        {"outcome": "unknown", "reason": "no outcome signal", "decided_by": "heuristic",
         "confidence": None}, "heuristic", None)
    wire = prov.for_write(write_key="b2:key", signature="b2:find", backend="heuristic",
                          model=None, seen="2026-01-05T10:00:00+00:00", wasted_steps=1,
                          session_id="sess-1", related_to="EXP-20260101-0001").wire()
    expected = {
        "version": 1,
        "sessions": [{"id": "sess-1", "path": "/logs/a.jsonl", "format": "codex",
                      "steps": "5-6", "wasted_steps": 1}],
        **{k: FRESH[k] for k in ("source_paths", "format", "agent", "signature",
                                 "finding_kind", "step_range", "source_ids", "wasted_steps",
                                 "wasted_tokens")},
        "verdict": {"outcome": "unknown", "reason": "no outcome signal",
                    "decided_by": "heuristic"},
        "verdict_by": "heuristic", "backend": "heuristic", "model": None,
        "drafted_by": "heuristic",
        "signatures": ["b2:find", "b2:lesson"],
        "lesson": {"class": "missing_program", "target": "python", "delta": ["program"]},
        "write_key": "b2:key", "first_seen": "2026-01-05T10:00:00+00:00",
        "last_seen": "2026-01-05T10:00:00+00:00", "related_to": "EXP-20260101-0001",
    }
    assert wire == expected
    assert list(wire) == list(expected)
    assert list(wire["sessions"][0]) == ["id", "path", "format", "steps", "wasted_steps"]


def test_a_draft_without_provenance_gets_the_session_as_an_id() -> None:
    wire = Provenance.read({}).for_write(
        write_key="k", signature="s", backend="heuristic", model="m", seen="t",
        wasted_steps=2, session_id="sess-9", related_to=None).wire()
    assert list(wire.items()) == [
        ("version", 1), ("write_key", "k"), ("signature", "s"), ("backend", "heuristic"),
        ("model", "m"), ("first_seen", "t"), ("last_seen", "t"), ("wasted_steps", 2),
        ("sessions", ["sess-9"])]


def test_reading_keeps_unknown_keys_unreadable_values_and_order() -> None:
    old = {"custom": {"a": [1, 2]}, "sessions": ["s-old", {"id": "s-new", "steps": "3"}],
           "wasted_steps": "many", "signature": "b2:x", "verdict": "dead_end"}
    prov = Provenance.read(old)
    assert prov.wire() == old and list(prov.wire()) == list(old)
    assert prov.session_ids() == ["s-old", "s-new"]
    assert prov.sessions[1].steps == "3"
    assert prov.wasted_steps is None  # not a number: kept in the mapping, not read
    assert prov.verdict == "dead_end"
    assert Provenance.read(None).wire() == {}
    assert Provenance.read({"sessions": {"not": "a list"}}).wire() == {
        "sessions": {"not": "a list"}}


def test_reinforced_appends_once_and_counts() -> None:
    prov = Provenance.read({"sessions": ["s1"], "signature": "b2:x", "last_seen": "t0"})
    grown = prov.reinforced(SessionRef(id="s2", steps="4"), "t1")
    assert grown.wire() == {"sessions": ["s1", {"id": "s2", "steps": "4"}],
                            "signature": "b2:x", "last_seen": "t1", "reinforcements": 1}
    assert grown.reinforced(SessionRef(id="s1"), "t2") is grown
    assert prov.wire() == {"sessions": ["s1"], "signature": "b2:x", "last_seen": "t0"}


def test_merged_keeps_each_part_as_read() -> None:
    a = Provenance.read({"sessions": [{"id": "s1", "wasted_steps": 2}], "wasted_steps": 3,
                         "signature": "b2:a"})
    b = Provenance.read({"sessions": ["s2"], "signature": "b2:b"})
    merged = Provenance.merged([("EXP-1", "A", "2026-01-01", a), ("EXP-2", "B", "2026-01-02", b)],
                               signature="b2:a", signatures=["b2:a", "b2:b"], kind="overlap")
    assert merged.wire() == {
        "signature": "b2:a", "signatures": ["b2:a", "b2:b"], "consolidates": ["EXP-1", "EXP-2"],
        "consolidation": "overlap", "sessions": [{"id": "s1", "wasted_steps": 2}, "s2"],
        "wasted_steps": 5,
        "sources": {"EXP-1": {"title": "A", "created_at": "2026-01-01", "provenance": a.wire()},
                    "EXP-2": {"title": "B", "created_at": "2026-01-02", "provenance": b.wire()}}}


OLD_PROVENANCE = {"version": 1, "sessions": ["sess-old"], "signature": "b2:old",
                  "wasted_steps": 3, "backend": "gemini", "model": "gemini-2.5-flash",
                  "first_seen": "2025-06-01T10:00:00+00:00",
                  "last_seen": "2025-06-01T10:00:00+00:00"}


def _old_store(root: Path) -> tuple[Store, str]:
    store = Store(root)
    store.init()
    d = make_draft()
    exp = store.create_experience(
        domain=d.domain, title=d.title, description=d.description, keywords=d.keywords,
        complexity=d.complexity, objective=d.objective, trap=d.trap, insight=d.insight,
        validated_path=d.validated_path, checklist=d.checklist, domain_title=d.domain_title,
        domain_description=d.domain_description, provenance=OLD_PROVENANCE)
    return store, str(exp.id)


def test_an_old_exp_file_with_id_sessions_reads(tmp_path: Path) -> None:
    store, exp_id = _old_store(tmp_path / "experiences")
    exp = store.read_experience(exp_id)
    prov = Provenance.read(exp.provenance)
    assert prov.session_ids() == ["sess-old"] and prov.sessions[0].is_bare
    assert prov.wire() == OLD_PROVENANCE
    cand = candidate_from(exp, tmp_path / "experiences", None)
    assert cand.sessions == [{"id": "sess-old"}]
    assert cand.evidence == {"sessions": 1, "wasted_steps": 3, "wasted_tokens": 0}


def test_a_reinforcing_session_is_appended_to_an_old_file(tmp_path: Path) -> None:
    store, exp_id = _old_store(tmp_path / "experiences")
    path = store.read_experience(exp_id).path
    before = Path(path).read_text()
    draft = make_draft(signature="b2:old", provenance={
        "signature": "b2:old", "sessions": [{"id": "sess-new", "path": "/logs/n.jsonl",
                                             "format": "codex", "steps": "2-3",
                                             "wasted_steps": 2}]})
    item = WriteItem(draft, Decision("duplicate", target=exp_id, reason="signature"),
                     session_id="sess-new", signature="b2:old", wasted_steps=2)
    with Ledger(tmp_path / "ledger.db", store=tmp_path / "experiences") as ledger:
        report = write_candidates([item], store, ledger, backend="heuristic", model=None)
        write_candidates([item], store, ledger, backend="heuristic", model=None)
    assert [r.outcome for r in report.results] == ["duplicate"]
    after = Path(path).read_text()
    prov = store.read_experience(exp_id).provenance
    assert prov is not None
    assert prov["sessions"] == ["sess-old", {"id": "sess-new", "path": "/logs/n.jsonl",
                                             "format": "codex", "steps": "2-3",
                                             "wasted_steps": 2}]
    assert prov["reinforcements"] == 1  # the second identical write added nothing
    assert list(prov) == [*OLD_PROVENANCE, "reinforcements"]
    assert {k: v for k, v in prov.items() if k not in ("sessions", "reinforcements",
                                                      "last_seen")} == {
        k: v for k, v in OLD_PROVENANCE.items() if k not in ("sessions", "last_seen")}
    # Only the provenance block changed; the ORF keys and the body are as they were.
    assert after.split("provenance:")[0] == before.split("provenance:")[0]
    assert after.split("\n---\n", 1)[1] == before.split("\n---\n", 1)[1]


def test_a_draft_carries_it_typed_and_dumps_the_mapping() -> None:
    draft = make_draft(provenance=FRESH)
    assert isinstance(draft.provenance, Provenance)
    assert draft.provenance.sessions == [SessionRef.bare("sess-1")]
    dumped = draft.model_dump(mode="json")["provenance"]
    assert dumped == FRESH and list(dumped) == list(FRESH)
    assert make_draft(**{**draft.model_dump(), "title": draft.title}).provenance == \
        draft.provenance
    draft.provenance = {"signature": "b2:assigned"}  # type: ignore[assignment]
    assert draft.provenance.signature == "b2:assigned"  # read on assignment too
    assert make_draft(provenance={}).model_dump()["provenance"] == {}


def test_log_paths_are_written_as_a_teammate_can_read_them(tmp_path: Path) -> None:
    from pipeline.provenance import Provenance, portable_path

    repo = tmp_path / "repo"
    (repo / "logs").mkdir(parents=True)
    assert portable_path(str(repo / "logs" / "s.jsonl"), repo.resolve()) == "logs/s.jsonl"
    assert portable_path("/home/alice/.claude/projects/p/s.jsonl", None) == (
        "~/.claude/projects/p/s.jsonl")
    assert portable_path("/Users/bob/code/s.jsonl", repo) == "~/code/s.jsonl"
    assert portable_path("C:\\Users\\bob\\s.jsonl", None) == "~/s.jsonl"
    assert portable_path("/srv/logs/s.jsonl", repo) == "/srv/logs/s.jsonl"
    prov = Provenance.read({"sessions": [{"id": "s1", "path": "/home/alice/a.jsonl",
                                          "steps": "1-2"}, "s2"],
                            "source_paths": ["/home/alice/a.jsonl"]}).portable(None)
    assert prov.wire()["sessions"] == [{"id": "s1", "path": "~/a.jsonl", "steps": "1-2"}, "s2"]
    assert prov.wire()["source_paths"] == ["~/a.jsonl"]
