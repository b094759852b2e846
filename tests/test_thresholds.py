"""Every user-facing cut-off pinned at its boundary: a hair above and a hair below.

Each test builds real inputs whose measure sits just on either side of the default, asserts
where the measure sits (so a change of the scoring itself is seen too), then asserts what the
public function decides. Moving a default, or turning ``>=`` into ``>``, turns one of them red.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _detect_helpers import compaction, lines, msg, read, sh, traj
from _lesson_helpers import Call, bash, claude_log, say, scan_log
from _mine_helpers import claude_session, make_draft
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.config import Settings
from pipeline.detect import annotate_repeats, detect_all
from pipeline.detect.actions import analyze
from pipeline.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL
from pipeline.lessons.proof import make_proven
from pipeline.llm.backend import LLMReply
from pipeline.mine import mine
from pipeline.model import Draft
from pipeline.orf import Store
from pipeline.report.summary import MineSummary
from pipeline.run_summary import exit_code
from pipeline.stages.dedupe import Decision, Known, dedupe
from pipeline.stages.judge import parse_judge_reply
from pipeline.stages.quality import quality_problems

# ---- 1 and 2: dedupe_duplicate (0.80) and dedupe_related (0.45) ----

_BASE = make_draft("b2:known")
KNOWN = [Known(id="EXP-20260101-0001", title=_BASE.title, description=_BASE.description,
               trap=_BASE.trap, insight=_BASE.insight)]
"""The playbook in the store: the default draft of ``_mine_helpers`` (missing test dependency)."""

_PINS = ("Look in requirements.txt or pyproject.toml for the package, add it there if the project "
         "pins its test dependencies")


def _same_lesson(tail: str) -> Draft:
    """The stored lesson retold: another title, one more sentence in the insight."""
    return make_draft("b2:retold", title="Install the missing test dependencies, then rerun pytest",
                      insight=f"{_BASE.insight} {_PINS}{tail}")


# The same lesson with one sentence more: scores a hair above / below 0.80.
JUST_DUPLICATE = _same_lesson(", and use the virtualenv.")
JUST_NOT_DUPLICATE = _same_lesson(", and keep it.")

_VENV = dict(
    title="Create the virtualenv before installing packages into it",
    description="Use when pip install fails because no virtualenv is active and the system "
                "Python is externally managed.",
)
_VENV_INSIGHT = ("An externally managed interpreter refuses installs; create a venv, activate "
                 "it, then install.")


def _other_lesson(tail: str) -> Draft:
    """Another lesson with the stored trap: related or new depending on one sentence."""
    return make_draft("b2:venv", insight=f"{_VENV_INSIGHT} {tail}", **_VENV)


# Another lesson sharing the stored trap: scores a hair above / below 0.45.
JUST_RELATED = _other_lesson("It looks like an import error at collection of tests.")
JUST_NOT_RELATED = _other_lesson("It looks much like an import error at collection.")


def _decide(draft: Draft, **thresholds: float) -> Decision:
    return dedupe([draft], KNOWN, **thresholds)[0]  # type: ignore[arg-type]


def _as_configured(draft: Draft) -> Decision:
    """What ``orf mine`` decides with the default settings (``stages/publish.py``)."""
    settings = Settings()
    return _decide(draft, duplicate=settings.dedupe_duplicate, related=settings.dedupe_related)


def test_pair_scores_sit_a_hair_either_side_of_the_thresholds() -> None:
    """The four drafts are boundary pins only while their scores sit where they were built."""
    assert 0.80 <= _decide(JUST_DUPLICATE).score < 0.81
    assert 0.79 <= _decide(JUST_NOT_DUPLICATE).score < 0.80
    assert 0.45 <= _decide(JUST_RELATED).score < 0.46
    assert 0.44 <= _decide(JUST_NOT_RELATED).score < 0.45


def test_dedupe_duplicate_default_boundary() -> None:
    """``dedupe_duplicate`` = 0.80: a retold lesson at 0.80x is a duplicate, at 0.79x it is not
    (it is written, linked as related)."""
    above, below = _as_configured(JUST_DUPLICATE), _as_configured(JUST_NOT_DUPLICATE)
    assert (above.outcome, above.target) == ("duplicate", "EXP-20260101-0001")
    assert (below.outcome, below.target) == ("related", "EXP-20260101-0001")


def test_dedupe_related_default_boundary() -> None:
    """``dedupe_related`` = 0.45: another lesson on the same trap at 0.45x is related, at 0.44x
    it is new (no link)."""
    above, below = _as_configured(JUST_RELATED), _as_configured(JUST_NOT_RELATED)
    assert (above.outcome, above.target) == ("related", "EXP-20260101-0001")
    assert (below.outcome, below.target) == ("new", None)


def test_dedupe_function_defaults_match_the_settings() -> None:
    """``dedupe()`` called without thresholds decides like the configured run."""
    assert [_decide(d).outcome for d in (JUST_DUPLICATE, JUST_NOT_DUPLICATE, JUST_RELATED,
                                         JUST_NOT_RELATED)] == [
        "duplicate", "related", "related", "new"]


def test_a_score_exactly_at_a_threshold_counts_as_reaching_it() -> None:
    """Both thresholds are "at or above": a score equal to the threshold is on the upper side,
    the next float above the score is not reached."""
    dup = _decide(JUST_DUPLICATE).score
    assert _decide(JUST_DUPLICATE, duplicate=dup, related=0.45).outcome == "duplicate"
    assert _decide(JUST_DUPLICATE, duplicate=dup + 1e-9, related=0.45).outcome == "related"
    rel = _decide(JUST_RELATED).score
    assert _decide(JUST_RELATED, duplicate=0.80, related=rel).outcome == "related"
    assert _decide(JUST_RELATED, duplicate=0.80, related=rel + 1e-9).outcome == "new"


# ---- 3: the proof rule's "fails again" window (3 tool steps) ----

FAIL = bash("pytest -x tests/", "E   ModuleNotFoundError: No module named 'requests'", True)
INSTALL = bash("pip install requests", "Successfully installed requests-2.32.3")
PASS = bash("pytest -x tests/", "3 passed in 0.41s")
LOOK = [bash("git status --short", " M app/cart.py"),
        bash("ls tests", "test_cart.py\ntest_fetch.py"),
        bash("cat setup.cfg", "[tool:pytest]\ntestpaths = tests"),
        bash("python --version", "Python 3.12.3")]


def _install_proven(tmp_path: Path, after_install: list[Call]) -> bool:
    """Whether the proof rule takes ``pip install`` (after two failed pytest runs) as shown
    working, with ``after_install`` logged after it and then a pass."""
    log = claude_log(tmp_path / "s.jsonl", "d00dfeed-0000-4000-8000-0000000000a1",
                     [FAIL, FAIL, INSTALL, *after_install, INSTALL, PASS])
    [sess] = scan_log(log).sessions
    assert sess.trajectory is not None
    steps = sess.trajectory.steps
    infos = analyze(sess.trajectory)
    tools = [i for i, s in enumerate(steps) if s.kind == "tool"]
    first, last, candidate = tools[0], tools[1], tools[2]
    assert "pip install" in (steps[candidate].args or {}).get("command", "")
    return make_proven(steps, infos, first)(candidate, last)


@pytest.mark.parametrize(("tool_steps_later", "proven"), [(1, False), (3, False), (4, True)])
def test_same_failure_back_within_three_tool_steps_rejects_the_fix(
        tmp_path: Path, tool_steps_later: int, proven: bool) -> None:
    """The loop's failure on the 3rd tool step after a candidate fix means it did not work; on
    the 4th, the candidate stands (something else broke it again)."""
    assert _install_proven(tmp_path, [*LOOK[:tool_steps_later - 1], FAIL]) is proven


def test_the_fails_again_window_counts_tool_steps_only(tmp_path: Path) -> None:
    """Messages between do not widen the window: two looks and two messages, then the failure
    on the 3rd tool step, still reject the fix."""
    after = [LOOK[0], say("Checking the tree."), LOOK[1], say("Running the tests again."), FAIL]
    assert _install_proven(tmp_path, after) is False


# ---- 4: fail_on_error (0.5): failed / attempted above it exits 1, else 3 ----

FIX_LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "mine"


def _summary(new: int, failed: int) -> MineSummary:
    return MineSummary(store="s", backend="heuristic", model=None, dry_run=False, batch=False,
                       sessions_seen=new + failed, sessions_new=new, sessions_failed=failed)


def test_fail_on_error_default_boundary_on_the_summary() -> None:
    """Half the sessions failed is not above 0.5: partial (3); 2 of 3 is above: error (1), and
    so is a hair above half (51 of 101)."""
    ratio = Settings().fail_on_error
    assert exit_code(_summary(new=1, failed=1), ratio) == EXIT_PARTIAL
    assert exit_code(_summary(new=50, failed=50), ratio) == EXIT_PARTIAL
    assert exit_code(_summary(new=1, failed=2), ratio) == EXIT_ERROR
    assert exit_code(_summary(new=50, failed=51), ratio) == EXIT_ERROR
    assert exit_code(_summary(new=2, failed=1), ratio) == EXIT_PARTIAL
    assert exit_code(_summary(new=2, failed=0), ratio) == EXIT_OK


def _logs_with_broken(tmp_path: Path, broken: int) -> Path:
    """One good Claude Code session and ``broken`` cut-off Gemini CLI logs (each a failure)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(FIX_LOGS / "alpha-session.jsonl", logs)
    for n in range(broken):
        (logs / f"broken{n}.json").write_text(
            f'{{"sessionId": "s{n}", "projectHash": "p", "messages": [')
    return logs


