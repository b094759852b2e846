"""Which hints a text holds: the cheap test that decides which rules run on it at all.

Most step text holds no hint (no credential word, no token prefix inside a long token run),
so no rule runs on it. Two engines give the same answer:

- the ``fast`` extra (hyperscan): every hint in one compiled pass over the text's bytes, each
  reported once. Hints are ASCII and matched without case on the original text, which equals
  looking for them in ``text.lower()`` except across the two characters whose lower case is
  ASCII (``İ``, the Kelvin sign): a text holding one takes the pure-Python path. Token
  prefixes are tested with a cheaper, looser run test (``_in_run``);
- pure Python: ``in`` for each word (a word is looked for only when a shorter word it holds
  is there), and token prefixes inside the runs of 16+ token characters.

The engines may disagree only by the fast one reporting a token prefix the other does not:
that makes a rule run and find nothing, so the hits are the same. A token prefix counts only
inside such a run (``ghp_`` with 36 characters after it), which is
where every shape rule matches; elsewhere (``ac`` in "each", ``.`` in prose) it would make its
rule run for nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

hyperscan: Any
try:  # the ``fast`` extra
    import hyperscan  # type: ignore[import-not-found,import-untyped,no-redef,unused-ignore]
except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
    hyperscan = None

RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/_-.=")
"""Characters of a token run (lower case)."""
MIN_RUN = 16
_LONG_RUN = re.compile(r"(?<![a-z0-9+/_\-.=])[a-z0-9+/_\-.=]{16,}")  # starts at run edges
_RUN_CLASS = "[A-Za-z0-9+/_\\-.=]"
_ASCII_FOLDING = ("\u0130", "\u0131", "\u017f", "\u212a")
"""The only non-ASCII characters that lower to an ASCII letter or match one ignoring case."""
_FOLD = "~fold"
"""Reported by hyperscan for a text holding one of them: the pure-Python engine decides."""
_B = r"\x80-\xff"  # any byte of a non-ASCII character: a class holding \d or \s, widened
_WS = r"\t-\r \x1c-\x1f"  # the ASCII characters of Python's \s
# Hints so common that alone they say little ("." in prose, "ac" in "each", "--" in every
# command): hyperscan looks instead for a pattern that every match of the hint's rule holds
# (byte classes widened, counts loosened, lookarounds dropped, so never narrower), with
# its case rule. One pattern may stand for several hints.
FAST_PATTERNS: tuple[tuple[tuple[str, ...], str, bool], ...] = (
    # discord-bot-token, ASCII: fixed counts, up to the 27 characters its last part needs at
    # least (this one pattern was a fifth of the pass when it allowed any byte, ``{23,}``).
    ((".",), r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}", False),
    (("ac",), r"AC[0-9a-f]{32}", False),  # twilio-account-sid
    (("sk",), r"SK[0-9a-fA-F]{32}", False),  # twilio-api-key
    # credential-flag: its secret word comes right after ``-`` or ``_`` (``--password``,
    # ``--db-password``, ``--api_key``), then ``=`` or a blank. Looking for ``--`` instead
    # made hyperscan stop at every flag of every command and every markdown rule.
    (("--",), r"[-_](?:password|passwd|pass|pwd|passphrase|token|secret|api[-_]?key|apikey|"
     r"access[-_]?key|secret[-_]?key|private[-_]?key|auth[-_]?token|client[-_]?secret|"
     r"credentials?)(?:=|[ \t])", True),
    (("x-",), r"x-[a-z\-]*(?:key|token|secret|auth)\\?[\"']?[ \t]*:", True),  # api-key-header
    (("-u",), rf"-(?:u|-user)[{_WS}{_B}]", False),  # curl-user-password
    (("://", "@"), rf"://[^{_WS}:/?#@'\"<>\[\]]+:[^{_WS}@/'\"<>]+@", False),  # url credentials
    # the password context: sshpass / docker login / twine / mysql ... -p v
    (("sshpass", "login", "twine", "mysql"), r"(?:sshpass|login|twine|mysql)[^\n]*[ \t]-p", True),
    # basic auth, as a header and in any spelling: base64 after the word
    (("basic",), rf"basic[{_WS}{_B}]+[a-z0-9+/]{{6}}", True),
    (("machine",), r"machine[\x00-\xff]*password", True),  # netrc, on one line or several
    (("authorization",), r"authorization\\?[\"']?[ \t]*:[ \t]*[\"']?"
     r"(?:token|apikey|key|sso-key|digest)[ \t]", True),  # Authorization: token v
)
_CHAR = r"[\xc0-\xff][\x80-\xbf]{1,3}"  # one non-ASCII character in UTF-8 (surrogates too)
GATES: tuple[tuple[str, str, bool], ...] = (
    # secret-assignment: a secret keyword, then a separator (``assignments._ASSIGN``, to its value).
    ("~assign", r"(?:passw(?:or)?d|passphrase|pwd|pass|secret|token|key_base|key|auth|"
     r"credentials?|cred|salt)(?:\\?[\"'`]|\*\*)?(?:[ \t]*[:=]|[ \t]+=>[ \t]|"
     r"[ \t]+(?:is[ \t]+)?set[ \t]+to[ \t]|[ \t]+is[ \t])", True),
    # secret-near-word (``contexts.near_word_hits``): a whole secret word (not after a letter,
    # digit, ``_`` or ``/``), then one character that is neither a word character nor ``/``,
    # then within 40 characters of words and light punctuation a run of 16 token
    # characters. Any non-ASCII character may stand in each of those places.
    ("~near", r"(?:^|[^a-z0-9_/])(?:passw(?:or)?d|passphrase|token|secret|api[-_ ]?key|key|"
     r"auth[a-z]*|credentials?)(?:[ \t:=(\"'`\[.\-]|" + _CHAR + r")(?:[A-Za-z0-9_ \t:=(\"'`\[.\-]|"
     + _CHAR + r"){0,39}[A-Za-z0-9+/=_\-.]{16}", True),
)
"""Pseudo-hints only hyperscan tests: a rule that needs one runs on every text the pure-Python
engine finds any hint in, and only where hyperscan finds the pattern."""


_NONE: frozenset[str] = frozenset()
_MAX_SETS = 4096
"""Hint sets remembered by the patterns that found them, in the order they were found."""


class HintSearch:
    """Finds which of a fixed set of hints a text holds."""

    def __init__(self, words: Iterable[str], run_hints: Iterable[str],
                 starts: tuple[tuple[int, str, int], ...] = (),
                 with_gates: Iterable[str] = (), names: Iterable[str] = ()) -> None:
        """Prepare both engines.

        Args:
            words: Lower-case hints looked for anywhere in the text.
            run_hints: Lower-case hints (token characters only) that count only inside a run
                of ``MIN_RUN`` or more token characters.
            starts: ``(group, pattern, length)`` rows: ``starts`` gives, for each group,
                the offsets where a ``pattern`` match (of that fixed ``length``) begins.
            with_gates: Words whose rules run only where a gate (``GATES``) is found
                too, and each gate holds one of them: hyperscan does not look for them,
                and reports them all with a gate. A text holding one and no gate (``key``
                in code) is then quiet, with no call back into Python for it.
            names: Words ``holds_name`` looks for.
        """
        self.run_hints = tuple(sorted(set(run_hints)))
        ordered = sorted(set(words) - set(self.run_hints), key=lambda h: (len(h), h))
        # Each word with a shorter word it contains: no ``password`` without ``pass``.
        self.words = tuple((h, next((p for p in ordered[:i] if p in h), None))
                           for i, h in enumerate(ordered))
        # Run hints under their first two characters: one search for ``gh`` stands for the
        # six GitHub prefixes when no run holds it.
        self.run_groups = tuple(
            (gate, tuple(h for h in self.run_hints if h[:2] == gate))
            for gate in sorted({h[:2] for h in self.run_hints})
        )
        self.gates = frozenset(name for name, _, _ in GATES)
        self.everything = (frozenset(h for h, _ in self.words) | frozenset(self.run_hints)
                           | self.gates)
        self.groups, self.db = _compile(tuple(h for h, _ in self.words), self.run_hints,
                                        tuple(sorted(set(with_gates))))
        self.start_rows = starts
        self.start_groups = 1 + max((g for g, _, _ in starts), default=-1)
        self.start_db = _compile_all(tuple(pattern for _, pattern, _ in starts))
        self.names_db = _compile_all(tuple(re.escape(w) for w in names), once=True)
        self._local = threading.local()
        """``groups[i]``: the hints hyperscan pattern ``i`` stands for."""
        self._sets: dict[tuple[int, ...], frozenset[str]] = {}
        """Hint sets by the patterns that found them (``find``)."""

    def find(self, text: str) -> tuple[frozenset[str], str | None, bytes | None]:
        """The hints ``text`` holds, with what was read to find them.

        Returns:
            The hints; ``text.lower()`` when the pure-Python engine needed it (else None);
            the UTF-8 bytes hyperscan read when it decided alone, so that no character of
            ``text`` folds into ASCII (else None: ``lowered`` then needs ``text.lower()``).
        """
        if self.db is not None:
            found: list[int] = []
            scratch = getattr(self._local, "scratch", None)
            if scratch is None:  # hyperscan's scratch space is one thread's (Gemini sends in
                scratch = self._local.scratch = hyperscan.Scratch(self.db)  # several)
            try:  # naming no error handler halves the cost of the call on a short text
                data = text.encode()
            except UnicodeEncodeError:  # a lone surrogate
                data = text.encode("utf-8", "surrogatepass")
            # Positional arguments: the binding parses keywords at twice the cost of the scan
            # of a short text, and most texts are short.
            self.db.scan(data, _collect, 0, found, scratch)
            if not found:  # most texts
                return _NONE, None, data
            # The same few sets of patterns recur: one frozenset each, whose hash is kept for
            # the plan lookup that follows.
            key = tuple(found)
            hints = self._sets.get(key)
            if hints is None:
                hints = frozenset(h for i in found for h in self.groups[i])
                if len(self._sets) < _MAX_SETS:
                    self._sets[key] = hints
            if _FOLD not in hints:
                return hints, None, data
        low = text.lower()
        return self.search(low), low, None

    def starts(self, text: str, data: bytes | None = None) -> list[list[int]] | None:
        """Per group of ``starts`` rows, the sorted offsets where one of its patterns matches.

        Patterns match ignoring case, all in one hyperscan pass, where ``str.find`` per word
        over a big file view costs a pass each. The offsets are those of ``text.lower()``
        (and ``lowered``) too: the text is ASCII, or no character of it folds into ASCII
        (``data`` given: ``find`` decided alone), so only ASCII letters match and none
        changes the length. A non-ASCII text is scanned with each of its other characters
        as one ``?``, so that byte offsets are character offsets: a pattern must match
        there wherever it would on any character that is not ASCII. None without hyperscan
        (or with the pure-Python engine forced), or for a non-ASCII text without ``data``.

        Args:
            text: The text.
            data: ``find``'s bytes of ``text``.
        """
        if self.db is None or self.start_db is None:
            return None
        if text.isascii():
            data = data or text.encode()
        elif data is None:
            return None
        else:
            data = text.encode("ascii", "replace")
        found: list[int] = []
        scratch = getattr(self._local, "start_scratch", None)
        if scratch is None:
            scratch = self._local.start_scratch = hyperscan.Scratch(self.start_db)
        self.start_db.scan(data, _collect_at, 0, found, scratch)
        out: list[list[int]] = []
        for _ in range(self.start_groups):
            out.append([])
        rows = self.start_rows
        for k in range(0, len(found), 2):  # (pattern, end) pairs, by end: nearly sorted
            group, _, length = rows[found[k]]
            out[group].append(found[k + 1] - length)
        for offsets in out:
            offsets.sort()  # a start found twice (``key\n`` at the end) is tried once more
        return out

    def holds_name(self, data: bytes) -> bool:
        """True when ``data`` (UTF-8) holds one of ``names`` in any case; True without hyperscan."""
        return self.names_db is None or self._matches(self.names_db, "names_scratch", data)

    def none_in(self, data: bytes) -> bool:
        """True when hyperscan finds no hint in ``data`` (UTF-8); False without hyperscan.

        For text the caller holds encoded already (``redact.quiet_json``): the answer is
        ``find``'s on the decoded text, its fold marker counting as a hint.
        """
        return self.db is not None and not self._matches(self.db, "scratch", data)

    def _matches(self, db: Any, scratch_name: str, data: bytes) -> bool:
        """True when a pattern of ``db`` matches in ``data``, with this thread's scratch."""
        scratch = getattr(self._local, scratch_name, None)
        if scratch is None:
            scratch = hyperscan.Scratch(db)
            setattr(self._local, scratch_name, scratch)
        found: list[int] = []
        db.scan(data, _collect, 0, found, scratch)
        return bool(found)

    def search(self, low: str) -> frozenset[str]:
        """The pure-Python engine: the hints in ``low`` (a lowered text)."""
        found: set[str] = set()
        for h, parent in self.words:
            if (parent is None or parent in found) and h in low:
                found.add(h)
        runs = _LONG_RUN.findall(low)
        if runs:
            joined = " ".join(runs)
            for gate, members in self.run_groups:
                if gate in joined:
                    found.update(h for h in members if h in joined)
        return frozenset(found | self.gates) if found else frozenset()


