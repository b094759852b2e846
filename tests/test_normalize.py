"""Invariants of the canonical forms every detector compares."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pipeline.normalize import action_key, error_line, error_signature, truncate

keys = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8)
values = st.one_of(st.integers(), st.text(max_size=20), st.booleans(), st.none())


@given(st.dictionaries(keys, values, max_size=6), st.randoms())
def test_action_key_ignores_key_order(args: dict, rnd) -> None:
    items = list(args.items())
    rnd.shuffle(items)
    assert action_key("bash", dict(items)) == action_key("bash", args)


@given(st.dictionaries(keys, values, max_size=6), st.text(max_size=30), st.text(max_size=30))
def test_action_key_ignores_volatile_fields(args: dict, call_id: str, ts: str) -> None:
    noisy = {**args, "call_id": call_id, "timestamp": ts}
    clean = {k: v for k, v in args.items() if k not in ("call_id", "timestamp")}
    assert action_key("bash", noisy) == action_key("bash", clean)


def test_action_key_folds_whitespace_but_keeps_arguments() -> None:
    folded = action_key("bash", {"command": "ls  -la\n/x"})
    assert folded == action_key("bash", {"command": "ls -la /x"})
    assert action_key("bash", {"command": "ls /x"}) != action_key("bash", {"command": "ls /y"})


@given(st.text(max_size=3000), st.integers(min_value=60, max_value=1000))
def test_truncate_bounds_and_keeps_both_ends(text: str, limit: int) -> None:
    out = truncate(text, limit)
    if len(text) <= limit:
        assert out == text
    else:
        assert len(out) <= limit + 40
        head, _, _ = out.partition("\n...[")
        assert text.startswith(head)
        assert text.endswith(out.rsplit("]...\n", 1)[1])


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_error_signature_ignores_numbers_and_temp_paths(a: int, b: int) -> None:
    one = f"FileNotFoundError: [Errno 2] No such file: '/tmp/run{a}/x.txt' at line {a}"
    two = f"FileNotFoundError: [Errno 2] No such file: '/tmp/run{b}/x.txt' at line {b}"
    assert error_signature(one) == error_signature(two) is not None


def test_error_line_prefers_the_error_over_the_summary() -> None:
    out = "collected 3 items\nE   KeyError: 'user'\n=== short test summary ===\n1 failed in 0.2s"
    assert error_line(out) == "E   KeyError: 'user'"
    assert error_signature("all good") is None


def test_brief_command_keeps_the_first_line_and_hides_home_folders() -> None:
    from pipeline.normalize import brief_command

    assert brief_command("cat <<'EOF' > /home/relu/app/plan.md\n# Plan\nbody\n") == (
        "cat <<'EOF' > ~/app/plan.md")
    assert brief_command("cd /Users/ann/proj && pytest -q") == "cd ~/proj && pytest -q"
    assert brief_command("ls /root/x /homework ~/home/y") == "ls ~/x /homework ~/home/y"
    assert brief_command("  \n") == ""
    assert len(brief_command("x" * 500)) == 160
