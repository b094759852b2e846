"""Credentials inside URLs and request headers: only the secret part is a hit.

So ``postgres://app:[REDACTED:postgres-password]@db:5432/app`` still tells where it pointed.
"""

from __future__ import annotations

from collections.abc import Iterable

from .hits import SecretHit
from .rules import Rule, matches, rule
from .values import is_placeholder

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


def _url_password_ok(user: str, password: str) -> bool:
    """A URL password is a secret unless it is a template, a stock value or the user again."""
    if "${" in user or "${" in password or "{" in password:
        return False
    if password in ("*", "***", "****") or password == user:
        return False
    return not is_placeholder(password)


def header_hits(text: str, low: str, rules: Iterable[Rule]) -> list[SecretHit]:
    """The header values (and ``curl -u`` passwords) that ``rules`` find in ``text``."""
    hits: list[SecretHit] = []
    for r in rules:
        for m in matches(r, text, low):
            if r.kind == "curl-user-password" and m.start() > 0 and (
                not text[m.start() - 1].isspace()
            ):
                continue
            if not is_placeholder(text[m.start(1):m.end(1)]):
                hits.append(SecretHit(r.kind, *m.span(1)))
    return hits


def url_hits(text: str) -> list[SecretHit]:
    """The passwords of ``scheme://user:password@host`` URLs, typed by their scheme."""
    hits: list[SecretHit] = []
    for m in _URL_CRED.pattern.finditer(text):
        if not _url_password_ok(m.group(1), m.group(2)):
            continue
        a = m.start()
        while a > 0 and text[a - 1] in _SCHEME_CHARS:
            a -= 1
        kind = _SCHEME_KIND.get(text[a:m.start()].lower(), "url-password")
        hits.append(SecretHit(kind, m.start(2), m.end(2)))
    return hits
