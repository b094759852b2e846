"""The one gate every byte leaving the machine (or written to disk) goes through.

Secrets become typed placeholders such as ``[REDACTED:github-token]``; the text around them is
kept so a redacted log still reads well. Detection is a table of compiled regexes (one per kind)
run only when a cheap substring hint is present, plus name-aware rules for ``NAME=value`` style
assignments. No third-party detector is used: detect-secrets scans line by line through ~25
plugin objects, reports values rather than spans and misses several modern token shapes
(Anthropic, OpenAI project keys, Hugging Face, multi-line PEM inside JSON strings), while this
gate runs on every prompt and must be fast.

Callers:
- ``redact(text)`` for any outgoing or written text;
- ``redact_value(obj)`` for JSON-like structures (keys stay, string values are redacted, values
  under secret-like keys are redacted whole);
- ``scan(text)`` for the hits themselves (used by the draft screen and the CLI summary).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

PLACEHOLDER_PREFIX = "[REDACTED:"


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


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    """Lower-case substrings, one of which must be in the lowered text before the regex runs."""
    group: int = 0
    """Regex group holding the secret (0 = whole match)."""
    folded: re.Pattern[str] | None = None
    """Case-insensitive rules: ``pattern`` is written in lower case and runs on the lowered
    text (``re`` skips ahead on a literal first character only without IGNORECASE, 10x
    faster); ``folded`` is the IGNORECASE twin for text whose length changes when lowered."""


def _r(kind: str, pattern: str, hints: Iterable[str], group: int = 0, fold: bool = False) -> _Rule:
    folded = re.compile(pattern, re.IGNORECASE) if fold else None
    return _Rule(kind, re.compile(pattern), tuple(h.lower() for h in hints), group, folded)


def _matches(rule: _Rule, text: str, low: str) -> Iterator[re.Match[str]]:
    if rule.folded is None:
        return rule.pattern.finditer(text)
    if len(low) == len(text):
        return rule.pattern.finditer(low)
    return rule.folded.finditer(text)


# Token shapes with a distinctive prefix; the tails use lower bounds so a slightly different
# length still matches. The left word boundary is checked in ``scan`` rather than with a
# lookbehind, because a pattern that starts with a literal lets ``re`` skip ahead fast (3x).
_B = ""
_E = r"(?![A-Za-z0-9_\-])"
_PREFIXED: list[_Rule] = [
    _r("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|ANPA|AGPA)"
       r"[A-Z0-9]{16}(?![A-Z0-9])", ["akia", "asia", "abia", "acca", "aida", "aroa", "anpa",
                                      "agpa"]),
    _r("aws-secret-access-key", r"(?:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*"
       r"[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", ["secret_access_key", "secretaccesskey",
                                                      "secretaccess"], 1, True),
    _r("google-api-key", _B + r"AIza[0-9A-Za-z_\-]{20,}" + _E, ["aiza"]),
    _r("google-oauth-client-secret", _B + r"GOCSPX-[0-9A-Za-z_\-]{20,}" + _E, ["gocspx-"]),
    _r("google-oauth-token", _B + r"ya29\.[0-9A-Za-z_\-]{20,}" + _E, ["ya29."]),
    _r("github-token", _B + r"ghp_[A-Za-z0-9]{16,}" + _E, ["ghp_"]),
    _r("github-oauth-token", _B + r"gho_[A-Za-z0-9]{16,}" + _E, ["gho_"]),
    _r("github-user-token", _B + r"ghu_[A-Za-z0-9]{16,}" + _E, ["ghu_"]),
    _r("github-app-token", _B + r"ghs_[A-Za-z0-9]{16,}" + _E, ["ghs_"]),
    _r("github-refresh-token", _B + r"ghr_[A-Za-z0-9]{16,}" + _E, ["ghr_"]),
    _r("github-fine-grained-token", _B + r"github_pat_[A-Za-z0-9_]{16,}" + _E, ["github_pat_"]),
    _r("gitlab-token", _B + r"gl(?:pat|dt|ptt|oas|rt|cbt|ft|imt|agent)-[A-Za-z0-9_\-]{16,}" + _E,
       ["glpat-", "gldt-", "glptt-", "gloas-", "glrt-", "glcbt-", "glft-", "glimt-",
        "glagent-"]),
    _r("bitbucket-app-password", _B + r"ATBB[A-Za-z0-9_=.\-]{20,}" + _E, ["atbb"]),
    _r("atlassian-api-token", _B + r"ATATT3[A-Za-z0-9_=\-]{20,}" + _E, ["atatt3"]),
    _r("slack-token", _B + r"xox[abposr]-[0-9A-Za-z\-]{10,}" + _E, ["xoxb-", "xoxa-", "xoxp-",
                                                                      "xoxo-", "xoxs-",
                                                                      "xoxr-"]),
    _r("slack-app-token", _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}" + _E, ["xapp-"]),
    _r("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
       r"[A-Za-z0-9/_\-]{20,}", ["hooks.slack.com"]),
    _r("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
       r"\d+/[A-Za-z0-9_\-]{20,}", ["/api/webhooks/"]),
    _r("discord-bot-token", _B + r"[MNO][A-Za-z\d_\-]{23,27}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]"
       r"{27,40}" + _E, ["."]),
    _r("telegram-bot-token", r"(?<![\w:])\d{8,10}:AA[0-9A-Za-z_\-]{33}" + _E, [":aa"]),
    _r("stripe-secret-key", _B + r"sk_(?:live|test)_[0-9A-Za-z]{12,}" + _E, ["sk_live_",
                                                                          "sk_test_"]),
    _r("stripe-restricted-key", _B + r"rk_(?:live|test)_[0-9A-Za-z]{12,}" + _E,
       ["rk_live_", "rk_test_"]),
    _r("stripe-publishable-key", _B + r"pk_live_[0-9A-Za-z]{20,}" + _E, ["pk_live_"]),
    _r("stripe-webhook-secret", _B + r"whsec_[0-9A-Za-z]{16,}" + _E, ["whsec_"]),
    _r("square-access-token", _B + r"(?:sq0atp|EAAA)[0-9A-Za-z_\-]{22,}" + _E,
       ["sq0atp", "eaaa"]),
    _r("square-oauth-secret", _B + r"sq0csp-[0-9A-Za-z_\-]{40,}" + _E, ["sq0csp-"]),
    _r("twilio-api-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", ["sk"]),
    _r("twilio-account-sid", r"AC[0-9a-f]{32}(?![A-Za-z0-9])", ["ac"]),
    _r("sendgrid-api-key", _B + r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{8,50}" + _E,
       ["sg."]),
    _r("mailgun-api-key", _B + r"key-[0-9a-f]{32}" + _E, ["key-"]),
    _r("anthropic-api-key", _B + r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{12,}" + _E,
       ["sk-ant-"]),
    _r("openai-project-key", _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}" + _E,
       ["sk-proj-", "sk-svcacct-", "sk-admin-"]),
    _r("openai-api-key", _B + r"sk-[A-Za-z0-9]{32,}" + _E, ["sk-"]),
    _r("huggingface-token", _B + r"hf_[A-Za-z0-9]{24,}" + _E, ["hf_"]),
    _r("groq-api-key", _B + r"gsk_[A-Za-z0-9]{24,}" + _E, ["gsk_"]),
    _r("xai-api-key", _B + r"xai-[A-Za-z0-9]{32,}" + _E, ["xai-"]),
    _r("perplexity-api-key", _B + r"pplx-[A-Za-z0-9]{40,}" + _E, ["pplx-"]),
    _r("replicate-api-token", _B + r"r8_[A-Za-z0-9]{24,}" + _E, ["r8_"]),
    _r("npm-token", _B + r"npm_[A-Za-z0-9]{20,}" + _E, ["npm_"]),
    _r("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_\-]{16,}" + _E, ["pypi-age"]),
    _r("rubygems-api-key", _B + r"rubygems_[0-9a-f]{48}" + _E, ["rubygems_"]),
    _r("docker-hub-token", _B + r"dckr_pat_[A-Za-z0-9_\-]{12,}" + _E, ["dckr_pat_"]),
    _r("shopify-token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, ["shpat_", "shpca_",
                                                                           "shppa_", "shpss_"]),
    _r("digitalocean-token", _B + r"do[opr]_v1_[a-f0-9]{20,}" + _E, ["_v1_"]),
    _r("databricks-token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E, ["dapi"]),
    _r("linear-api-key", _B + r"lin_api_[A-Za-z0-9]{40}" + _E, ["lin_api_"]),
    _r("notion-token", _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E,
       ["secret_", "ntn_"]),
    _r("postman-api-key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E, ["pmak-"]),
    _r("vault-token", _B + r"hv[sb]\.[A-Za-z0-9_\-]{20,}" + _E, ["hvs.", "hvb."]),
    _r("doppler-token", _B + r"dp\.(?:pt|st|sa|ct|scim)\.[A-Za-z0-9]{40,}" + _E, ["dp."]),
    _r("pulumi-token", _B + r"pul-[a-f0-9]{40}" + _E, ["pul-"]),
    _r("grafana-token", _B + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"
       + _E, ["glsa_", "glc_"]),
    _r("newrelic-api-key", _B + r"NRA[KI]-[A-Z0-9]{27}" + _E, ["nrak-", "nrai-"]),
    _r("sentry-token", _B + r"sntr[ysu]_[A-Za-z0-9_=+/]{40,}" + _E, ["sntrys_", "sntryu_"]),
    _r("supabase-token", _B + r"sbp_[a-f0-9]{40}" + _E, ["sbp_"]),
    _r("tailscale-key", _B + r"tskey-[a-z]+-[A-Za-z0-9\-]{20,}" + _E, ["tskey-"]),
    _r("terraform-cloud-token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,}" + _E,
       [".atlasv1."]),
    _r("alibaba-access-key-id", _B + r"LTAI[A-Za-z0-9]{20}" + _E, ["ltai"]),
    _r("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ["age-secret-key-1"]),
    _r("jwt", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{10,}" + _E,
       ["eyj"]),
    _r("azure-storage-key", r"accountkey=([A-Za-z0-9+/]{40,}={0,2})", ["accountkey="], 1, True),
    _r("azure-shared-access-key", r"sharedaccesskey=([A-Za-z0-9+/]{30,}={0,2})",
       ["sharedaccesskey="], 1, True),
    _r("azure-sas-token", r"[?&;]sig=([A-Za-z0-9%+/=]{30,})", ["sig="], 1),
    _r("gcp-private-key-id", r"private_key_id\\?\"\s*:\s*\\?\"([0-9a-f]{40})",
       ["private_key_id"], 1),
]

# Multi-line private keys: real newlines, or ``\n`` escapes when the key sits in a JSON string.
# An unterminated block (cut by truncation) is redacted to the end of its base64 run.
_NL = r"(?:\\r|\\n|\s)"
_PEM: list[_Rule] = [
    _r("openssh-private-key", r"-----BEGIN OPENSSH PRIVATE KEY-----(?:[\s\S]{0,20000}?-----END "
       r"OPENSSH PRIVATE KEY-----|(?:[A-Za-z0-9+/=]|" + _NL + r")*)", ["-----begin openssh"]),
    _r("pgp-private-key", r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?:[\s\S]{0,40000}?-----END PGP "
       r"PRIVATE KEY BLOCK-----|(?:[A-Za-z0-9+/=:. ]|" + _NL + r")*)", ["-----begin pgp private"]),
    _r("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]{0,20000}?-----END "
       r"(?:[A-Z0-9]+ )*PRIVATE KEY-----|(?:[A-Za-z0-9+/=]|" + _NL + r")*)", ["private key-----"]),
]

# Credentials inside URLs and headers: only the secret part is replaced, so
# ``postgres://app:[REDACTED:postgres-password]@db:5432/app`` still tells where it pointed.
_URL_CRED = _r(
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
_HEADER_RULES: list[_Rule] = [
    _r("bearer-token", r"bearer\s+([A-Za-z0-9._~+/=\-]{12,})", ["bearer"], 1, True),
    _r("basic-auth", r"authorization[\"']?\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}={0,2})",
       ["basic"], 1, True),
    _r("api-key-header", r"(?:x-api-key|x-goog-api-key|api-key|x-auth-token)[\"']?\s*:\s*"
       r"[\"']?([A-Za-z0-9._~+/=\-]{12,})", ["api-key", "x-auth-token"], 1, True),
    _r("curl-user-password", r"-(?:u|-user)\s+[\"']?[^\s:\"']{1,64}:([^\s\"']{3,128})",
       ["-u", "--user"], 1),
]

# ``NAME = value`` assignments (.env, shell, YAML, JSON, Python). Two strengths:
# names that are always secret (password, *_secret, *_token, api keys) get any literal redacted;
# looser names (*_key, auth, credential) only when the value looks random. The regex starts at
# the keyword (a fast first-character scan) and the rest of the name is read backwards in Python,
# because a leading ``[\w.-]*`` made the pattern retry at every character (7x slower).
_STRONG_NAME = (
    r"[A-Za-z0-9_.\-]*(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth[_\-]?key|credentials?)"
)
# Quoted (also ``\"...\"`` inside a JSON string), single-quoted, or bare.
_VALUE = r"(?:\\\"([^\"\\\n]{1,512})\\\"|\"([^\"\n]{1,512})\"|"
_VALUE += r"'([^'\n]{1,512})'|([^\s\"'`,;)}\]]{1,512}))"
_ASSIGN = _r(
    "secret-assignment",
    r"(passw(?:or)?d|passphrase|pwd|secret|token|key|auth|credentials?|cred|salt)\\?[\"']?"
    r"(?:\s*[:=]\s*|\s+=>\s+)" + _VALUE,
    ["pass", "pwd", "secret", "token", "key", "auth", "cred", "salt"], 0, True,
)
_TOKEN_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_STRONG_RE = re.compile(r"(?i)(?:" + _STRONG_NAME + r")\Z")
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
     "remaining", "used", "per", "stats", "tokenizer", "pubkey"}
)
# Values that are references, placeholders or code, not literals.
_NOT_LITERAL = re.compile(
    r"(?i)^(?:\$|%\(|%[A-Z_]+%|\{\{|<|\*+$|x+$|\.\.\.|null$|none$|nil$|true$|false$|undefined$|"
    r"changeme$|your[_\-]|example|placeholder|redacted|\[REDACTED|os\.|env\.|process\.env|"
    r"getenv|settings\.|config\.|self\.|args\.|secrets\.|vault:|ref\+|\(|-----)"
)
_CODEY = re.compile(r"[()\[\]{}]|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")

def _entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str) -> bool:
    """True when ``value`` looks like a generated secret rather than a word, number or path."""
    if len(value) < 16 or " " in value:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                   any(c.isdigit() for c in value)))
    if classes < 2:
        return False
    if "/" in value and value.count("/") > 2:  # a path, not a key
        return False
    return _entropy(value) >= 3.5


def _assignment_kind(name: str, value: str) -> str | None:
    """Kind for ``name = value``, or None when the value is not a secret literal."""
    if not value or _NOT_LITERAL.match(value) or value.startswith(PLACEHOLDER_PREFIX):
        return None
    words = {w.lower() for w in _NAME_SPLIT.split(name) if w}
    if words & _NOT_SECRET_WORDS:
        return None
    strong = _STRONG_RE.search(name) is not None
    if _CODEY.search(value):
        return None
    if strong:
        if "passw" in name.lower() or "pwd" in name.lower() or "passphrase" in name.lower():
            return "password" if len(value) >= 3 else None
        if len(value) >= 8 and (looks_random(value) or any(c.isdigit() for c in value)):
            return "secret-assignment"
        return None
    return "high-entropy-secret" if looks_random(value) else None


def _name_before(text: str, m: re.Match[str]) -> str:
    """The whole identifier whose tail the keyword match is (``DB_PASSWORD``)."""
    a = m.start()
    while a > 0 and text[a - 1] in _NAME_CHARS:
        a -= 1
    return text[a:m.end(1)]


_ALL_HINTS: tuple[str, ...] = tuple(sorted(
    {h for rule in (*_PEM, *_PREFIXED, *_HEADER_RULES, _ASSIGN) for h in rule.hints}
))


def scan(text: str) -> list[SecretHit]:
    """Find secrets in ``text``: non-overlapping hits sorted by start offset.

    Args:
        text: Any text (a prompt, a command, a log line, a whole file).

    Returns:
        The hits; where two detectors overlap the earlier, then longer, one wins.
    """
    if not text:
        return []
    low = text.lower()
    # One pass over the distinct hints, then a set test per rule: cheaper than ~75 any()
    # generators on the short texts (error lines, commands) that make most of the calls.
    present = frozenset(h for h in _ALL_HINTS if h in low)
    if not present and "://" not in text:
        return []
    hits: list[SecretHit] = []
    for rule in _PEM:
        if not present.isdisjoint(rule.hints):
            hits.extend(SecretHit(rule.kind, *m.span()) for m in rule.pattern.finditer(text))
    for rule in _PREFIXED:
        if present.isdisjoint(rule.hints):
            continue
        for m in _matches(rule, text, low):
            start, end = m.span(rule.group)
            if rule.group == 0 and start > 0 and text[start - 1] in _TOKEN_CHARS and not (
                start >= 2 and text[start - 2] == "\\"  # ``\nghp_...`` inside a JSON string
            ):
                continue
            hits.append(SecretHit(rule.kind, start, end))
    for rule in _HEADER_RULES:
        if not present.isdisjoint(rule.hints):
            for m in _matches(rule, text, low):
                if rule.kind == "curl-user-password" and m.start() > 0 and (
                    not text[m.start() - 1].isspace()
                ):
                    continue
                if not _NOT_LITERAL.match(text[m.start(1):m.end(1)]):
                    hits.append(SecretHit(rule.kind, *m.span(1)))
    if "://" in text and "@" in text:
        for m in _URL_CRED.pattern.finditer(text):
            pw = m.group(2)
            if pw.startswith(("[REDACTED", "$", "{", "<")) or pw in ("*", "***", "****"):
                continue
            a = m.start()
            while a > 0 and text[a - 1] in _SCHEME_CHARS:
                a -= 1
            kind = _SCHEME_KIND.get(text[a:m.start()].lower(), "url-password")
            hits.append(SecretHit(kind, m.start(2), m.end(2)))
    if not present.isdisjoint(_ASSIGN.hints):
        for m in _matches(_ASSIGN, text, low):
            gi = next(i for i in (2, 3, 4, 5) if m.group(i) is not None)
            akind = _assignment_kind(_name_before(text, m), text[m.start(gi):m.end(gi)])
            if akind:
                hits.append(SecretHit(akind, m.start(gi), m.end(gi)))
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
    hits = scan(text)
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


def _secret_name(name: str) -> bool:
    words = {w.lower() for w in _NAME_SPLIT.split(name) if w}
    return _STRONG_RE.search(name) is not None and not (words & _NOT_SECRET_WORDS)


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
            kind = _assignment_kind(_name, obj)
            if kind and "\n" not in obj and not scan(obj):
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
    names = {r.kind for r in (*_PEM, *_PREFIXED, *_HEADER_RULES)}  # noqa: C416
    names.update(_SCHEME_KIND.values())
    names.update({"url-password", "password", "secret-assignment", "high-entropy-secret"})
    return sorted(names)
