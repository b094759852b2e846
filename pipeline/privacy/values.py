"""When a value is a secret: it looks like one, whatever the name next to it says.

Three strengths, one per kind of context a rule recognises:

- ``strong``: a credential position (``--password v``, ``sshpass -p v``, a netrc ``password``,
  an echoed password prompt, ``DB_PASSWORD=v`` in an env file): any literal that is not a
  placeholder, a reference or a type name;
- ``named``: a secret-like name in code or prose (``password = "v"``, ``api_token: v``): the
  value must also look generated (mixed characters, not words), so test fixtures such as
  ``password="testpass"`` and annotations such as ``password: str`` stay;
- ``weak``: a loose name (``*_key``, ``auth``) or a secret word nearby: only a long random
  value, never a hex digest, a UUID or a path.
"""

from __future__ import annotations

import math
import re
from collections import Counter

PLACEHOLDER_PREFIX = "[REDACTED:"

# Values written in docs, tests and examples in place of a real credential.
_PLACEHOLDER_WORDS = frozenset({
    "password", "passwd", "pass", "pw", "pwd", "secret", "token", "key", "apikey", "api_key",
    "changeme", "changeit", "example", "test", "testing", "testpass", "testpassword", "dummy",
    "fake", "sample", "placeholder", "redacted", "admin", "root", "postgres", "mysql", "user",
    "username", "guest", "default", "foo", "bar", "foobar", "baz", "mypassword", "mysecret",
    "secret123", "password123", "password1", "pass123", "letmein", "qwerty", "123456",
    "12345678", "abc123", "value", "string", "str", "bytes", "int", "bool", "any", "object",
    "none", "null", "nil", "true", "false", "undefined", "required", "optional", "hidden",
    "masked", "empty", "todo", "tbd", "n/a", "sk-...", "xxx", "your-token", "your-key",
})
# References, templates and code rather than literals.
_NOT_LITERAL = re.compile(
    r"(?i)^(?:\$|%\(|%[A-Z_]+%|\{\{|\{|<|\*+$|x{3,}$|\.\.\.|•+$|your[_\-]|example|placeholder|"
    r"redacted|\[REDACTED|os\.|env\.|process\.env|getenv|settings\.|config\.|self\.|args\.|"
    r"secrets\.|vault:|ref\+|\(|-----|@|&|!ref|!secret|file:|keyring:|op://|sm://|arn:)"
)
_CODEY = re.compile(r"[()\[\]{}]|^[A-Za-z_][A-Za-z0-9_]*(?:\??\.[A-Za-z_][A-Za-z0-9_]*)+$")
_WORD_TOKENS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_HEX_DIGEST = re.compile(r"[0-9a-f]{7,128}|[0-9A-F]{7,128}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ALL_CAPS_NAME = re.compile(r"[A-Z][A-Z0-9_\-]*")  # PASSWORD, YOUR_TOKEN: help-text slots
_CAPS_WORDS = re.compile(r"[A-Z]+(?:[_\-][A-Z]+)+")  # OAUTH-TOKEN-TEXT: a slot, never generated
_SAME_CHAR = re.compile(r"(.)\1*")
# A token's prefix with its tail left out: ``github_pat_xxxx``, ``phc_xxx``, ``sk-...``.
_PREFIX_THEN_SLOT = re.compile(r"(?:[A-Za-z0-9]+[_\-])+(?:(.)\1{2,}|…)")
# A digest labelled with name words: a cache key (``golangci-lint.cache-Linux-2927-<sha1>``,
# ``node-cache-Linux-x64-npm-<sha256>``); labels in one case each, as names are.
_LABELLED_DIGEST = re.compile(
    r"(?:(?:(?:[A-Za-z][a-z]*|[A-Z]+)\d*|\d+)[._\-]){2,}[0-9a-f]{7,128}")
# A path's last part is a file name: ``r5/ce-work-beta/SKILL.md``.
_FILE_TAIL = re.compile(r"/[\w\-]+\.[a-z][a-z0-9]{0,4}$")
_FIXTURE_WORDS = ("test", "example", "dummy", "fake", "mock", "sample", "changeme", "placeholder",
                  "secret", "password", "your", "demo", "invalid", "foobar")
_ETH_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                any(c.isdigit() for c in value),
                any(not c.isalnum() for c in value)))


def wordy(value: str) -> bool:
    """True for identifiers and words (``Uint8Array``, ``testEncryptedKey``, ``oauth2_token``).

    Generated secrets switch between letters, cases and digits every one or two characters;
    names keep runs of letters three or more long.
    """
    words = _WORD_TOKENS.findall(value)
    letters = sum(len(w) for w in words)
    if not words or letters < len(value) * 0.5:
        return False
    return letters / len(words) >= 3.5


