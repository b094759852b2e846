"""Secrets in ``NAME = value`` assignments: the rule, the secret-like names, the value check.

Covers .env, shell, YAML, JSON and Python assignments and their prose forms (```X` is set to
`v```, ``X is v``). How strong the value must look comes from the name (``name_class``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .anchors import search_from
from .hits import SecretHit
from .rules import rule
from .values import CHECKS, strong

# The regex starts at the keyword (a fast first-character scan) and the rest of the name is
# read backwards in Python, because a leading ``[\w.-]*`` made the pattern retry at every
# character (7x slower).
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


@lru_cache(maxsize=8192)  # asked for every key of every argument dict and extra
def _secret_name(name: str) -> bool:
    return name_class(name) in ("password", "secret")


@lru_cache(maxsize=4096)  # the same few argument names recur: asked once each
def any_secret_name(names: tuple[str, ...]) -> bool:
    """True when one of ``names`` is secret-like: its string value is checked as an assignment."""
    return any(_secret_name(n) for n in names)


def _name_before(text: str, m: re.Match[str]) -> str:
    """The whole identifier whose tail the keyword match is (``DB_PASSWORD``)."""
    a = m.start()
    while a > 0 and text[a - 1] in _NAME_CHARS:
        a -= 1
    return text[a:m.end(1)]


def assignment_hits(text: str, low: str, at: list[int] | None) -> list[SecretHit]:
    """The values of secret assignments in ``text``.

    Args:
        text: The text scanned.
        low: ``text`` lowered, or ``text`` itself when it was not lowered.
        at: The offsets where a match may start (``_ASSIGN_STARTS_AT``); None: everywhere.

    Returns:
        The hits, left to right.
    """
    if low is not text and len(low) == len(text):
        subject, pattern = low, _ASSIGN.pattern
    else:  # not lowered, or lowering changed the length: the twin reads the text itself
        subject, pattern = text, _ASSIGN.folded or _ASSIGN.pattern
    # Tried at each keyword (every position when ungated), left to right. A match whose
    # value is no secret does not hide the keywords inside it: ``secret: "example ...
    # DB_PASSWORD=v ..."`` is rejected as a whole, and ``DB_PASSWORD`` is tried next.
    hits: list[SecretHit] = []
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
    return hits
