"""The one gate every byte leaving the machine (or written to disk) goes through.

Secrets become typed placeholders such as ``[REDACTED:github-token]``; the text around them is
kept so a redacted log still reads well. Three families of detectors:

- shapes (``rules.py``): tokens with a distinctive prefix and private key blocks;
- credentials in URLs and headers (``headers.py``): only the secret part is replaced;
- contexts (``contexts.py``, ``assignments.py``): a value in a credential position, which
  must also look like a secret (``values.py``), so code and test fixtures stay readable.

This module is the walk: a hint search says which rules can match (``plan.py``), those run,
and overlapping hits are resolved (``hits.py``).

No third-party detector is used: detect-secrets scans line by line through ~25 plugin objects,
reports values rather than spans and misses several modern token shapes, while this gate runs
on every step of every session and must be fast.

Callers:
- ``redact(text)`` for any outgoing or written text;
- ``redact_value(obj)`` for JSON-like structures (keys stay, string values are redacted, values
  under secret-like keys are checked as assignments);
- ``scan(text)`` for the hits themselves (the final checks, the CLI summary, the session memory).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from .anchors import occurrences
from .assignments import (
    _ASSIGN,
    _ASSIGN_STARTS_AT,
    _NAME_WORDS,
    _NOT_SECRET_WORDS,
    _secret_name,
    assignment_hits,
    assignment_kind,
)
from .contexts import (
    CONTEXTS,
    NEAR_HINTS,
    NEAR_STARTS_AT,
    context_hits,
    near_starts,
    near_word_hits,
)
from .headers import _HEADER_RULES, _SCHEME_KIND, header_hits, url_hits
from .hints import RUN_CHARS, HintSearch, lowered
from .hits import SecretHit, _resolve, placeholder, replace_hits
from .plan import _make_plan, _plan
from .rules import PEM, PREFIXED, matches

_TOKEN_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)
# A token shape's own prefix (``ghp_``) counts only inside a long token run; names, flags and
# headers anywhere (``hints.py``).
_RUN_HINTS = frozenset(h for r in PREFIXED if r.group == 0 for h in r.hints if set(h) <= RUN_CHARS)
_HINTS = HintSearch(
    {h for r in (*PEM, *PREFIXED, *_HEADER_RULES, _ASSIGN) for h in r.hints}
    | {h for c in CONTEXTS for h in c.hints} | set(NEAR_HINTS) | {"://", "@"},
    _RUN_HINTS,
    tuple((0, p, n) for p, n in _ASSIGN_STARTS_AT) + tuple((1, p, n) for p, n in NEAR_STARTS_AT),
    with_gates=set(_ASSIGN.hints) | set(NEAR_HINTS),  # only the keyword rules use them
    names=_NAME_WORDS,
)
_MIN_TEXT = 6
"""Shorter texts cannot hold a secret any rule recognises."""
_FULL = False
"""Tests set this to run every rule everywhere: the hints and anchors must change nothing."""


def scan(text: str) -> list[SecretHit]:
    """Find secrets in ``text``: non-overlapping hits sorted by start offset.

    Args:
        text: Any text (a prompt, a command, a log line, a whole file).

    Returns:
        The hits; where two detectors overlap the earlier, then longer, one wins.
    """
    if len(text) < _MIN_TEXT:
        return []
    return _scan(text)


def quiet(text: str) -> bool:
    """True when ``text`` holds no hint: neither it nor any part of it has a secret to find.

    A keyword alone (``token``, ``key``) is no hint: its rules need a separator or a value
    after it. So ``quiet`` says nothing of a name: ``any_secret_name`` does.
    """
    return not _FULL and not _HINTS.find(text)[0]


def quiet_json(objs: Any) -> bool:
    """True when no string inside the JSON-like ``objs`` holds a hint, nor does any key.

    One serialisation and one search in C, where walking the many small dicts of a session's
    step extras in Python to join their strings costs more than the search.
    A dump with no escape holds every string's UTF-8 whole between quotes: a hint in a string
    is then a hint in the dump (the only anchor, ``^``, stands for the quote before it). A
    dump that cannot be made (a key that is not a string, a lone surrogate, a huge int) or
    that holds an escape says False, as does a hint or a ``_NAME_WORDS`` word in a key: the
    caller then walks the strings. Every secret-like key holds one of those words, so a
    quiet dump has no value ``redact_value`` checks as an assignment.
    """
    if _FULL:
        return False
    try:
        data = orjson.dumps(objs)
    except (TypeError, orjson.JSONEncodeError):
        return False
    # An escape (a newline, a quote) would split a string's hint in the dump: the caller
    # walks those. Undoing them costs more (a ``bytes.replace`` pass per escape) than the walk.
    return b"\\" not in data and not _HINTS.holds_name(data) and _HINTS.none_in(data)


def _scan(text: str) -> list[SecretHit]:
    data: bytes | None = None
    if _FULL:
        low: str | None = text.lower()
        plan = _make_plan(_HINTS.everything)
    else:
        present, low, data = _HINTS.find(text)
        if not present:
            return []
        plan = _plan(present)
        if plan.idle:  # about half the texts holding a hint
            return []
    if low is None:
        # Shape rules read ``text`` only: lowering is skipped when nothing else runs.
        low = lowered(text, data) if plan.low else text
    gated = not _FULL
    hits: list[SecretHit] = []
    for r in plan.pem:
        hits.extend(SecretHit(r.kind, *m.span()) for m in r.pattern.finditer(text))
    for r in plan.prefixed:
        for m in matches(r, text, low, gated):
            start, end = m.span(r.group)
            if r.group == 0 and start > 0 and text[start - 1] in _TOKEN_CHARS and not (
                start >= 2 and text[start - 2] == "\\"  # ``\nghp_...`` inside a JSON string
            ):
                continue
            hits.append(SecretHit(r.kind, start, end))
    hits.extend(header_hits(text, low, plan.headers))
    if plan.url:
        hits.extend(url_hits(text))
    # Contexts before assignments: on the same span the more specific kind names the hit.
    if plan.contexts:
        hits.extend(SecretHit(k, a, b)
                    for k, a, b in context_hits(text, low, plan.contexts, gated))
    # The keyword rules run only where they can start (``anchors.py``): big file views hold a
    # few ``key``s but would cost a full regex pass each. One hyperscan pass gives those
    # offsets when it is installed (``_ASSIGN_STARTS_AT``, ``NEAR_STARTS_AT``); else every
    # occurrence of the keywords, from ``str.find``.
    starts: list[list[int]] | None = None
    if gated and plan.words:
        starts = _HINTS.starts(text, data)
        if starts is None:  # the pure-Python engine ran: it lowered the text
            base = low if low is not text else text.lower()
            occ = {w: occurrences(base, (w,)) for w in plan.words}
            starts = [sorted({i for v in occ.values() for i in v}), near_starts(base, occ)]
    if plan.assign:
        at = starts[0] if starts is not None and len(low) == len(text) else None
        hits.extend(assignment_hits(text, low, at))
    if plan.near:
        near_at = starts[1] if starts is not None else list(range(len(low)))
        hits.extend(SecretHit(k, a, b)
                    for k, a, b in near_word_hits(text, low, _NOT_SECRET_WORDS, near_at))
    return _resolve(hits)


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """Return ``text`` with secrets replaced by typed placeholders.

    Args:
        text: Text about to leave the machine or be written.
        counts: When given, incremented by one per placeholder, keyed by kind.

    Returns:
        The redacted text (the same object when nothing was found).
    """
    return replace_hits(text, scan(text), counts)


def whole_value_kind(name: str, value: str) -> str | None:
    """The kind to replace ``value``, stored under the secret-like ``name``, with whole.

    None when it is no secret by the name's check (``assignment_kind``), or holds several
    lines, or holds a secret shape and nothing else that passes the check: ``Bearer ghp_...``
    keeps its ``Bearer``, but a password written next to a token goes with it.
    """
    if "\n" in value:
        return None
    kind = assignment_kind(name, value)
    hits = scan(value) if kind else None
    if not hits:
        return kind
    pos, rest = 0, []
    for h in hits:
        rest.append(value[pos:h.start])
        pos = h.end
    rest.append(value[pos:])
    return kind if assignment_kind(name, " ".join(rest).strip()) else None


def redact_value(obj: Any, counts: Counter[str] | None = None, _name: str = "") -> Any:
    """Redact every string inside a JSON-like structure, keeping its shape.

    Dict keys are kept; a string stored under a secret-like key (``password``, ``api_key``,
    ``client_secret``...) is checked as an assignment as well as scanned.

    Args:
        obj: dict / list / str / scalar, as loaded from JSON.
        counts: When given, incremented per placeholder, keyed by kind.

    Returns:
        A new structure (strings redacted); other scalars are returned unchanged.
    """
    if isinstance(obj, str):
        if _name and _secret_name(_name):
            kind = whole_value_kind(_name, obj)
            if kind:
                if counts is not None:
                    counts[kind] += 1
                return placeholder(kind)
        return redact(obj, counts)
    if isinstance(obj, dict):
        return {k: redact_value(v, counts, str(k)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_value(v, counts, _name) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_value(v, counts, _name) for v in obj)
    return obj


def kinds() -> list[str]:
    """Every placeholder kind this module can emit (for docs and tests)."""
    names = {r.kind for r in (*PEM, *PREFIXED, *_HEADER_RULES)}
    names.update(c.kind for c in CONTEXTS)
    names.update(_SCHEME_KIND.values())
    names.update({"url-password", "password", "secret-assignment", "high-entropy-secret",
                  "secret-near-word"})
    return sorted(names)
