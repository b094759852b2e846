"""The quality gate: each problem a reader would not trust is named; a clean draft passes."""

from __future__ import annotations

import pytest
from _mine_helpers import make_draft

from pipeline.stages.quality import PROBLEMS, quality_problems

CLEAN = make_draft(title="`ModuleNotFoundError: No module named 'requests'`: install it first",
                   trap="`pytest -x` failed with:\n\n```text\nE   ModuleNotFoundError: No module "
                        "named 'requests'\n```",
                   validated_path="1. `pip install requests`\n2. `pytest -x` succeeds.")


def test_a_clean_draft_passes() -> None:
    assert quality_problems(CLEAN) == []


@pytest.mark.parametrize(("field", "text", "problem"), [
    ("trap", "The edit `toolu_01W1hgA2duBWyaDLwZAq498Z` failed.", "raw tool-call id"),
    ("title", "Do not repeat `other` unchanged", "placeholder tool name"),
    ("validated_path", "1. `edit /Users/soph/Work/cli/cmd/a.go`", "absolute home path"),
    ("trap", "`edit a.go` failed with `/home/relu/misc/x`.", "absolute home path"),
    ("title", "`}</tool_use_error>`: change the command", "boilerplate as the error"),
    ("trap", "failed with:\n```text\nDO NOT re-run the same failed edit command. Running it "
             "again will lead to the same error.\n```", "boilerplate as the error"),
    ("title", "`ERROR:`: read the error", "boilerplate as the error"),
    ("description", "Trigger when The user doesn't want to proceed with this tool use.",
     "boilerplate as the error"),
    ("trap", "command changed: `edit /workspace/src/main/java/org/x/detect/LoadOf",
     "text cut mid-token"),
    ("validated_path", '1. `grep -n "def load` then fix it', "text cut mid-token"),
    ("insight", "An exact_repeat means the loop never changed.", "detector jargon"),
    ("checklist", "No rerun_unchanged left", "detector jargon"),
    # families added later are jargon too: the gate reads the detector's registry
    ("trap", "The refused_resubmit loop cost 2 steps.", "detector jargon"),
])
def test_each_problem_is_named(field: str, text: str, problem: str) -> None:
    changes = {field: [text] if field == "checklist" else text}
    found = quality_problems(make_draft(**changes))
    assert problem in PROBLEMS
    assert [p.split(":")[0] for p in found] == [problem]


def test_a_quote_shortened_with_an_ellipsis_is_not_cut() -> None:
    draft = make_draft(validated_path='1. `grep -n "def load …` finds it')
    assert quality_problems(draft) == []


def test_plain_words_that_name_a_family_are_not_jargon() -> None:
    draft = make_draft(insight="> **Core Principle:** Reread the file; an edit and revert cycle "
                               "means the old text was wrong.")
    assert [p for p in quality_problems(draft) if p.startswith("detector jargon")] == []


@pytest.mark.parametrize(("field", "text", "problem"), [
    ("title", "Rerun calls cancelled as 'Sibling tool call errored'", "boilerplate as the error"),
    ("title", "Do not repeat `other` unchanged", "placeholder tool name"),
    ("validated_path", '1. `grep -n "def load` then fix it', "text cut mid-token"),
    ("trap", "The edit `toolu_01W1hgA2duBWyaDLwZAq498Z` failed.", "raw tool-call id"),
    ("insight", "An exact_repeat means the loop never changed.", "detector jargon"),
])
def test_a_model_draft_is_not_screened_for_rule_text(field: str, text: str,
                                                      problem: str) -> None:
    """The mechanical problems of rule-assembled text are the heuristic's; a verified model
    draft about a harness message keeps it. Ids, home paths and jargon are screened for all."""
    from pipeline.stages.quality import MECHANICAL

    changes = {field: [text] if field == "checklist" else text}
    heuristic = make_draft(**changes)
    model = make_draft(**changes)
    model.provenance = model.provenance.model_copy(update={"drafted_by": "model"})
    assert [p.split(":")[0] for p in quality_problems(heuristic)] == [problem]
    assert [p.split(":")[0] for p in quality_problems(model)] == (
        [] if problem in MECHANICAL else [problem])
