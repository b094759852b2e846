"""Scenario tests: every loop family, positives and negatives (including the not-loops)."""

from __future__ import annotations

from pathlib import Path

from _detect_helpers import (
    compaction,
    edit,
    kinds,
    lines,
    msg,
    read,
    sh,
    traj,
    user,
    wasted,
    write,
)

from pipeline.config import DetectSettings
from pipeline.detect import detect_all
from pipeline.detect.shell import canonical

FAIL = "Traceback (most recent call last):\nImportError: cannot import name 'x'"


# ---- exact repeats -------------------------------------------------------------------------

def test_identical_failing_command_is_wasted_even_once() -> None:
    t = traj(sh("make docs", FAIL, error=True), sh("make docs", FAIL, error=True))
    found = detect_all(t)
    assert wasted(found) == [1]
    f = found[0]
    assert f.severity == "info" and f.wasted_steps == 1 and f.source_ids == ["s0", "s1"]
    assert f.error_signature and "ImportError" in f.error_signature


def test_identical_search_repeated_is_exact_repeat() -> None:
    t = traj(sh("find . -name '*.cfg'", "a.cfg"), sh("find . -name '*.cfg'", "a.cfg"),
             sh("find . -name '*.cfg'", "a.cfg"))
    found = detect_all(t)
    assert kinds(found) == ["exact_repeat"] and wasted(found) == [1, 2]
    assert found[0].severity == "warn"


def test_same_command_different_output_is_not_a_repeat() -> None:
    # Something outside the log changed (a server came up): no waste.
    t = traj(sh("curl -s localhost:8000/health", "refused"),
             sh("curl -s localhost:8000/health", "ok"))
    assert detect_all(t) == []


# ---- cycles ----------------------------------------------------------------------------------

def test_abab_cycle() -> None:
    t = traj(sh("git status", "clean"), sh("git diff", ""), sh("git status", "clean"),
             sh("git diff", ""), sh("git status", "clean"), sh("git diff", ""))
    found = detect_all(t)
    assert kinds(found) == ["cycle"]
    assert wasted(found) == [2, 3, 4, 5]
    assert found[0].severity == "high"


def test_cycle_period_setting_limits_search() -> None:
    steps = [sh(c, "x") for c in ("a1", "a2", "a3", "a4", "a5", "a6")] * 2
    found = detect_all(traj(*steps), DetectSettings(cycle_max_period=5))
    assert "cycle" not in kinds(found)
    found = detect_all(traj(*steps), DetectSettings(cycle_max_period=6))
    assert kinds(found) == ["cycle"] and len(wasted(found)) == 6


# ---- retry with variation ---------------------------------------------------------------------

def test_retry_variation_same_error_different_commands() -> None:
    err = "ModuleNotFoundError: No module named 'foo'"
    t = traj(sh("python run.py", err, error=True), sh("python -W ignore run.py", err,
                                                      error=True),
             sh("python -X dev ./run.py", err, error=True))
    found = detect_all(t)
    assert kinds(found) == ["retry_variation"] and wasted(found) == [1, 2]
    assert "ModuleNotFoundError" in (found[0].error_signature or "")


def test_same_error_from_other_scripts_is_experimenting() -> None:
    err = "ModuleNotFoundError: No module named 'foo'"
    t = traj(sh("python run.py", err, error=True), sh("python check.py", err, error=True),
             sh("python - <<'PY'\nimport foo\nPY", err, error=True))
    assert detect_all(t) == []


def test_retry_after_real_change_is_not_a_loop() -> None:
    err = "ModuleNotFoundError: No module named 'foo'"
    t = traj(sh("python run.py", err, error=True), edit("run.py", "import foo", "import bar"),
             sh("python -m run", err, error=True), write("setup.cfg", "[x]"),
             sh("python -X dev run.py", err, error=True))
    assert detect_all(t) == []


def test_resolution_names_the_change() -> None:
    err = "ModuleNotFoundError: No module named 'foo'"
    t = traj(sh("python run.py", err, error=True), sh("python run.py", err, error=True),
             sh("pip install foo", "installed"), sh("python run.py", "done"))
    (f,) = detect_all(t)
    assert f.resolution is not None and f.resolution.step == 3
    assert "pip install foo" in f.resolution.change
    assert f.resolution.action == "python run.py"


# ---- rerun without change ----------------------------------------------------------------------

