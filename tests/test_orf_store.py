"""The ORF store library: reading, strict validation, writing, ids, traversal, crash safety."""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pipeline.errors import InvalidIdentifier, LockTimeout, StoreError
from pipeline.orf import (
    Store,
    check_domain,
    check_exp_id,
    init_store,
    new_experience_id,
    validate_store,
)
from pipeline.orf.render import render_body, render_frontmatter

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "experiences"
DAY = datetime.date(2026, 7, 20)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".orf.lock"
    }


def new_fields(**overrides: object) -> dict[str, object]:
    fields: dict[str, object] = dict(
        domain="python-scripting", title="Check exit codes before parsing output",
        description="Trigger when a script parses the output of a command it just ran.",
        keywords=["subprocess", "exit-code"], complexity="low",
        objective="Parse a command's output.", trap="The command failed and printed nothing.",
        insight="Check the exit status first.", validated_path="Use `check=True`.",
        checklist=["The exit code is checked."], created_at=DAY,
    )
    fields.update(overrides)
    return fields


@pytest.fixture
def ref_copy(orf_reference: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "experiences"
    shutil.copytree(orf_reference, dest)
    return dest


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".orf.lock"))
    return dest


# ---- reading and round trip ----

def test_reference_store_is_valid(orf_reference: Path) -> None:
    assert validate_store(orf_reference) == []


def test_demo_store_is_valid() -> None:
    assert validate_store(DEMO) == []
    assert [c.id for c in Store(DEMO).categories()] == ["agent-loops"]
    assert len(Store(DEMO).experiences()) >= 2


def test_reference_round_trip_reads_everything_and_writes_nothing(ref_copy: Path) -> None:
    before = snapshot(ref_copy)
    store = Store(ref_copy)
    assert [c.id for c in store.categories()] == ["python-scripting", "java-langchain4j"]
    entries = store.index_entries()
    assert [e.exp_id for e in entries] == [
        "EXP-20260720-0001", "EXP-20260720-0002", "EXP-20260720-0003", "EXP-20260722-0001",
        "EXP-20260721-0001",
    ]
    for entry in entries:
        exp = store.read_experience(entry.exp_id)
        assert exp.domain == entry.domain and exp.id == entry.exp_id
        assert exp.objective and exp.trap and exp.validated_path and exp.checklist
        assert not exp.insight.startswith(">")
        # Re-rendering the parsed fields gives the reference file back (modulo trailing blanks).
        rendered = render_frontmatter(
            exp_id=exp.id, title=exp.title, description=exp.description, domain=exp.domain,
            keywords=exp.keywords, complexity=exp.complexity, created_at=exp.created_at,
        ) + render_body(objective=exp.objective, trap=exp.trap, insight=exp.insight,
                        validated_path=exp.validated_path, checklist=exp.checklist)
        assert rendered.rstrip() == exp.path.read_text(encoding="utf-8").rstrip()
    assert len(store.experiences()) == 5
    assert snapshot(ref_copy) == before


def test_code_fence_headings_do_not_split_sections(ref_copy: Path) -> None:
    exp = Store(ref_copy).read_experience("EXP-20260722-0001")
    assert "block_diag" in exp.validated_path
    assert exp.checklist[0].startswith("Run `pytest")


# ---- writing ----

def test_create_changes_index_only_by_the_new_line_and_last_updated(ref_copy: Path) -> None:
    index = ref_copy / "INDEX.md"
    before = index.read_text(encoding="utf-8").splitlines(keepends=True)
    exp = Store(ref_copy).create_experience(**new_fields())  # type: ignore[arg-type]
    # Highest sequence of 2026-07-20 across the store is 0003.
    assert exp.id == "EXP-20260720-0004"
    after = index.read_text(encoding="utf-8").splitlines(keepends=True)
    added = [line for line in after if line not in before]
    removed = [line for line in before if line not in after]
    assert removed == ['last_updated: "2026-07-21"\n']
    assert added[0].startswith('last_updated: "')
    new_line = "* [EXP-20260720-0004](python-scripting/EXP-20260720-0004.md): " \
               "Check exit codes before parsing output\n"
    assert added[1:] == [new_line]
    # Inserted at the end of its own section, before the blank line and the next section.
    assert after[after.index(new_line) - 1].startswith("* [EXP-20260722-0001]")
    assert validate_store(ref_copy) == []


