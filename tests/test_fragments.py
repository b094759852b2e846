"""Known secrets and their fragments: one hyperscan pass finds what block-by-block search does."""

from __future__ import annotations

import random
import string

import pytest

from pipeline.privacy import fragments
from pipeline.privacy.fragments import FRAGMENT, FragmentSearch, _find
from pipeline.privacy.memory import SessionSecrets

HAS_FAST = fragments.hyperscan is not None
_NOISE = [" ", "\n", "\x00", "x", "=", "\u2192", "\u00e9", "\U0001f511", "token: ", "ab12", "-",
          "."]


def _values(rng: random.Random) -> list[str]:
    def token(n: int) -> str:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))
    out = [f"ghp_{token(36)}" for _ in range(30)]
    out += [token(rng.randint(8, 11)) for _ in range(10)]  # short: found whole only
    out += [f"p\u00e4ss-{token(10)}-\u03a9\u2192{token(8)}" for _ in range(5)]  # not ASCII
    out += [f"{token(14)}\U0001f511{token(14)}" for _ in range(5)]  # astral
    out += [f"\x00{token(13)}\x00", f"ab\x00{token(9)}"]  # a NUL (hyperscan's C strings)
    return out


def _text(rng: random.Random, values: list[str]) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 12)):
        if rng.random() < 0.4:
            v = rng.choice(values)
            a = rng.randint(0, len(v) - 1)
            parts.append(v[a:rng.randint(a + 1, len(v))])  # a cut: whole, long or too short
        else:
            parts.append(rng.choice(_NOISE))
    return "".join(parts)


def _covered(spans: list[tuple[str, int, int]]) -> set[int]:
    return {i for _, a, b in spans for i in range(a, b)}


@pytest.mark.parametrize("seed", range(3))
def test_compiled_search_covers_what_the_block_by_block_search_does(seed: int) -> None:
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    rng = random.Random(seed)
    values = _values(rng)
    search = FragmentSearch()
    for v in values:
        search.add(v, "k")
    search._compile()  # every value in the database, none looked for one by one
    assert search._db is not None and not search._pending
    found = 0
    for _ in range(1500):
        text = _text(rng, values)
        slow: list[tuple[str, int, int]] = []
        for v in values:
            _find(text, v, "k", slow)
        fast = search.spans(text)
        assert _covered(fast) == _covered(slow), text
        for _, a, b in fast:  # each a real piece of a value, long enough or whole
            assert any(text[a:b] in v for v in values)
            assert b - a >= FRAGMENT or text[a:b] in values
        found += bool(fast)
    assert found > 500


def test_values_learned_after_a_compile_are_found_too() -> None:
    """Between compiles the newest values are looked for one by one: nothing is missed."""
    secrets = SessionSecrets()
    rng = random.Random(4)
    values = [f"sk_live_{''.join(rng.choice(string.ascii_letters) for _ in range(24))}"
              for _ in range(60)]
    for i, v in enumerate(values):
        secrets.learn(v, "stripe-secret-key")
        # Every value so far, cut to 14 characters, inside a long text: each one replaced.
        text = "log " * 2000 + " ".join(w[5:19] for w in values[:i + 1])
        out = secrets.apply(text)
        assert not any(w[5:19] in out for w in values[:i + 1]), i
    if HAS_FAST:
        assert secrets._fragments._db is not None  # the long texts paid for a compile


@pytest.mark.parametrize("compiled", [False, True])
def test_a_fragment_is_replaced_to_its_ends(compiled: bool) -> None:
    """At the very start and end of a text, beside other characters, next to a second piece."""
    if compiled and not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    value = "ghp_Zq8vL2mWx4pR7tYu9aB3cD5eF6gH7iJ8kL9m"
    search = FragmentSearch()
    search.add(value, "github-token")
    search.add("Xy7wQ2vR9t", "password")  # short: whole, between token boundaries
    if compiled:
        search._compile()
    cases = {
        value[3:20]: [(0, 17)],
        f"see {value[7:]}": [(4, 4 + len(value) - 7)],
        f"\u2192{value[:13]}\u2192{value[-12:]}": [(1, 14), (15, 27)],
        "Xy7wQ2vR9t, not Xy7wQ2vR9tt nor Xy7wQ2vR9": [(0, 10)],
        value[:11]: [],  # too short to say
    }
    for text, want in cases.items():
        assert sorted({(a, b) for _, a, b in search.spans(text)}) == want, text