@pytest.mark.parametrize(("broken", "code"), [(1, EXIT_PARTIAL), (2, EXIT_ERROR)])
def test_fail_on_error_default_boundary_through_mine(tmp_path: Path, broken: int,
                                                     code: int) -> None:
    logs = _logs_with_broken(tmp_path, broken)
    out = mine([logs], Settings(store=tmp_path / "experiences", ledger=tmp_path / "ledger.db",
                                jobs=1, backend="heuristic"))
    assert (out.sessions_new, out.sessions_failed) == (1, broken)
    assert out.drafts["new"] == 1  # the good session was still mined
    assert out.exit_code == code


@pytest.mark.parametrize(("broken", "code"), [(1, EXIT_PARTIAL), (2, EXIT_ERROR)])
def test_fail_on_error_boundary_is_the_orf_mine_exit_status(tmp_path: Path, broken: int,
                                                           code: int) -> None:
    logs = _logs_with_broken(tmp_path, broken)
    Store(tmp_path / "experiences").init()
    result = CliRunner().invoke(main, ["mine", str(logs), "--store", str(tmp_path / "experiences"),
                                       "--ledger", str(tmp_path / "ledger.db"),
                                       "--backend", "heuristic", "--jobs", "1", "--quiet"])
    assert result.exit_code == code, result.output