def test_rerun_test_with_no_edit_between() -> None:
    t = traj(sh("python -m pytest tests/test_a.py -x", "1 failed", error=True),
             read("src/a.py"), sh("pytest -q tests/test_a.py", "1 failed", error=True))
    found = detect_all(t)
    assert kinds(found) == ["rerun_unchanged"] and wasted(found) == [2]


def test_rerun_after_edit_is_not_a_loop() -> None:
    t = traj(sh("pytest tests", "1 failed", error=True), edit("a.py", "x = 1", "x = 2"),
             sh("pytest tests", "1 failed", error=True), edit("a.py", "x = 2", "x = 3"),
             sh("pytest tests", "passed"))
    assert detect_all(t) == []


# ---- edit-revert ---------------------------------------------------------------------------

def test_edit_then_inverse_edit() -> None:
    t = traj(edit("a.py", "x = 1", "x = 2"), sh("pytest", "1 failed", error=True),
             edit("a.py", "x = 2", "x = 1"))
    found = detect_all(t)
    assert kinds(found) == ["edit_revert"] and wasted(found) == [0, 2]


def test_write_back_to_earlier_content_and_git_restore() -> None:
    t = traj(write("b.py", "v1"), write("b.py", "v2"), write("b.py", "v1"),
             edit("c.py", "a", "b"), sh("git checkout -- c.py", ""))
    found = detect_all(t)
    assert kinds(found) == ["edit_revert", "edit_revert"]
    assert wasted(found) == [1, 2, 3, 4]


def test_batch_edits_across_files_are_not_loops() -> None:
    t = traj(*(edit(f"pkg/m{i}.py", "old_api()", "new_api()") for i in range(6)))
    assert detect_all(t) == []


# ---- re-reading ------------------------------------------------------------------------------

def test_reread_same_file_and_overlapping_range() -> None:
    t = traj(read("/testbed/a.py", "1 import os", view_range=[1, 100]),
             sh("grep -n foo a.py", "3:foo"), sh("sed -n '20,60p' a.py", "lines"),
             read("/workspace/repo/a.py", "1 import os", view_range=[1, 100]))
    found = detect_all(t)
    assert kinds(found) == ["reread"] and wasted(found) == [2, 3]


def test_paging_through_a_file_is_not_a_reread() -> None:
    # Each view prints every line it asked for: none of them reached the end of the file.
    views = [(i * 50 + 1, i * 50 + 55) for i in range(6)]
    pages = [(300 + i * 40, 340 + i * 40) for i in range(3)]
    t = traj(*(read("a.py", lines(a, b), view_range=[a, b]) for a, b in views),
             *(sh(f"sed -n '{a},{b}p' a.py", lines(a, b)) for a, b in pages))
    assert detect_all(t) == []


def test_reread_after_write_is_not_a_loop() -> None:
    t = traj(read("a.py"), edit("a.py", "x", "y"), read("a.py"), compaction(), read("a.py"))
    assert detect_all(t) == []


# ---- near repeats ------------------------------------------------------------------------------

def test_shell_normalization_examples() -> None:
    assert canonical("ls -la /workspace/x") == canonical("ls -al /testbed")
    assert canonical("grep -rn foo .") == canonical('grep -rn "foo" ./')
    assert canonical("cd /testbed && python reproduce.py") == canonical(
        "python3 /testbed/reproduce.py 2>&1 | head -50")
    assert canonical("grep -rn foo src") != canonical("grep -rn bar src")


def test_near_repeat_of_listing_and_search() -> None:
    t = traj(sh("ls -la /workspace/x", "a b"), sh("ls -al /testbed", "a b"),
             sh("grep -rn foo .", "a:1"), sh('grep -rn "foo" ./', "a:1"))
    found = detect_all(t)
    assert kinds(found) == ["near_repeat", "near_repeat"] and wasted(found) == [1, 3]


def test_different_search_patterns_are_not_repeats() -> None:
    t = traj(sh('grep -n "DECL(x)" a.c', "29"), sh('grep -n "DEF(x)" a.c', "666"))
    assert detect_all(t) == []


# ---- polling ----------------------------------------------------------------------------------

