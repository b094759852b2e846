"""The one gate every byte leaving the machine (or written to disk) goes through.

Secrets become typed placeholders such as ``[REDACTED:github-token]``; the text around them is
kept so a redacted log still reads well. Three families of detectors:

- shapes (``rules.py``): tokens with a distinctive prefix and private key blocks;
- credentials in URLs and headers (here): only the secret part is replaced;
- contexts (``contexts.py`` and the assignments here): a value in a credential position, which
  must also look like a secret (``values.py``), so code and test fixtures stay readable.

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

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from .anchors import occurrences, search_from
from .contexts import (
    CONTEXTS,
    NEAR_HINTS,
    NEAR_STARTS_AT,
    Context,
    context_hits,
    near_starts,
    near_word_hits,
)
from .hints import RUN_CHARS, HintSearch, lowered
from .rules import PEM, PREFIXED, Rule, matches, rule
from .values import CHECKS, PLACEHOLDER_PREFIX, is_placeholder, strong


def placeholder(kind: str) -> str:
    """The text a secret of ``kind`` is replaced with."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret found in a text: its kind and the span to replace."""

    kind: str
    """Typed name used in the placeholder (``github-token``, ``postgres-password``, ...)."""
    start: int
    """Start offset of the secret (only the secret part, not its label)."""
    end: int
    """End offset (exclusive)."""


# Credentials inside URLs and headers: only the secret part is replaced, so
# ``postgres://app:[REDACTED:postgres-password]@db:5432/app`` still tells where it pointed.
_URL_CRED = rule(
    "url-password", r"://([^\s:/?#@'\"<>\[\]]{1,128}):([^\s@/'\"<>]{1,256})@", ["://"], 2
)
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_SCHEME_KIND = {
    "postgres": "postgres-password", "postgresql": "postgres-password",
    "mongodb": "mongodb-password", "mongodb+srv": "mongodb-password",
    "redis": "redis-password", "rediss": "redis-password",
    "mysql": "mysql-password", "mariadb": "mysql-password",
    "amqp": "amqp-password", "amqps": "amqp-password",
    "http": "url-basic-auth", "https": "url-basic-auth",
}
_HEADER_RULES: list[Rule] = [
    rule("bearer-token", r"bearer\s+([A-Za-z0-9._~+/=\-]{12,})", ["bearer"], 1, True),
    rule("basic-auth", r"authorization[\"']?\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}={0,2})",
         ["basic"], 1, True),
    rule("api-key-header", r"(?:x-api-key|x-goog-api-key|api-key|x-auth-token)[\"']?\s*:\s*"
         r"[\"']?([A-Za-z0-9._~+/=\-]{12,})", ["api-key", "x-auth-token"], 1, True),
    rule("curl-user-password", r"-(?:u|-user)\s+[\"']?[^\s:\"']{1,64}:([^\s\"']{3,128})",
         ["-u", "--user"], 1),
]

# ``NAME = value`` assignments (.env, shell, YAML, JSON, Python) and their prose forms
# (```X` is set to `v```, ``X is v``). The regex starts at the keyword (a fast first-character
# scan) and the rest of the name is read backwards in Python, because a leading ``[\w.-]*``
# made the pattern retry at every character (7x slower). Strength comes from the name:
# ``name_class`` below.
_VALUE = (r"(?:\\\"([^\"\\\n]{1,512})\\\"|\"([^\"\n]{1,512})\"|'([^'\n]{1,512})'|"
          r"`([^`\n]{1,512})`|([^\s\"'`,;)}\]\\|&<>]{1,512}))")