def lowered(text: str, data: bytes | None) -> str:
    """``text`` as the case-insensitive rules read it: ``text.lower()`` or its equal for them.

    ``text.lower()`` of a non-ASCII text costs about 10x per character what it costs on an
    ASCII one (the full case mapping of every character). When ``data`` (its UTF-8, from
    ``find``) is given, no character of ``text`` folds into ASCII; lowering the ASCII letters
    alone then gives a text of the same length on which every rule run on lowered text
    matches exactly as on ``text.lower()``: each character they test apart from ASCII is
    tested alike in upper and lower case (``tests/test_redact_fast.py`` checks this for every
    code point).
    """
    if data is None or text.isascii():
        return text.lower()
    return data.lower().decode("utf-8", "surrogatepass")


def _collect(i: int, start: int, end: int, flags: int, found: list[int]) -> None:
    found.append(i)


def _collect_at(i: int, start: int, end: int, flags: int, found: list[int]) -> None:
    found += (i, end)


def _compile_all(patterns: tuple[str, ...], once: bool = False) -> Any:
    """A database of ``patterns``, ignoring case: every match (``once``: the first of each)."""
    if hyperscan is None or not patterns:
        return None
    flag = hyperscan.HS_FLAG_CASELESS | (hyperscan.HS_FLAG_SINGLEMATCH if once else 0)
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[p.encode() for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[flag] * len(patterns))
    return db