def test_polling_a_background_job_is_not_a_loop() -> None:
    t = traj(sh("nohup python train.py > log.txt &", ""), sh("sleep 30", ""),
             sh("tail -n 5 log.txt", "epoch 1"), sh("sleep 30", ""), sh("ps aux | grep train", "x"),
             sh("tail -n 5 log.txt", "epoch 2"), sh("sleep 30", ""),
             sh("tail -n 5 log.txt", "epoch 3"))
    assert detect_all(t) == []


# ---- text loops and context thrash -----------------------------------------

def test_monologue() -> None:
    t = traj(msg("I will now fix the bug."), msg("I will now fix the bug."),
             msg("I will now  fix the bug."), user("go on"), msg("I will now fix the bug."))
    found = detect_all(t)
    assert kinds(found) == ["monologue"] and wasted(found) == [1, 2]


def test_chanting_and_prose_without_chanting() -> None:
    chant = "Let me check the configuration file again to be sure. " * 12
    t = traj(msg(chant), msg("A normal reply that explains the fix in plain words. " * 2))
    found = detect_all(t)
    assert kinds(found) == ["chanting"] and wasted(found) == [0]
    listy = "\n".join(f"- Let me check the configuration file again to be sure {i}"
                      for i in range(12))
    assert detect_all(traj(msg(listy))) == []


def test_context_thrash() -> None:
    t = traj(compaction(), sh("a", "1"), compaction(), sh("b", "2"), compaction())
    found = detect_all(t)
    assert kinds(found) == ["context_thrash"] and wasted(found) == [2, 4]
    spread = [compaction(), *(sh(f"c{i}", str(i)) for i in range(30)), compaction()]
    assert detect_all(traj(*spread)) == []


# ---- finding contents ---------------------------------------------------------------------------

def test_finding_fields_tokens_seconds_evidence() -> None:
    t = traj(sh("pytest", FAIL, error=True, tokens=10, ts="2025-01-01T00:00:00Z"),
             sh("pytest", FAIL, error=True, tokens=20, ts="2025-01-01T00:00:05Z"),
             sh("pytest", FAIL, error=True, tokens=30, ts="2025-01-01T00:00:09Z"),
             msg("done"))
    (f,) = detect_all(t)
    assert f.wasted_tokens == 50
    assert f.wasted_seconds == 4.0 + 0  # step 2 ends when the message starts (no timestamp)
    assert 2 <= len(f.evidence) <= 4 and f.evidence[0].raw_ref == "log.jsonl:1"
    assert f.summary and f.signature.startswith("b2:") and 0 < f.confidence <= 1


def test_signature_is_session_independent() -> None:
    a = traj(sh("cd /testbed && python reproduce.py", FAIL, error=True),
             sh("python reproduce.py", FAIL, error=True))
    b = traj(sh("python /workspace/proj/repro_bug.py", FAIL, error=True),
             sh("python /workspace/proj/repro_bug.py", FAIL, error=True))
    assert detect_all(a)[0].signature == detect_all(b)[0].signature
    c = traj(sh("pytest", FAIL, error=True), sh("pytest", FAIL, error=True))
    assert detect_all(c)[0].signature != detect_all(a)[0].signature


def test_one_family_chaining_over_shared_steps_is_one_finding() -> None:
    """``#14-15``, ``#15-16``, ``#16-17`` of one re-spelled search are one loop; findings of
    different families that only touch a step stay apart (unless they share a wasted step)."""
    from pipeline.detect.run import _components

    chain = [("near_repeat", [14, 15]), ("near_repeat", [15, 16]), ("near_repeat", [16, 17])]
    assert _components([[15], [16], [17]], chain) == [[0, 1, 2]]
    touching = [("reread", [9, 14]), ("near_repeat", [14, 15])]
    assert sorted(_components([[9], [15]], touching)) == [[0], [1]]
    assert _components([[15], [15]], touching) == [[0, 1]]  # a shared wasted step joins


def test_a_real_grep_loop_reads_as_one_finding(shared_trajectories: Path) -> None:
    from pipeline import ParseContext, discover, parse_source
    from pipeline.detect import detect_all

    path = shared_trajectories / "mini-swe-agent" / "cse635-mini__django__django-16938.traj.json"
    (traj,) = [t for src in discover([path], issues=[]) for t in parse_source(src, ParseContext())]
    loops = [f for f in detect_all(traj) if f.kind == "near_repeat" and 15 in f.steps]
    assert [(f.steps, f.wasted_steps) for f in loops] == [([14, 15, 16, 17], 3)]
