"""Secrets recognised by where they sit: names, flags, files, prompts, messages.

Each context rule finds a candidate value; the value then has to pass the check of the rule's
strength (``values.py``), so a name saying ``password`` next to ``str`` or ``"testpass"``
redacts nothing. Value patterns stop at quotes, backslashes, pipes and whitespace: a
placeholder never swallows the text after the value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .anchors import anchored, occurrences, search_from
from .values import CHECKS, weak

# A value: ``\"v\"`` (inside a JSON string), "v", 'v', `v`, or bare.
_V = (r"(?:\\\"([^\"\\\n]{1,512})\\\"|\"([^\"\n]{1,512})\"|'([^'\n]{1,512})'|`([^`\n]{1,512})`"
      r"|([^\s\"'`,;)}\]\\|&<>]{1,512}))")


@dataclass(frozen=True, slots=True)
class Context:
    """A position that holds a credential: the value is the first group that matched."""

    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    strength: str
    """``strong``, ``named``, ``weak`` or ``b64cred`` (base64 of ``user:password``)."""
    fold: bool
    """Pattern written in lower case, run on the lowered text."""
    folded: re.Pattern[str]
    """IGNORECASE twin, for text whose length changes when lowered."""
    starts: tuple[str, ...] = ()
    """Lower-case words every match starts with: the rule is tried at their occurrences only
    (``anchors.py``), where a pattern with no literal first character makes ``finditer``
    try every position. Empty: tried everywhere."""


def _ctx(kind: str, pattern: str, hints: tuple[str, ...], strength: str, *,
         fold: bool = True, flags: int = 0, starts: tuple[str, ...] = ()) -> Context:
    return Context(kind, re.compile(pattern, flags), hints, strength, fold,
                   re.compile(pattern, flags | re.IGNORECASE), starts)


_PW_FLAG = (r"(?:password|passwd|pass|pwd|passphrase|token|secret|api[-_]?key|apikey|"
            r"access[-_]?key|secret[-_]?key|private[-_]?key|auth[-_]?token|client[-_]?secret|"
            r"credentials?)")
CONTEXTS: list[Context] = [
    # --password v, --api-key=v, --http-password v (never --password-stdin or --token-file).
    # A wider gap is a help-text column: what follows describes the flag (``Apply action``).
    _ctx("credential-flag", r"--(?<![\w-]--)(?:[a-z0-9]+[-_])*" + _PW_FLAG + r"(?:=|[ \t]{1,2})"
         + _V, ("--",), "strong"),
    # -p of commands whose -p is a password: sshpass -p v, docker login -p v, mysql -pv.
    _ctx("password", r"(?:sshpass|docker[ \t]+login|podman[ \t]+login|twine[ \t]+upload|"
         r"helm[ \t]+registry[ \t]+login|mysql|mysqladmin|mysqldump)\b[^\n|;&]{0,200}?[ \t]-p"
         r"(?:[ \t]+|(?=[^\s-]))" + _V, ("sshpass", "login", "twine", "mysql"), "strong",
         fold=False),
    # aws configure set aws_secret_access_key v, npm config set //r/:_authToken v.
    _ctx("credential-flag", r"(?:config(?:ure)?|secrets?)[ \t]+set[ \t]+(?:--[a-z-]+[ \t]+)*"
         r"[\"']?[\w./:@\-]*(?:secret|token|passw(?:or)?d|key|auth)\w*[\"']?[ \t]+" + _V,
         ("config set", "configure set", "secret set", "secrets set"), "strong"),
    _ctx("credential-flag", r"gh[ \t]+secret[ \t]+set[ \t]+\S+[ \t]+(?:-b|--body)(?:=|[ \t]+)"
         + _V, ("secret set",), "strong"),
    _ctx("credential-flag", r"--from-literal=[\w.\-]+=" + _V, ("--from-literal",), "strong"),
    # .netrc: machine h login u password v (on one line or several).
    _ctx("netrc-password", r"machine\s+\S+(?:\s+(?:login|account)\s+\S+){0,2}"
         r"\s+password\s+" + _V, ("machine",), "strong"),
    # Docker config.json and npm auth files.
    _ctx("docker-auth", r"\\?\"auth\\?\"\s*:\s*" + _V, ('auth"', 'auth\\"'), "b64cred",
         starts=('\\"auth', '"auth')),
    _ctx("docker-auth", r"\\?\"(?:identitytoken|registrytoken)\\?\"\s*:\s*" + _V,
         ("identitytoken", "registrytoken"), "named",
         starts=('\\"identitytoken', '"identitytoken', '\\"registrytoken', '"registrytoken')),
    _ctx("npm-auth", r"_(?<!\w_)(?:authtoken|auth|password)[ \t]*=[ \t]*" + _V,
         ("_auth", "_pass"), "strong"),
    # Password prompts echoed back: user@host's password: v, [sudo] password for u: v.
    _ctx("password-prompt", r"(?:'s password|\[sudo\] password for [^:\n]{1,64}|passphrase for "
         r"(?:key )?[^:\n]{1,200}|password for '[^'\n]{1,200}'|^(?:enter )?(?:password|"
         r"passphrase))[ \t]*:[ \t]*" + _V, ("'s password", "[sudo]", "passphrase for",
                                             "password for", "password:", "passphrase:"),
         "strong", flags=re.MULTILINE,
         starts=("'s password", "[sudo]", "password", "passphrase", "enter ")),
    # Basic auth in any spelling, recognised by its decoded ``user:password``.
    _ctx("basic-auth", r"basic(?<![a-z0-9_]basic)[ \t]+([a-z0-9+/]{6,}={0,2})(?![a-z0-9+/=])",
         ("basic",), "b64cred"),
    _ctx("password", r"(?:auth[ \t]*=[ \t]*\(|httpbasicauth\()[ \t]*\\?[\"'][^\"'\\\n]{1,64}"
         r"\\?[\"'][ \t]*,[ \t]*" + _V, ("auth=(", "auth = (", "httpbasicauth("), "strong"),
    # Authorization: token v (GitHub), and custom key headers such as X-Goog-Api-Key.
    _ctx("api-key-header", r"authorization\\?[\"']?[ \t]*:[ \t]*[\"']?(?:token|apikey|key|"
         r"sso-key|digest)[ \t]+" + _V, ("authorization",), "named"),
    _ctx("api-key-header", r"x-(?<![\w-]x-)[a-z\-]*(?:key|token|secret|auth)\\?[\"']?[ \t]*:[ \t]*"
         + _V, ("x-",), "named"),
    # Prose an agent writes: "`MONGO_URI` is set to `v` in your environment".
    # (The match starts at the name's last word: a pattern with a literal start stays cheap.)
    _ctx("secret-in-prose", r"(?:key|token|secret|password|passwd|pwd|uri|url|dsn|credentials?)"
         r"`?[ \t]+(?:is|was)[ \t]+(?:set|configured)[ \t]+to[ \t]+" + _V,
         ("is set to", "was set to", "is configured to", "was configured to"), "named",
         starts=("key", "token", "secret", "password", "passwd", "pwd", "uri", "url", "dsn",
                 "credential")),
    # An error naming what it held: "last token tried: v", "api key used = v".
    _ctx("labelled-token", r"(?:token|api[-_ ]?key|secret|password)[ \t]+(?:tried|used|sent|"
         r"given)[ \t]*[:=][ \t]*" + _V,
         tuple(f"{w} {v}" for w in ("token", "key", "secret", "password")
               for v in ("tried", "used", "sent", "given")), "named",
         starts=("token", "api", "secret", "password")),
]


def b64cred(value: str) -> bool:
    """True when ``value`` is base64 of ``user:password`` (Basic auth, Docker ``auth``)."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    user, sep, password = text.partition(":")
    return bool(sep and user and password) and text.isprintable()