_ASSIGN = rule(
    "secret-assignment",
    r"(passw(?:or)?d|passphrase|pwd|pass|secret|token|key_base|key|auth|credentials?|cred|salt)"
    r"(?:\\?[\"'`]|\*\*)?"
    r"(?:[ \t]*[:=][ \t]*|[ \t]+=>[ \t]+|[ \t]+(?:is[ \t]+)?set[ \t]+to[ \t]+|[ \t]+is[ \t]+)"
    + _VALUE,
    ["pass", "pwd", "secret", "token", "key", "auth", "cred", "salt"], 0, True,
)
_TOKEN_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NAME_SPLIT = re.compile(r"[_.\-]|(?<=[a-z])(?=[A-Z])")
# Name words meaning the value is a count, a name or a setting, not the secret itself.
_NOT_SECRET_WORDS = frozenset(
    {"max", "min", "count", "counts", "limit", "tokens", "len", "length", "size", "type", "types",
     "name", "names", "file", "path", "dir", "id", "ids", "url", "uri", "env", "var", "field",
     "header", "prefix", "budget", "usage", "total", "input", "output", "cache", "sort",
     "primary", "foreign", "public", "hotkey", "keys", "monkey", "turkey", "keyboard", "expires",
     "expiry", "ttl", "timeout", "mode", "format", "kind", "enabled", "required", "hint",
     "policy", "store", "helper", "manager", "provider", "endpoint", "region", "algorithm",
     "label", "ref", "flag", "author", "oauth2", "hash", "index", "estimate",
     "remaining", "used", "per", "stats", "tokenizer", "pubkey", "bypass", "compass", "query",
     "lookup", "map", "column", "partition", "foreignkey", "unique", "dict", "group",
     "keyid", "fingerprint"}
)
_PASSWORD_NAME = re.compile(r"passw(?:or)?d|passphrase|pwd|[_.\-]pass$|^sshpass$|^pgpass$")
_SECRET_NAME = re.compile(
    r"secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key|"
    r"credential|key[_\-]?base|signing[_\-]?key|encryption[_\-]?key|master[_\-]?key"
)


@lru_cache(maxsize=8192)  # the same names come back on every line of a file
def name_class(name: str) -> str | None:
    """``password``, ``secret`` or ``loose`` for a secret-like name; None for any other."""
    words = {w.lower() for w in _NAME_SPLIT.split(name) if w}
    if words & _NOT_SECRET_WORDS:
        return None
    low = name.lower()
    if _PASSWORD_NAME.search(low):
        return "password"
    if _SECRET_NAME.search(low):
        return "secret"
    if re.search(r"key|auth|cred|salt", low) and not low.endswith("pass"):
        return "loose"
    return None


_CLASS_KIND = {"password": "password", "secret": "secret-assignment",
               "loose": "high-entropy-secret"}


def assignment_kind(name: str, value: str, sep: str = ":") -> str | None:
    """Kind for ``name = value``, or None when the value is not a secret literal.

    An env-file or shell assignment (``DB_PASSWORD=v``, ``SESSION_SECRET=v``: upper-case name,
    bare ``=``) is a credential position: any literal counts. In code, config and prose
    (``password = "..."``, ``API_KEY: v``, ``TOKEN is v``) the value must look generated;
    loose names (``*_key``, ``auth``) need a long random value.
    """
    cls = name_class(name)
    if cls is None or not value:
        return None
    if cls == "loose":
        ok = CHECKS["weak"](value)
    elif sep == "=" and name.upper() == name:
        ok = strong(value)
    else:
        ok = CHECKS["named"](value)
    return _CLASS_KIND[cls] if ok else None


def _name_before(text: str, m: re.Match[str]) -> str:
    """The whole identifier whose tail the keyword match is (``DB_PASSWORD``)."""
    a = m.start()
    while a > 0 and text[a - 1] in _NAME_CHARS:
        a -= 1
    return text[a:m.end(1)]


def _url_password_ok(user: str, password: str) -> bool:
    """A URL password is a secret unless it is a template, a stock value or the user again."""
    if "${" in user or "${" in password or "{" in password:
        return False
    if password in ("*", "***", "****") or password == user:
        return False
    return not is_placeholder(password)


# A token shape's own prefix (``ghp_``) counts only inside a long token run; names, flags and
# headers anywhere (``hints.py``).
_RUN_HINTS = frozenset(h for r in PREFIXED if r.group == 0 for h in r.hints if set(h) <= RUN_CHARS)
_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "salt")
"""Every ``_ASSIGN`` match starts with one of these; ``near_starts`` uses them too."""
_ASSIGN_SPELLINGS = ("passwd", "password", "passphrase", "pwd", "pass", "secret", "token",
                     "key_base", "key", "auth", "credentials", "credential", "cred", "salt")
_ASSIGN_STARTS_AT = tuple((re.escape(w) + r"[\\\"'`* \t:=]", len(w) + 1)
                          for w in _ASSIGN_SPELLINGS)