# ---- 5: the quality gate rejects a trap quoting only harness boilerplate ----


def _boilerplate_problems(trap: str) -> list[str]:
    return [p for p in quality_problems(make_draft(trap=trap))
            if p.startswith("boilerplate as the error")]


@pytest.mark.parametrize("trap", [
    # An inline quote of a bare label.
    "The build failed 3 times with `error:` and the agent kept retrying.",
    # Codex's exit line as the only quote.
    "The build failed 3 times with `Exit code: 1`.",
    # A fence holding nothing but the harness's exit line.
    "The command failed with:\n\n```\nExit code: 1\n```",
])
def test_a_trap_quoting_only_boilerplate_is_rejected(trap: str) -> None:
    assert _boilerplate_problems(trap) == ["boilerplate as the error: trap"]


@pytest.mark.parametrize("trap", [
    "`pytest -x` failed with:\n\n```text\nE   ModuleNotFoundError: No module named "
    "'requests'\n```",
    # Boilerplate around a real error: the real line makes the quote trustworthy.
    "The command failed with:\n\n```\nExit code: 1\nE   ModuleNotFoundError: No module "
    "named 'requests'\n```",
    "The build failed with `error:`, then with `cc: fatal error: no input files`.",
    # Nothing quoted at all: nothing to judge as boilerplate.
    "The build failed three times with the same missing header.",
])
def test_a_trap_quoting_a_real_error_is_accepted(trap: str) -> None:
    assert quality_problems(make_draft(trap=trap)) == []