_CHECKS = {**CHECKS, "b64cred": b64cred}


def context_hits(text: str, low: str, contexts: Iterable[Context],
                 gated: bool = True) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every context value in ``text`` that passes its check.

    Args:
        text: The text.
        low: ``text.lower()``.
        contexts: The rules to run (those with a hint in the text), in table order.
        gated: Try a rule with ``starts`` only there (tests turn this off).
    """
    same = len(low) == len(text)
    for c in contexts:
        if c.fold:
            source, pattern = (low, c.pattern) if same else (text, c.folded)
        else:
            source, pattern = text, c.pattern
        check = _CHECKS[c.strength]
        if gated and c.starts and c.fold and same:  # ``starts`` are lower case: on ``low``
            found: Iterable[re.Match[str]] = anchored(pattern, low, occurrences(low, c.starts))
        else:
            found = pattern.finditer(source)
        for m in found:
            gi = next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i) is not None),
                      0)
            if not gi:
                continue
            start, end = m.span(gi)
            if check(text[start:end]):
                yield c.kind, start, end


# A secret word, then within 40 characters of the same line a long random token: error
# messages such as "authentication failed; last token tried: `v`" or "invalid x-api-key (v)".
# Between the two only words and light punctuation: a comma, a brace or a backslash means
# the token belongs to the next field of a record (``"output_tokens": 3, "id": "resp_..."``).
_NEAR_WORD = re.compile(r"(?:passw(?:or)?d|passphrase|token|secret|api[-_ ]?key|key|"
                        r"auth[a-z]*|credentials?)(?![\w/])")
_BEFORE_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_/")
_BETWEEN = re.compile(r"[\w \t:=(\"'`\[.\-]*")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-.])[A-Za-z0-9+/=_\-.]{16,512}(?![A-Za-z0-9+/=_\-.])")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
_SPLIT = re.compile(r"[_\-]")
NEAR_HINTS = ("pass", "token", "secret", "key", "auth", "credential")
_NEAR_STARTS = ("pass", "token", "secret", "key", "auth", "cred")
"""Every ``_NEAR_WORD`` match starts with one of these (or with ``api`` before a ``key``)."""
_NEAR_SPELLINGS = ("passwd", "password", "passphrase", "token", "secret", "apikey", "api-key",
                   "api_key", "api key", "key", "credential", "credentials")
NEAR_STARTS_AT: tuple[tuple[str, int], ...] = (
    *((re.escape(w) + "[^a-z0-9_/]", len(w) + 1) for w in _NEAR_SPELLINGS),
    *((re.escape(w) + "$", len(w)) for w in _NEAR_SPELLINGS),
    ("auth", 4),  # ``auth[a-z]*``: a word of any length, so every ``auth``
)
r"""Hyperscan patterns (matched ignoring case), each with its length, such that a ``_NEAR_WORD``
match starts only where one of them matches: each spelling of its word followed by what its
``(?![\w/])`` lets through. A character that is not ASCII reaches hyperscan as ``?``, which the
class lets through too. Where ``near_starts`` gives every occurrence of the word, these leave
out the ``tokens`` and ``keyboard`` of code: about a third of the tries."""
_WINDOW = 40


def near_starts(low: str, occ: dict[str, list[int]]) -> list[int]:
    """Sorted offsets where a ``_NEAR_WORD`` match can start, from ``occ`` (word -> offsets)."""
    starts: set[int] = set()
    for w in _NEAR_STARTS:
        starts.update(occ.get(w, ()))
    for k in occ.get("key", ()):  # api-key, api_key, api key, apikey
        if k >= 3 and low.startswith("api", k - 3):
            starts.add(k - 3)
        if k >= 4 and low[k - 1] in "-_ " and low.startswith("api", k - 4):
            starts.add(k - 4)
    return sorted(starts)


def _whole_word(low: str, start: int, end: int) -> str:
    while start > 0 and low[start - 1] in _WORD_CHARS:
        start -= 1
    while end < len(low) and low[end] in _WORD_CHARS:
        end += 1
    return low[start:end]


def near_word_hits(text: str, low: str, not_secret: frozenset[str],
                   starts: list[int]) -> Iterator[tuple[str, int, int]]:
    """Random-looking values close after a secret word (``secret-near-word``).

    Args:
        text: The text.
        low: ``text.lower()``.
        not_secret: Name words that make the secret word harmless (``public`` key).
        starts: ``near_starts(low, ...)``: the word is looked for only there.
    """
    if len(low) != len(text) or not starts:
        return
    pos = 0
    while True:
        m = search_from(_NEAR_WORD, low, starts, pos)
        if m is None:
            return
        end = pos = m.end()
        if m.start() and low[m.start() - 1] in _BEFORE_WORD:
            continue  # inside a word or a path (``tokens``, ``contrib/auth``)
        stop = min(len(text), end + _WINDOW + 512)
        nl = text.find("\n", end, stop)
        stop = nl if nl >= 0 else stop
        # The loop below stops at once unless a token starts close enough: most words have
        # none, so this is tested before the word's name is looked at. A token that counts
        # starts within the window, so its first 16 characters end before ``cut``: the
        # search stops there, and the token found is read whole (None: a run too long).
        cut = min(stop, end + _WINDOW + 16)
        first = _TOKEN.search(text, end, cut)
        if first is not None and first.end() == cut:
            first = _TOKEN.match(text, first.start(), stop)
        if (first is None or first.start() - end > _WINDOW
                or not _BETWEEN.fullmatch(text, end, first.start())):
            continue
        words = set(_SPLIT.split(_whole_word(low, m.start(), end)))
        if words & not_secret:
            continue
        for t in _TOKEN.finditer(text, end, stop):
            if t.start() - end > _WINDOW or not _BETWEEN.fullmatch(text, end, t.start()):
                break
            raw = t.group(0)
            value = raw.strip(".-=")
            # ``API_KEY=v`` reads as one token: the name is no part of the value (base64 pads
            # only at its end, stripped above).
            cut = value.rfind("=") + 1
            value = value[cut:]
            if ".." not in value and weak(value):
                a = t.start() + len(raw) - len(raw.lstrip(".-=")) + cut
                yield "secret-near-word", a, a + len(value)
                pos = a + len(value)
                break