def _in_run(hint: str) -> str:
    """A hyperscan pattern that matches wherever ``hint`` lies inside a long token run.

    A window of ``MIN_RUN`` run characters holding the hint has half the rest of the window
    on one side of it or the other: testing the two sides is a superset of the exact test
    (which costs hyperscan 8x more), and a superset only makes a rule run for nothing.
    """
    h = re.escape(hint)
    side = -(-(MIN_RUN - len(hint)) // 2)
    if side <= 0:
        return h
    return f"(?:{_RUN_CLASS}{{{side}}}{h}|{h}{_RUN_CLASS}{{{side}}})"


def _compile(words: tuple[str, ...], run_hints: tuple[str, ...],
             with_gates: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], ...], Any]:
    if hyperscan is None:
        return (), None
    special = {h for names, _, _ in FAST_PATTERNS for h in names} | set(with_gates)
    rows: list[tuple[tuple[str, ...], str, bool]] = [
        ((w,), re.escape(w), True) for w in words if w not in special]
    rows += [((h,), _in_run(h), True) for h in run_hints if h not in special]
    rows += [row for row in FAST_PATTERNS if set(row[0]) <= set(words) | set(run_hints)]
    rows += [((name, *with_gates), pattern, caseless) for name, pattern, caseless in GATES]
    rows += [((_FOLD,), "".join(f"\\x{b:02x}" for b in c.encode()), False)
             for c in _ASCII_FOLDING]
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    once = hyperscan.HS_FLAG_SINGLEMATCH
    db.compile(expressions=[p.encode() for _, p, _ in rows], ids=list(range(len(rows))),
               elements=len(rows),
               flags=[once | (hyperscan.HS_FLAG_CASELESS if c else 0) for _, _, c in rows])
    return tuple(names for names, _, _ in rows), db