@pytest.mark.parametrize("trap", [
    "`pytest -x` failed with:\n\n```text\nExit code: 1\n```",
    "The command failed with:\n\n```text\nExit code: 1\n```",
    "The command failed with:\n\n```\nExit code: 1\nWall time: 0.4 seconds\nOutput:\n```",
])
def test_a_real_shaped_trap_quoting_only_boilerplate_is_rejected(trap: str) -> None:
    """As drafts write a trap: the command named in backticks, the error in a (tagged) fence;
    the named command, the fence's tag or a multi-line fence do not hide a boilerplate error."""
    assert _boilerplate_problems(trap) == ["boilerplate as the error: trap"]


def test_boilerplate_in_a_prose_field_other_than_title_and_trap_is_not_a_quote() -> None:
    """Only the title and the trap quote the error: a bare ``Output:`` span elsewhere is fine."""
    assert quality_problems(make_draft(insight="Read the lines after `Output:` before "
                                               "retrying.")) == []


# ---- further defaults: the judge's confidence and the wasted-step floor ----


def _judge(confidence: float) -> str:
    reply = LLMReply(text=f'{{"outcome": "success", "confidence": {confidence}, '
                          f'"reason": "tests pass at the end"}}')
    verdict, error = parse_judge_reply(reply, "gemini",
                                       threshold=Settings().judge_min_confidence)
    assert error is None and verdict is not None
    return verdict.outcome


def test_judge_min_confidence_default_boundary() -> None:
    """``judge_min_confidence`` = 0.7: a verdict at exactly 0.7 stands, at 0.69 it is unknown."""
    assert [_judge(c) for c in (0.69, 0.7, 0.71)] == ["unknown", "success", "success"]