def test_sequence_is_per_date_across_all_domains(ref_copy: Path) -> None:
    store = Store(ref_copy)
    exp = store.create_experience(**new_fields(domain="java-langchain4j",  # type: ignore[arg-type]
                                               created_at=datetime.date(2026, 7, 22)))
    assert exp.id == "EXP-20260722-0002"
    assert new_experience_id(datetime.date(2026, 7, 22), ["EXP-20260722-0009", "junk"]) \
        == "EXP-20260722-0010"
    assert new_experience_id(datetime.date(2030, 1, 1), []) == "EXP-20300101-0001"


def test_new_domain_adds_category_and_section(ref_copy: Path) -> None:
    index = ref_copy / "INDEX.md"
    before = index.read_text(encoding="utf-8")
    Store(ref_copy).create_experience(**new_fields(  # type: ignore[arg-type]
        domain="agent-loops", domain_title="Agent Loops",
        domain_description="Wasted steps of coding agents."))
    after = index.read_text(encoding="utf-8")
    cat_block = ('  - id: "agent-loops"\n    name: "Agent Loops"\n'
                 '    description: "Wasted steps of coding agents."\n---\n')
    assert cat_block in after
    assert after.endswith("\n## Category: Agent Loops (`agent-loops`)\n"
                          "* [EXP-20260720-0004](agent-loops/EXP-20260720-0004.md): "
                          "Check exit codes before parsing output\n")
    # Everything of the old body is still there byte for byte.
    old_body = before.split("---\n", 2)[2]
    assert old_body in after
    assert validate_store(ref_copy) == []


def test_written_file_style_matches_reference(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s")
    exp = store.create_experience(**new_fields(keywords=["yes", "a b", "1.5", "ok"]))  # type: ignore[arg-type]
    text = exp.path.read_text(encoding="utf-8")
    assert text.startswith('---\nid: "EXP-20260720-0001"\ntitle: "Check exit codes')
    assert '\nkeywords:\n  - "yes"\n  - "a b"\n  - "1.5"\n  - ok\ncomplexity: "low"\n' in text
    assert yaml.safe_load(text.split("---\n")[1])["keywords"] == ["yes", "a b", "1.5", "ok"]
    assert "\n## 3. Abstracted Insight\n> **Core Principle:** Check the exit status first.\n" \
        in text


def test_provenance_round_trips_and_updates_in_place(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s")
    prov = {"sessions": ["s1", "s2"], "steps": {"s1": [3, 9]}, "signature": "b2:abc",
            "verdict": "failure", "first_seen": datetime.date(2026, 7, 1)}
    exp = store.create_experience(**new_fields(provenance=prov))  # type: ignore[arg-type]
    expected = dict(prov, first_seen="2026-07-01")
    assert store.read_experience(exp.id).provenance == expected
    text = exp.path.read_text(encoding="utf-8")
    assert text.index("created_at:") < text.index("provenance:") < text.index("\n---\n")
    store.update_provenance(exp.id, {"sessions": ["s3"]})
    new_text = exp.path.read_text(encoding="utf-8")
    assert store.read_experience(exp.id).provenance == {"sessions": ["s3"]}
    assert new_text.split("provenance:")[0] == text.split("provenance:")[0]
    assert new_text.split("\n---\n", 1)[1] == text.split("\n---\n", 1)[1]
    assert validate_store(store.root) == []


def test_multiline_insight_round_trips(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s")
    exp = store.create_experience(**new_fields(insight="First line.\nSecond line."))  # type: ignore[arg-type]
    assert store.read_experience(exp.id).insight == "First line.\nSecond line."


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"title": "two\nlines"}, "title must be a single line"),
        ({"title": "  "}, "title must not be empty"),
        ({"description": "x" * 1025}, "description is 1025 characters long (max 1024)"),
        ({"complexity": "huge"}, "complexity 'huge' must be one of low, medium, high"),
        ({"keywords": [" ", ""]}, "give at least one keyword"),
        ({"checklist": []}, "give at least one checklist item"),
        ({"trap": "\n"}, "trap must not be empty"),
        ({"validated_path": "Do it.\n\n## Extra\nmore"},
         "the new experience would be invalid: unexpected section '## Extra' (only the five "
         "ORF sections are allowed at level 2)"),
    ],
)
def test_create_refuses_bad_fields(tmp_path: Path, overrides: dict[str, object],
                                   message: str) -> None:
    store = init_store(tmp_path / "s")
    before = snapshot(store.root)
    with pytest.raises(StoreError) as info:
        store.create_experience(**new_fields(**overrides))  # type: ignore[arg-type]
    assert str(info.value) == message
    assert snapshot(store.root) == before


