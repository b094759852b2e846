"""Hypothesis invariants of loop detection."""

from __future__ import annotations

import copy

from _detect_helpers import compaction, edit, msg, read, sh, traj
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.detect import detect_all
from pipeline.model import Step

ERR = "ImportError: cannot import name 'x'"

_ATOMS = [
    lambda: sh("pytest tests", ERR, error=True),
    lambda: sh("python repro.py", "ok"),
    lambda: sh("grep -rn foo .", "a.py:1"),
    lambda: sh("ls -la /testbed", "a.py"),
    lambda: read("a.py", "1 x"),
    lambda: read("a.py", "1 x", view_range=[10, 40]),
    lambda: edit("a.py", "x", "y"),
    lambda: edit("a.py", "y", "x"),
    lambda: sh("sleep 5", ""),
    lambda: msg("Let me try again."),
    compaction,
]

steps_st = st.lists(st.integers(0, len(_ATOMS) - 1), min_size=0, max_size=25)


def _build(codes: list[int]) -> list[Step]:
    return [_ATOMS[c]() for c in codes]


def _shape(findings: list) -> list[tuple[str, list[int], int]]:
    return [(f.kind, f.steps, f.wasted_steps) for f in findings]


@settings(max_examples=80, deadline=None)
@given(steps_st)
def test_findings_stay_inside_and_counts_agree(codes: list[int]) -> None:
    t = traj(*_build(codes))
    ids = {s.source_id for s in t.steps}
    total = 0
    seen: set[str] = set()
    for f in detect_all(t):
        assert all(0 <= i < len(t.steps) for i in f.steps)
        assert set(f.source_ids) <= ids and set(f.wasted_source_ids) <= set(f.source_ids)
        assert f.wasted_steps == len(f.wasted_source_ids) <= len(f.steps)
        assert not seen & set(f.wasted_source_ids)  # one wasted step, one finding
        seen |= set(f.wasted_source_ids)
        total += f.wasted_steps
    assert total <= len(t.steps)


@settings(max_examples=60, deadline=None)
@given(steps_st, st.integers(1, 10_000))
def test_renumbering_ids_and_timestamps_changes_nothing(codes: list[int], shift: int) -> None:
    a = traj(*_build(codes))
    b = traj(*_build(codes), prefix=f"x{shift}-")
    for i, s in enumerate(b.steps):
        s.timestamp = f"2030-01-01T00:00:{(i + shift) % 60:02d}Z"
    assert _shape(detect_all(a)) == _shape(detect_all(b))
    assert [f.signature for f in detect_all(a)] == [f.signature for f in detect_all(b)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6))
def test_unrelated_steps_around_a_loop_keep_it(before: int, after: int) -> None:
    loop = [sh("make docs", ERR, error=True) for _ in range(3)]
    pre = [sh(f"echo pre{i} > notes{i}.txt", "") for i in range(before)]
    post = [read(f"other{i}.md", f"text {i}") for i in range(after)]
    t = traj(*pre, *copy.deepcopy(loop), *post)
    found = [f for f in detect_all(t) if f.wasted_steps]
    assert len(found) == 1
    f = found[0]
    assert f.kind == "rerun_unchanged" and f.wasted_steps == 2
    assert [t.steps[i].args["command"] for i in f.steps] == ["make docs"] * 3