@pytest.mark.parametrize(("failed_runs", "wasted", "selected"), [(1, 0, 0), (2, 1, 1)])
def test_min_wasted_steps_default_boundary(tmp_path: Path, failed_runs: int, wasted: int,
                                           selected: int) -> None:
    """``min_wasted_steps`` = 1: a session whose only waste is one rerun of a failed command
    is judged and drafted (one playbook); one that wasted nothing is not."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "s.jsonl").write_text(
        claude_session("c0ffee00-0000-4000-8000-000000000001", failed_runs))
    out = mine([logs], Settings(store=tmp_path / "experiences", ledger=tmp_path / "ledger.db",
                                jobs=1, backend="heuristic"))
    assert (out.wasted_steps, out.sessions_selected, out.drafts["new"]) == (
        wasted, selected, selected)


# ---- detector defaults (DetectSettings): each cut-off at its boundary ----

_IMPORT_FAIL = "Traceback (most recent call last):\nImportError: cannot import name 'x'"


@pytest.mark.parametrize(("runs", "severity"), [(2, "info"), (3, "warn"), (4, "warn"),
                                                (5, "high")])
def test_loop_severity_default_boundaries(runs: int, severity: str) -> None:
    """``warn_repeats`` = 3 and ``high_repeats`` = 5, the first run included."""
    found = detect_all(traj(*[sh("make docs", _IMPORT_FAIL, error=True) for _ in range(runs)]))
    assert [(f.wasted_steps, f.severity) for f in found] == [(runs - 1, severity)]


_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
          "rho sigma").split()


def _widened_search(shared: int) -> list[tuple[int, int | None, str]]:
    """A grep for ``shared`` alternatives, then the same grep with 3 more.

    The compared tokens are ``grep``, the folder and each alternative: ``shared + 2`` of
    ``shared + 5`` in common (Jaccard 17/20 = 0.85 exactly for 15, 16/19 = 0.842 for 14).
    """
    first, second = "|".join(_GREEK[:shared]), "|".join(_GREEK[:shared + 3])
    t = traj(sh(f"grep -rn '{first}' django/utils", "django/utils/x.py:1: alpha"),
             sh(f"grep -rn '{second}' django/utils", "django/utils/x.py:1: alpha"))
    return [(r.step, r.repeat_of_step, r.kind) for r in annotate_repeats(t)]


def test_near_repeat_similarity_default_boundary() -> None:
    """``near_repeat_similarity`` = 0.85, at or above: 0.85 is a near-repeat, 0.842 is not."""
    assert _widened_search(15) == [(1, 0, "similar")]
    assert _widened_search(14) == []


@pytest.mark.parametrize(("lo", "hi", "reread"), [(51, 150, True), (51, 151, False)])
def test_reread_overlap_default_boundary(lo: int, hi: int, reread: bool) -> None:
    """``reread_overlap`` = 0.5, at or above: lines 51-150 after 1-100 show half again (a
    re-read, wasted); 51-151 show 50 of 101 again (paging on)."""
    t = traj(read("src/app.py", lines(1, 100), view_range=[1, 100]),
             read("src/app.py", lines(lo, hi), view_range=[lo, hi]))
    assert [(f.kind, f.wasted_steps) for f in detect_all(t)] == ([("reread", 1)] if reread
                                                                 else [])
    assert [(r.step, r.kind, r.wasted) for r in annotate_repeats(t)] == (
        [(1, "reread", True)] if reread else [])


_NO_FOO = "ModuleNotFoundError: No module named 'foo'"
_VARIANTS = ["python run.py", "python -W ignore run.py", "python -X dev ./run.py"]


@pytest.mark.parametrize(("tries", "wasted"), [(2, None), (3, [1, 2])])
def test_retry_variation_min_default_boundary(tries: int, wasted: list[int] | None) -> None:
    """``retry_variation_min`` = 3: three variants of one command hitting one error are a loop;
    two are not (yet)."""
    found = detect_all(traj(*[sh(c, _NO_FOO, error=True) for c in _VARIANTS[:tries]]))
    if wasted is None:
        assert found == []
    else:
        assert [(f.kind, f.wasted_source_ids) for f in found] == [
            ("retry_variation", [f"s{i}" for i in wasted])]


@pytest.mark.parametrize(("times", "chanting"), [(9, False), (10, True)])
def test_chant_repeats_default_boundary(times: int, chanting: bool) -> None:
    """``chant_repeats`` = 10 (``chant_chunk`` = 50): a 54-character sentence said 10 times in
    one message is chanting, 9 times is not."""
    chant = "Let me check the configuration file again to be sure. " * times
    found = detect_all(traj(msg(chant), msg("A normal reply that explains the fix. " * 2)))
    assert [(f.kind, f.wasted_steps) for f in found] == ([("chanting", 1)] if chanting else [])


def _compactions(apart: int) -> list[str]:
    """Wasted step ids of three compactions ``apart`` steps from each other (commands between)."""
    steps = [compaction()]
    for k in (1, 2):
        steps += [sh(f"echo part{k}-{i}", f"{k}-{i}") for i in range(apart - 1)]
        steps.append(compaction())
    return [s for f in detect_all(traj(*steps)) if f.kind == "context_thrash"
            for s in f.wasted_source_ids]


def test_thrash_window_default_boundary() -> None:
    """``thrash_window`` = 20, at most: three compactions 20 steps apart are context thrash,
    21 apart are not."""
    assert _compactions(20) == ["s20", "s40"]
    assert _compactions(21) == []


def test_monologue_repeats_default_boundary() -> None:
    """``monologue_repeats`` = 3: the same message twice is a monologue at confidence 0.7, three
    times at 0.9."""
    def said(times: int) -> list[tuple[str, float]]:
        found = detect_all(traj(*[msg("I will now fix the bug.") for _ in range(times)]))
        return [(f.kind, f.confidence) for f in found]

    assert said(2) == [("monologue", 0.7)]
    assert said(3) == [("monologue", 0.9)]


@pytest.mark.parametrize(("sessions", "deferred"), [(50, 0), (51, 1)])
def test_max_sessions_per_run_default_boundary(tmp_path: Path, sessions: int,
                                               deferred: int) -> None:
    """``max_sessions_per_run`` = 50: 50 sessions worth drafting all go; the 51st waits."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(sessions):
        (logs / f"s{n:02d}.jsonl").write_text(
            claude_session(f"{n:08x}-0000-4000-8000-000000000001", 2))
    out = mine([logs], Settings(store=tmp_path / "experiences", ledger=tmp_path / "ledger.db",
                                jobs=1, backend="heuristic"), dry_run=True)
    assert (out.sessions_selected, out.sessions_deferred) == (sessions - deferred, deferred)