def test_create_needs_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no ORF store at .* \(INDEX.md not found\); create "
                                         r"one with `orf init --store "):
        Store(tmp_path / "none").create_experience(**new_fields())  # type: ignore[arg-type]


def test_init_is_idempotent_and_valid(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s")
    text = store.index_path.read_text(encoding="utf-8")
    assert text.startswith('---\nspec_version: "0.2"\nlast_updated: "')
    assert yaml.safe_load(text.split("---\n")[1])["categories"] == []
    store.index_path.write_text(text + "<!-- kept -->\n", encoding="utf-8")
    store.init()
    assert store.index_path.read_text(encoding="utf-8").endswith("<!-- kept -->\n")
    assert validate_store(store.root) == []
    assert store.categories() == [] and store.experiences() == []


def test_remove_experience(demo_copy: Path) -> None:
    store = Store(demo_copy)
    first = store.index_entries()[0].exp_id
    removed = store.remove_experience(first)
    assert removed.id == first and not removed.path.exists()
    assert first not in [e.exp_id for e in store.index_entries()]
    assert validate_store(demo_copy) == []
    with pytest.raises(StoreError, match=f"experience {first} not found in "):
        store.read_experience(first)


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pipeline.fsutil import store_lock
    with store_lock(Path(sys.argv[1])):
        Path(sys.argv[2]).write_text("held")
        time.sleep(60)
""")


def test_lock_timeout_when_another_process_holds_the_lock(tmp_path: Path) -> None:
    store = Store(init_store(tmp_path / "s").root, lock_timeout=0.2)
    marker = tmp_path / "held"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.root), str(marker)])
    try:
        for _ in range(300):
            if marker.exists():
                break
            time.sleep(0.05)
        with pytest.raises(LockTimeout, match="another orf process holds the lock on"):
            store.create_experience(**new_fields())  # type: ignore[arg-type]
    finally:
        proc.kill()
        proc.wait()
    assert store.experiences() == []
    assert store.create_experience(**new_fields()).id == "EXP-20260720-0001"  # type: ignore[arg-type]


# ---- identifiers and traversal ----

@pytest.mark.parametrize("bad", ["../evil", "/etc", "a/b", "Python", "", "-x", "a" * 65,
                                 "dom\n", "..", "a.b", "a b", "é"])
def test_bad_domains_are_refused(bad: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidIdentifier) as info:
        check_domain(bad)
    assert str(info.value) == (f"invalid domain {bad!r}: use a lowercase slug of letters, digits "
                               "and '-' (1-64 characters, e.g. 'python-scripting')")
    store = init_store(tmp_path / "s" / "experiences")
    with pytest.raises(InvalidIdentifier):
        store.create_experience(**new_fields(domain=bad))  # type: ignore[arg-type]
    assert sorted(p.name for p in (tmp_path / "s").rglob("*.md")) == ["INDEX.md"]


@pytest.mark.parametrize("bad", ["../../etc/passwd", "EXP-20260720-0001/../x", "/tmp/x",
                                 "EXP-2026072-0001", "EXP-20260720-001", "exp-20260720-0001",
                                 "EXP-20260720-0001.md", "EXP-20260720-0001\n"])
def test_bad_ids_are_refused(bad: str, ref_copy: Path) -> None:
    with pytest.raises(InvalidIdentifier) as info:
        Store(ref_copy).read_experience(bad)
    assert str(info.value) == (f"invalid experience id {bad!r}: expected EXP-YYYYMMDD-NNNN, "
                               "e.g. EXP-20260720-0001")


def test_impossible_date_in_id_is_refused() -> None:
    with pytest.raises(InvalidIdentifier, match="20261399 is not a real date"):
        check_exp_id("EXP-20261399-0001")
    assert check_exp_id("EXP-20260720-0001") == "EXP-20260720-0001"


# ---- strict validation: one failing case per rule ----

Mutator = Callable[[Path], None]
EXP1 = "agent-loops/EXP-20261130-0001.md"


def edit(rel: str, old: str, new: str, count: int = 1) -> Mutator:
    def apply(root: Path) -> None:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new, count), encoding="utf-8")
    return apply


def write(rel: str, text: str) -> Mutator:
    def apply(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return apply


def delete(rel: str) -> Mutator:
    return lambda root: (root / rel).unlink()


RULES: list[tuple[str, Mutator, str]] = [
    ("index missing", delete("INDEX.md"),
     "INDEX.md: INDEX.md not found (create a store with `orf init`)"),
    ("index no frontmatter", edit("INDEX.md", "---\n", "", 2),
     "INDEX.md:1: no YAML frontmatter (must start with a '---' line and close with another)"),
    ("index bad yaml", edit("INDEX.md", 'spec_version: "0.2"', "spec_version: [0.2"),
     "INDEX.md:3: invalid YAML frontmatter: expected ',' or ']', but got ':'"),
    ("spec version", edit("INDEX.md", 'spec_version: "0.2"', 'spec_version: "9"'),
     "INDEX.md:2: spec_version '9' must be one of \"0.1\", \"0.2\""),
    ("last_updated", edit("INDEX.md", 'last_updated: "2026-11-30"',
                          'last_updated: "2026-02-30"'),
     "INDEX.md:3: last_updated '2026-02-30' is not a date (YYYY-MM-DD)"),
    ("category id", edit("INDEX.md", '- id: "agent-loops"', '- id: "Agent Loops"'),
     "INDEX.md:4: category id 'Agent Loops' is not a lowercase slug"),
    ("category field", edit("INDEX.md", '    name: "Agent Loop Traps"\n', ""),
     "INDEX.md:4: category #1 needs a non-empty string 'name'"),
    ("section name", edit("INDEX.md", "## Category: Agent Loop Traps", "## Category: Loops"),
     "INDEX.md:12: section name 'Loops' differs from the category name 'Agent Loop Traps'"),
    ("unknown section", edit("INDEX.md", "(`agent-loops`)", "(`other`)"),
     "INDEX.md:12: section for category 'other' which is not in the frontmatter categories"),
    ("malformed entry", edit("INDEX.md", "* [EXP-20261130-0001](agent-loops/EXP-20261130-0001.md)",
                             "* [EXP-20261130-0001] agent-loops/EXP-20261130-0001.md"),
     "INDEX.md:13: malformed entry line"),
    ("link mismatch", edit("INDEX.md", "(agent-loops/EXP-20261130-0001.md)",
                           "(agent-loops/EXP-20261130-0002.md)"),
     "INDEX.md:13: link 'agent-loops/EXP-20261130-0002.md' should be "
     "'agent-loops/EXP-20261130-0001.md'"),
    ("dangling link", delete(EXP1),
     "INDEX.md:13: link 'agent-loops/EXP-20261130-0001.md' does not resolve to a file"),
    ("not listed", edit("INDEX.md", "* [EXP-20261130-0001](agent-loops/EXP-20261130-0001.md): "
                        "Stop rerunning a failing test without changing anything\n", ""),
     f"{EXP1}: not listed in INDEX.md (run `orf validate --repair` to add it)"),
    ("duplicate entry", edit("INDEX.md", "* [EXP-20261130-0002]",
                             "* [EXP-20261130-0001](agent-loops/EXP-20261130-0001.md): again\n"
                             "* [EXP-20261130-0002]"),
     "INDEX.md:14: EXP-20261130-0001 is listed twice"),
    ("exp no frontmatter", edit(EXP1, "---\n", "", 2),
     f"{EXP1}:1: no YAML frontmatter"),
    ("missing key", edit(EXP1, 'complexity: "low"\n', ""),
     f"{EXP1}:2: missing frontmatter key 'complexity'"),
    ("unknown key", edit(EXP1, 'complexity: "low"\n', 'complexity: "low"\nauthor: "me"\n'),
     f"{EXP1}:13: unknown frontmatter key 'author'"),
    ("id pattern", edit(EXP1, 'id: "EXP-20261130-0001"', 'id: "EXP-1"'),
     f"{EXP1}:2: id 'EXP-1' does not match EXP-YYYYMMDD-NNNN"),
    ("id vs file", edit(EXP1, 'id: "EXP-20261130-0001"', 'id: "EXP-20261130-0009"'),
     f"{EXP1}:2: id 'EXP-20261130-0009' does not match the file name 'EXP-20261130-0001.md'"),
    ("title type", edit(EXP1, 'title: "Stop rerunning', 'title: ["Stop rerunning'),
     f"{EXP1}:4: invalid YAML frontmatter: expected ',' or ']'"),
    ("empty title", edit(EXP1, 'title: "Stop rerunning a failing test without changing '
                         'anything"', 'title: ""'),
     f"{EXP1}:3: title must be a non-empty string"),
    ("description length", edit(EXP1, 'description: "Trigger', 'description: "' + "x" * 1100),
     f"{EXP1}:4: description is "),
    ("domain vs folder", edit(EXP1, 'domain: "agent-loops"', 'domain: "python-scripting"'),
     f"{EXP1}:5: domain 'python-scripting' does not match the folder 'agent-loops'"),
    ("keyword type", edit(EXP1, "  - pytest\n", "  - 3\n"),
     f"{EXP1}:6: keywords must be a non-empty list of strings"),
    ("keywords scalar", edit(EXP1, "keywords:\n  - pytest\n  - retry\n  - flaky-test\n"
                             "  - loop\n  - debugging\n", 'keywords: "pytest, retry"\n'),
     f"{EXP1}:6: keywords must be a non-empty list of strings"),
    ("complexity", edit(EXP1, 'complexity: "low"', 'complexity: "trivial"'),
     f"{EXP1}:12: complexity 'trivial' must be one of low, medium, high"),
    ("created_at", edit(EXP1, 'created_at: "2026-11-30"', 'created_at: "last week"'),
     f"{EXP1}:13: created_at 'last week' is not a date (YYYY-MM-DD)"),
    ("provenance type", edit(EXP1, 'created_at: "2026-11-30"\n',
                             'created_at: "2026-11-30"\nprovenance: "x"\n'),
     f"{EXP1}:14: provenance must be a mapping"),
    ("missing section", edit(EXP1, "## 2. The Trap\n", ""),
     f"{EXP1}: missing section '## 2. The Trap'"),
    ("renamed section", edit(EXP1, "## 1. Objective", "## 9. Temp"),
     f"{EXP1}:16: unexpected section '## 9. Temp'"),
    ("unexpected section", edit(EXP1, "## 4. Validated Path\n", "## 4. Validated Path\nx\n\n"
                                "## Notes\n"),
     f"{EXP1}:28: unexpected section '## Notes'"),
    ("empty section", edit(EXP1, "## 1. Objective\nGet", "## 1. Objective\n\n## 9. x\nGet"),
     f"{EXP1}:16: section '## 1. Objective' is empty"),
    ("core principle", edit(EXP1, "> **Core Principle:** ", "> Principle: "),
     f"{EXP1}:23: section 3 must start with '> **Core Principle:**'"),
    ("checklist", edit(EXP1, "- [ ] ", "- ", 3),
     f"{EXP1}:32: the checklist has no '- [ ] ' item"),
    ("bad file name", write("agent-loops/notes.md", "hello\n"),
     "agent-loops/notes.md: file name does not match EXP-YYYYMMDD-NNNN.md"),
    ("bad folder", write("Bad_Folder/EXP-20261130-0009.md", "x\n"),
     "Bad_Folder/EXP-20261130-0009.md: folder 'Bad_Folder' is not a lowercase domain slug"),
]


@pytest.mark.parametrize(("name", "mutate", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_validation_rule_fails(name: str, mutate: Mutator, expected: str,
                                    demo_copy: Path) -> None:
    assert validate_store(demo_copy) == []
    mutate(demo_copy)
    problems = [str(p).replace(str(demo_copy) + "/", "") for p in validate_store(demo_copy)]
    assert any(p.startswith(expected) for p in problems), problems


def test_sections_out_of_order(demo_copy: Path) -> None:
    path = demo_copy / EXP1
    text = path.read_text(encoding="utf-8")
    head, rest = text.split("## 1. Objective\n", 1)
    objective, rest = rest.split("## 2. The Trap\n", 1)
    moved = rest.replace("## 3. Abstracted Insight\n",
                         "## 1. Objective\n" + objective + "## 3. Abstracted Insight\n")
    path.write_text(head + "## 2. The Trap\n" + moved, encoding="utf-8")
    problems = [str(p).replace(str(demo_copy) + "/", "") for p in validate_store(demo_copy)]
    assert problems == [f"{EXP1}:16: sections are out of order (expected Objective, The Trap, "
                        "Abstracted Insight, Validated Path, Verification Checklist)"]


def test_problem_format() -> None:
    from pipeline.orf import Problem
    assert str(Problem("a/b.md", 3, "bad")) == "a/b.md:3: bad"
    assert str(Problem("a/b.md", None, "bad")) == "a/b.md: bad"


# ---- crash safety ----

CHILD = textwrap.dedent("""
    import datetime, os, sys, time
    from pathlib import Path
    from pipeline.orf import Store

    root, marker, pause_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    real_replace = os.replace
    calls = 0

    def paused_replace(src, dst):
        # Stop inside the atomic write: temp file written and fsynced, not yet renamed.
        global calls
        calls += 1
        if calls == pause_at:
            marker.write_text(str(src))
            time.sleep(60)
        real_replace(src, dst)

    os.replace = paused_replace
    Store(root).create_experience(
        domain="agent-loops", title="Killed writer", description="d", keywords=["k"],
        complexity="low", objective="o", trap="t", insight="i", validated_path="v",
        checklist=["c"], created_at=datetime.date(2026, 11, 30))
""")


def kill_during_write(root: Path, pause_at: int, tmp_path: Path) -> Path:
    marker = tmp_path / f"paused-{pause_at}"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(marker), str(pause_at)])
    try:
        for _ in range(300):
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), "child never reached the write"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    return Path(marker.read_text())


def assert_no_partial_files(root: Path) -> None:
    for path in root.rglob("*.md"):
        assert path.read_text(encoding="utf-8").strip(), f"{path} is empty"


def test_sigkill_during_experience_write_leaves_store_valid(demo_copy: Path,
                                                            tmp_path: Path) -> None:
    before = snapshot(demo_copy)
    temp = kill_during_write(demo_copy, 1, tmp_path)
    assert temp.name.startswith(".EXP-20261130-0004.md.") and temp.exists()
    assert not (demo_copy / "agent-loops" / "EXP-20261130-0004.md").exists()
    after = snapshot(demo_copy)
    assert {k: v for k, v in after.items() if not k.endswith(".tmp")} == before
    assert_no_partial_files(demo_copy)
    assert validate_store(demo_copy) == []
    assert Store(demo_copy).repair() == ["removed 1 stale temp file(s)"]
    assert snapshot(demo_copy) == before


def test_sigkill_during_index_write_is_repaired(demo_copy: Path, tmp_path: Path) -> None:
    index_before = (demo_copy / "INDEX.md").read_bytes()
    kill_during_write(demo_copy, 2, tmp_path)
    # The playbook is complete, INDEX.md is the old one byte for byte: nothing is half-written.
    assert (demo_copy / "INDEX.md").read_bytes() == index_before
    new = demo_copy / "agent-loops" / "EXP-20261130-0004.md"
    assert new.read_text(encoding="utf-8").rstrip().endswith("- [ ] c")
    problems = [str(p) for p in validate_store(demo_copy)]
    assert problems == [f"{new}: not listed in INDEX.md (run `orf validate --repair` to add it)"]
    messages = Store(demo_copy).repair()
    assert messages == ["removed 1 stale temp file(s)",
                        "agent-loops/EXP-20261130-0004.md: added to INDEX.md"]
    assert validate_store(demo_copy) == []
    assert Store(demo_copy).index_entries()[-1].exp_id == "EXP-20261130-0004"


def test_repair_keeps_dangling_lines(demo_copy: Path) -> None:
    (demo_copy / EXP1).unlink()
    messages = Store(demo_copy).repair()
    assert messages == ["INDEX.md:13: EXP-20261130-0001 links to a missing file; kept (remove "
                        "the line by hand if intended)"]
    assert "EXP-20261130-0001" in (demo_copy / "INDEX.md").read_text(encoding="utf-8")