"""Hyperscan patterns, each with its length, such that an ``_ASSIGN`` match starts only where
one of them matches: each spelling of its keyword, then the first character of a quote or a
separator. Code holds many keywords followed by neither (``keys``, ``tokenize``)."""
_NAME_WORDS = ("pass", "pwd", "secret", "token", "key", "cred")
"""Every secret-like name (``_secret_name``) holds one of these, in any case."""
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
    for r in plan.headers:
        for m in matches(r, text, low):
            if r.kind == "curl-user-password" and m.start() > 0 and (
                not text[m.start() - 1].isspace()
            ):
                continue
            if not is_placeholder(text[m.start(1):m.end(1)]):
                hits.append(SecretHit(r.kind, *m.span(1)))
    if plan.url:
        for m in _URL_CRED.pattern.finditer(text):
            if not _url_password_ok(m.group(1), m.group(2)):
                continue
            a = m.start()
            while a > 0 and text[a - 1] in _SCHEME_CHARS:
                a -= 1
            kind = _SCHEME_KIND.get(text[a:m.start()].lower(), "url-password")
            hits.append(SecretHit(kind, m.start(2), m.end(2)))
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
        # Tried at each keyword (every position when ungated), left to right. A match whose
        # value is no secret does not hide the keywords inside it: ``secret: "example ...
        # DB_PASSWORD=v ..."`` is rejected as a whole, and ``DB_PASSWORD`` is tried next.
        if low is not text and len(low) == len(text):
            subject, pattern = low, _ASSIGN.pattern
        else:  # not lowered, or lowering changed the length: the twin reads the text itself
            subject, pattern = text, _ASSIGN.folded or _ASSIGN.pattern
        at = starts[0] if starts is not None and len(low) == len(text) else None
        pos = 0
        while True:
            am = (pattern.search(subject, pos) if at is None
                  else search_from(pattern, subject, at, pos))
            if am is None:
                break
            pos = am.start() + 1
            gi = am.lastindex or 0  # the value's group: the last of the match to close
            name = _name_before(text, am)
            a = am.start() - len(name) + len(am.group(1))
            if text.startswith("${", a - 2):  # ``${DB_PASSWORD:-x}``: a shell default
                continue
            sep = text[am.end(1):am.start(gi)].strip("\\\"'`* \t")
            akind = assignment_kind(name, text[am.start(gi):am.end(gi)], sep)
            if akind:
                hits.append(SecretHit(akind, am.start(gi), am.end(gi)))
                pos = am.end()
    if plan.near:
        near_at = starts[1] if starts is not None else list(range(len(low)))
        hits.extend(SecretHit(k, a, b)
                    for k, a, b in near_word_hits(text, low, _NOT_SECRET_WORDS, near_at))
    return _resolve(hits)


def _resolve(hits: list[SecretHit]) -> list[SecretHit]:
    hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
    out: list[SecretHit] = []
    for h in hits:
        if out and h.start < out[-1].end:
            if h.end > out[-1].end:  # overlapping tail: widen so no piece is left behind
                prev = out[-1]
                out[-1] = SecretHit(prev.kind, prev.start, h.end)
            continue
        out.append(h)
    return out


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """Return ``text`` with secrets replaced by typed placeholders.

    Args:
        text: Text about to leave the machine or be written.
        counts: When given, incremented by one per placeholder, keyed by kind.

    Returns:
        The redacted text (the same object when nothing was found).
    """
    return replace_hits(text, scan(text), counts)


def replace_hits(text: str, hits: list[SecretHit], counts: Counter[str] | None = None) -> str:
    """Return ``text`` with each of ``hits`` (sorted, not overlapping) replaced by its placeholder.

    Args:
        text: The text the hits were found in.
        hits: Spans to replace, in order.
        counts: When given, incremented by one per placeholder, keyed by kind.

    Returns:
        The redacted text (the same object when there is no hit).
    """
    if not hits:
        return text
    parts: list[str] = []
    pos = 0
    for h in hits:
        parts.append(text[pos:h.start])
        parts.append(placeholder(h.kind))
        pos = h.end
        if counts is not None:
            counts[h.kind] += 1
    parts.append(text[pos:])
    return "".join(parts)


@lru_cache(maxsize=8192)  # asked for every key of every argument dict and extra
def _secret_name(name: str) -> bool:
    return name_class(name) in ("password", "secret")


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


@lru_cache(maxsize=4096)  # the same few argument names recur: asked once each
def any_secret_name(names: tuple[str, ...]) -> bool:
    """True when one of ``names`` is secret-like: its string value is checked as an assignment."""
    return any(_secret_name(n) for n in names)


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
