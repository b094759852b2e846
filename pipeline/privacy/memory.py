"""Session-wide secret memory: a secret seen once is replaced everywhere in its session.

A value recognised anywhere (an env dump, an assignment, a header, a URL, a key shape) is
remembered; every later text of the same session, sub-agents included, loses that value and
any fragment of it of ``FRAGMENT`` or more characters, whatever its context (a bare mention
in prose, the half that survived a cut). Texts built before the value was learned are passed
through ``apply`` once the whole session is read.

Fragments are found by ``fragments.py``: every block of every known value in one hyperscan
pass, so a text costs about the same whatever the number of secrets known.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from .assignments import _secret_name, any_secret_name
from .fragments import FragmentSearch
from .hits import SecretHit, _resolve, placeholder, replace_hits
from .redact import (
    _MIN_TEXT,
    quiet,
    quiet_json,
    whole_value_kind,
)
from .redact import (
    _scan as _scan_text,
)
from .rules import SHAPE_KINDS
from .values import is_placeholder, learnable

_MIN_EXACT = 8
"""Values shorter than this are not remembered (``pass``, ``1234``: too common elsewhere)."""
_MAX_VALUE = 1024
_PEM_LINES = 8
_SEEN_MAX_CHARS = 4_000_000
"""A session's scanned texts are remembered (a task redacted twice, one output read again)
up to this many characters in all, so a huge session does not keep every text alive."""
_MANY = 4
"""From this many objects (a session's step extras) ``redact_values`` first tries them dumped
as JSON (``quiet_json``): one C pass, where walking small dicts in Python costs more. A call's
arguments and text are walked: there the dump, often not quiet, would be extra work."""
_SEEN_PER_LENGTH = 4
"""Texts remembered per length: a repeat is found by comparing texts of its length only."""


class SessionSecrets:
    """The secrets of one session, and redaction that uses them.

    Not thread-safe: one instance belongs to one ``ParseContext`` (one source being parsed).
    """

    def __init__(self) -> None:
        self._known: dict[str, str] = {}
        self._fragments = FragmentSearch()
        # Keyed by length, not by the text: hashing every text of a session cost more than
        # the scans the repeats (about 7% of the characters) spared. Texts of one length are
        # compared with ``==``, which stops at the first differing character.
        self._seen: dict[int, list[tuple[str, tuple[SecretHit, ...]]]] = {}
        self._seen_chars = 0

    def __len__(self) -> int:
        return len(self._known)

    def __contains__(self, value: object) -> bool:
        return value in self._known

    def learn(self, value: str, kind: str) -> None:
        """Remember ``value`` as a secret of ``kind`` (private key blocks: their lines)."""
        if "\n" in value or "\\n" in value:
            lines = [ln.strip() for ln in value.replace("\\n", "\n").splitlines()]
            for ln in [x for x in lines if len(x) >= 16 and "-----" not in x][:_PEM_LINES]:
                self._remember(ln, kind)
            return
        if _MIN_EXACT <= len(value) <= _MAX_VALUE and not is_placeholder(value) and \
                learnable(value, kind, kind in SHAPE_KINDS):
            self._remember(value, kind)

    def _remember(self, value: str, kind: str) -> None:
        if value not in self._known:
            self._known[value] = kind
            self._fragments.add(value, kind)

    def spans(self, text: str) -> list[SecretHit]:
        """Where known secrets, or fragments of them, occur in ``text``."""
        if not self._known or not text:
            return []
        return [SecretHit(kind, a, b) for kind, a, b in self._fragments.spans(text)]

    def redact(self, text: str, counts: Counter[str] | None = None) -> str:
        """Scan ``text``, learn what it holds, and replace it and every known secret."""
        size = len(text)
        if size < _MIN_TEXT:  # shorter than any rule's match or any remembered value
            return text
        # The scan cache and ``_scan`` inlined: this runs for every text of every step.
        same = self._seen.get(size)
        seen = None
        if same is not None:
            for old, old_hits in same:
                if old == text:  # an equal text, scanned before
                    seen = old_hits
                    break
        if seen is None:
            seen = tuple(_scan_text(text))  # ``scan`` without its length test, done above
            if self._seen_chars < _SEEN_MAX_CHARS:
                if same is None:
                    self._seen[size] = [(text, seen)]
                    self._seen_chars += size
                elif len(same) < _SEEN_PER_LENGTH:
                    same.append((text, seen))
                    self._seen_chars += size
        if not seen and not self._known:  # most texts
            return text
        hits = list(seen)
        for h in hits:
            self.learn(text[h.start:h.end], h.kind)
        if self._known:
            hits = _resolve(hits + self.spans(text))
        return replace_hits(text, hits, counts)

    def apply(self, text: str) -> str:
        """Replace only the known secrets in ``text`` (it was scanned when it was built)."""
        if not self._known or not text:
            return text
        return replace_hits(text, _resolve(self.spans(text)), None)

    def redact_value(self, obj: Any, counts: Counter[str] | None = None) -> Any:
        """``redact`` every string of a JSON-like structure, keeping its shape.

        A string under a secret-like key is checked as an assignment (``{"password": v}``).
        """
        if type(obj) is str:
            return self.redact(obj, counts)
        return self.redact_values([obj], counts)[0]

    def redact_values(self, objs: list[Any], counts: Counter[str] | None = None) -> list[Any]:
        """``redact_value`` of each of ``objs``, in order, with one hint pass for them all.

        The extras of every step of a session, or a call's arguments and its text, are many
        small strings: when none holds a hint, one search of them joined says so. When one
        does, each string is searched on its own (once: not again for each object).
        """
        if len(objs) >= _MANY and not self._known and quiet_json(objs):
            return list(objs)
        strings: list[str] = []
        keys: list[str] = []
        for obj in objs:
            _strings(obj, 0, strings, keys)
        if not strings:
            return list(objs)
        named = bool(keys) and any_secret_name(tuple(keys))
        if len(strings) > 1 and quiet("\n".join(strings)):
            if not named and not self._known:
                return list(objs)

            def known(text: str) -> str:  # no hint: only a known secret can change them
                return self._known_only(text, counts)
            return [self._walk(obj, known, 0, counts, named) for obj in objs]
        # Each string searched on its own (joined, a single one would be searched twice).
        # Most hold a hint but no secret: they come back as they are, and the objects need
        # no copy. The walk below finds the others' hits remembered.
        if not named and all(self.redact(text) is text for text in strings):
            return list(objs)

        def redact(text: str) -> str:
            return self.redact(text, counts)
        return [self._walk(obj, redact, 0, counts, named) for obj in objs]

    def _known_only(self, text: str, counts: Counter[str] | None) -> str:
        """``redact`` of a text that ``scan`` finds nothing in."""
        if not self._known or not text:
            return text
        return replace_hits(text, _resolve(self.spans(text)), counts)

    def apply_value(self, obj: Any) -> Any:
        """``apply`` to every string of a JSON-like structure, keeping its shape."""
        if not self._known:
            return obj
        return self._walk(obj, self.apply, 0, None, False)

    def _walk(self, obj: Any, fn: Callable[[str], str], depth: int,
              counts: Counter[str] | None, named: bool) -> Any:
        if type(obj) is str:
            return fn(obj)
        if depth > 64:  # the adapters keep data this deep as one string: nothing to walk
            return obj
        if isinstance(obj, dict):
            return {k: self._field(k, v, fn, depth, counts, named) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._walk(v, fn, depth + 1, counts, named) for v in obj]
        if isinstance(obj, str):
            return fn(obj)
        return obj

    def _field(self, key: Any, value: Any, fn: Callable[[str], str], depth: int,
               counts: Counter[str] | None, named: bool) -> Any:
        if (named and type(value) is str and type(key) is str and "\n" not in value
                and _secret_name(key)):
            kind = whole_value_kind(key, value)
            if kind:
                self.learn(value, kind)
                if counts is not None:
                    counts[kind] += 1
                return placeholder(kind)
        return self._walk(value, fn, depth + 1, counts, named)


def _strings(obj: Any, depth: int, out: list[str], keys: list[str]) -> None:
    """Put into ``out`` the strings ``SessionSecrets._walk`` passes to its function.

    They are joined for one hint search, so their order does not matter: a dict's own
    strings come before those of the containers it holds. ``keys`` gets the key of each
    string a dict holds (when the key is a string): the names ``_field`` may check.
    """
    kind = type(obj)
    if kind is str:
        out.append(obj)
        return
    if kind is not dict:
        _strings_any(obj, depth, out, keys)
        return
    if depth > 64:
        return
    # Strings are taken in the loop, not by a call each: most values of a tool call's
    # arguments and of a step's extras are strings.
    nested = None
    for k, v in obj.items():
        kind = type(v)
        if kind is str:
            out.append(v)
            if type(k) is str:
                keys.append(k)
        elif kind is dict or kind is list or isinstance(v, (str, dict, list)):
            if nested is None:
                nested = [v]
            else:
                nested.append(v)
    if nested is not None:
        for v in nested:
            _strings(v, depth + 1, out, keys)


def _strings_any(obj: Any, depth: int, out: list[str], keys: list[str]) -> None:
    """``_strings`` of a list, a subclass of str, dict or list, or a scalar."""
    if isinstance(obj, str):
        out.append(obj)
        return
    if depth > 64:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if type(v) is str:
                out.append(v)
                if type(k) is str:
                    keys.append(k)
            elif isinstance(v, (str, dict, list)):
                _strings(v, depth + 1, out, keys)
    elif isinstance(obj, list):
        for v in obj:
            if type(v) is str:
                out.append(v)
            elif type(v) is dict or type(v) is list or isinstance(v, (str, dict, list)):
                _strings(v, depth + 1, out, keys)