def is_placeholder(value: str) -> bool:
    """True for a reference, a template, a type name or a stock example value."""
    low = value.lower().lstrip(":-")  # ``${VAR:-default}``
    if (low in _PLACEHOLDER_WORDS or low.strip("'\"`") in _PLACEHOLDER_WORDS
            or bool(_NOT_LITERAL.match(value)) or value.startswith(PLACEHOLDER_PREFIX)
            or _SAME_CHAR.fullmatch(value) is not None
            or _PREFIX_THEN_SLOT.fullmatch(value) is not None
            or _CAPS_WORDS.fullmatch(value) is not None):
        return True
    # ``test-secret-token``, ``my-example-key``: a fixture, unless the rest is random
    return any(w in low for w in _FIXTURE_WORDS) and not looks_random(value)


def reads_as_path(value: str) -> bool:
    """``/home/u/app``, ``./src/main.go``, ``~/.config/x``: a location, not a credential."""
    return value.count("/") >= 2 or bool(_FILE_TAIL.search(value)) or value.startswith(
        ("~/", "./", "../"))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


LEARN_STRONG = frozenset({
    "password", "credential-flag", "netrc-password", "docker-auth", "npm-auth",
    "password-prompt", "basic-auth", "curl-user-password", "url-password", "url-basic-auth"})
"""Kinds found in a credential position (a password flag, a prompt, a URL's password): their
value is a secret whatever it reads like (``hunter2hunter2``), unless it is a path."""
LEARN_NEAR = frozenset({"secret-near-word", "high-entropy-secret"})
"""Kinds found only near a secret word: learned only when the value looks generated."""


def learnable(value: str, kind: str, shape: bool = False) -> bool:
    """Whether session memory may learn ``value`` (and replace it everywhere after).

    A guess must never be learned. A known key ``shape`` always is; a value in a credential
    position unless it is a path; a value found only near a secret word only when it looks
    generated; any other (an assignment, a header, prose) only when it does not read as an
    identifier, a program name or a path, unless it looks generated (``golangci-lint`` near a
    ``…_TOKEN`` is a name; ``abcD3f9Qx…`` is not).
    """
    if shape:
        return True
    if reads_as_path(value) or value.count(" ") >= 3:  # a location, or a sentence
        return False
    if kind in LEARN_STRONG or kind.endswith("-password"):
        return True
    if " " in value:
        return False
    if kind in LEARN_NEAR:
        return looks_random(value) and not wordy(value)
    # A name reads as one even when long enough to look random (``authorization_details_v2``).
    return not wordy(value) and (looks_random(value) or not _NAME.fullmatch(value))


def looks_random(value: str) -> bool:
    """True when ``value`` looks like a generated secret rather than a word, number or path."""
    if len(value) < 16 or " " in value:
        return False
    if sum((any(c.islower() for c in value), any(c.isupper() for c in value),
            any(c.isdigit() for c in value))) < 2:
        return False
    if "/" in value and (value.count("/") > 2 or _FILE_TAIL.search(value)):  # a path, not a key
        return False
    return entropy(value) >= 3.5


def strong(value: str) -> bool:
    """A literal in a credential position: anything but a placeholder, slot, reference or path."""
    if len(value) < 3 or "\\" in value or is_placeholder(value) or reads_as_path(value):
        return False
    if _ALL_CAPS_NAME.fullmatch(value) and not any(c.isdigit() for c in value):
        return False  # ``--password PASSWORD`` in help text
    return not (_CODEY.search(value) and _classes(value) < 4)


def named(value: str, min_len: int = 8) -> bool:
    """A literal under a secret-like name: it must look generated, not written by hand."""
    # Every test must pass: the cheap ones that reject most values (code, words) go first.
    if len(value) < min_len or "\\" in value or _CODEY.search(value) or wordy(value):
        return False
    if _classes(value) < 2 or is_placeholder(value):
        return False
    return entropy(value) >= (3.0 if len(value) < 16 else 3.3)


def weak(value: str) -> bool:
    """A long random value near a loose name or a secret word; never a digest, UUID or path."""
    # Every test must pass: the cheap ones that reject most values (code, words) go first.
    if _CODEY.search(value) or wordy(value) or not looks_random(value) or is_placeholder(value):
        return False
    return not (_HEX_DIGEST.fullmatch(value) or _UUID.search(value)
                or _ETH_ADDRESS.fullmatch(value) or _LABELLED_DIGEST.fullmatch(value))


CHECKS = {"strong": strong, "named": named, "weak": weak}
"""Strength name -> the test a value of that context must pass."""
