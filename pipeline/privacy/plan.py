"""Which detectors a text's hints call for: the plan ``redact._scan`` runs, cached by hint set."""

from __future__ import annotations

from dataclasses import dataclass

from .assignments import _ASSIGN, _WORDS
from .contexts import CONTEXTS, NEAR_HINTS, Context
from .headers import _HEADER_RULES
from .rules import PEM, PREFIXED, Rule


@dataclass(frozen=True, slots=True)
class _Plan:
    """The rules one set of hints calls for, in the order ``_scan`` runs them."""

    pem: tuple[Rule, ...]
    prefixed: tuple[Rule, ...]
    headers: tuple[Rule, ...]
    url: bool
    contexts: tuple[Context, ...]
    assign: bool
    near: bool
    words: tuple[str, ...]
    """The ``_WORDS`` present: the keyword rules are tried at their occurrences."""
    low: bool
    """Some rule reads the lowered text."""
    idle: bool
    """No rule runs: the hints found call for none (a ``key`` with no separator after it)."""


def _users(hints: list[tuple[str, ...]]) -> dict[str, list[int]]:
    """Hint -> indexes of the rules (whose ``hints`` are given in order) it calls for."""
    out: dict[str, list[int]] = {}
    for i, own in enumerate(hints):
        for h in own:
            out.setdefault(h, []).append(i)
    return out


_PEM_USERS, _PREFIXED_USERS = _users([r.hints for r in PEM]), _users([r.hints for r in PREFIXED])
_HEADER_USERS = _users([r.hints for r in _HEADER_RULES])
_CONTEXT_USERS = _users([c.hints for c in CONTEXTS])


def _chosen(present: frozenset[str], users: dict[str, list[int]]) -> list[int]:
    """Indexes, in table order, of the rules some hint in ``present`` calls for."""
    return sorted({i for h in present for i in users.get(h, ())})


def _make_plan(present: frozenset[str]) -> _Plan:
    prefixed = tuple(PREFIXED[i] for i in _chosen(present, _PREFIXED_USERS))
    headers = tuple(_HEADER_RULES[i] for i in _chosen(present, _HEADER_USERS))
    contexts = tuple(CONTEXTS[i] for i in _chosen(present, _CONTEXT_USERS))
    assign = "~assign" in present and not present.isdisjoint(_ASSIGN.hints)
    near = "~near" in present and not present.isdisjoint(NEAR_HINTS)
    # The assignment rule reads the text with its case-blind twin when no other rule needs
    # the lowered text: trying it at a few starts costs less than lowering a file view.
    low = (near or bool(headers) or any(c.fold for c in contexts)
           or any(r.folded is not None for r in prefixed))
    words = tuple(w for w in _WORDS if w in present) if assign or near else ()
    pem = tuple(PEM[i] for i in _chosen(present, _PEM_USERS))
    url = "://" in present and "@" in present
    idle = not (pem or prefixed or headers or url or contexts or assign or near)
    return _Plan(pem, prefixed, headers, url, contexts, assign, near, words, low, idle)


_PLANS: dict[frozenset[str], _Plan] = {}
"""Plans by hint set: few distinct sets recur across every text of a run."""


def _plan(present: frozenset[str]) -> _Plan:
    plan = _PLANS.get(present)
    if plan is None:
        plan = _PLANS[present] = _make_plan(present)
    return plan
