"""Last check on a draft before it is written: secrets, injected instructions, ORF rules.

A playbook is read and followed by every future agent, so text an attacker planted in a log
(a web page, an issue body, tool output) must not ride through the model into one. A draft is
dropped, never repaired: each reason is a short readable string the caller records in the
ledger and the run summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..model import Draft
from ..privacy import leak_kinds
from ..safety import INJECTION

DESCRIPTION_MAX = 1024
DOMAIN_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}\Z")

# (label, pattern). Each aims at text telling a future agent to drop its rules, weaken checks,
# run remote code, send data out or widen trust. Labels are what the drop reason shows.
_OVERRIDES: list[tuple[str, re.Pattern[str]]] = [
    (label, re.compile(p, re.IGNORECASE))
    for label, p in [
        ("instruction override", r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+"
         r"|the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|existing|system|"
         r"original)?\s*(?:instructions?|rules|guidelines|guidance|directives|prompts?|policies|"
         r"constraints|safety)"),
        ("instruction override", r"\b(?:you are now|from now on,? you|new instructions?:|"
         r"system prompt:|act as (?:an? )?(?:unrestricted|jailbroken)|developer mode)"),
        ("disables checks", r"--no-verify\b|\bcore\.hooksPath\s*=?\s*/dev/null"),
        ("disables checks", r"\b(?:disable|skip|remove|delete|comment out|turn off|bypass)\s+"
         r"(?:all\s+|the\s+|any\s+)?(?:failing\s+)?(?:tests?|test suite|checks?|linters?|"
         r"pre-commit(?: hooks?)?|hooks?|ci|type ?checks?|security checks?|verification)\b"),
        ("disables checks", r"(?:pytest\b.*\s--(?:co|collect-only)\b.*&&\s*exit 0|\|\|\s*true\s*"
         r"#\s*skip|@pytest\.mark\.skip\b|\bSKIP_TESTS?=1|-DskipTests\b|--ignore-scripts\b)"),
        ("pipes a download into a shell", r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]*"
         r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b"),
        ("pipes a download into a shell", r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?"
         r"(?:python3?|perl|ruby|node)\b"),
        ("pipes a download into a shell", r"\b(?:iex|invoke-expression)\s*\(?\s*(?:\(?\s*)?"
         r"(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object\s+net\.webclient)"),
        ("pipes a download into a shell", r"\b(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b|"
         r"\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"),
        ("sends data to an outside address", r"\bcurl\b[^\n]*\s(?:-d|--data(?:-binary|-raw|"
         r"-urlencode)?|-F|--form|-T|--upload-file)\b[^\n]*https?://"),
        ("sends data to an outside address", r"\bcurl\b[^\n]*https?://[^\n]*\s(?:-d|--data"
         r"(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)\b"),
        ("sends data to an outside address", r"\bwget\b[^\n]*--post-(?:data|file)\b"),
        ("sends data to an outside address", r"\b(?:nc|ncat|netcat|socat)\b\s+(?:-\w+\s+)*"
         r"[A-Za-z0-9.\-]+\s+\d{2,5}\b|/dev/tcp/"),
        ("sends data to an outside address", r"\b(?:exfiltrat\w*|send (?:the |all |your )?"
         r"(?:secrets?|credentials?|keys?|tokens?|env(?:ironment)?(?: variables)?|\.env) to)\b"),
        ("adds a key or trust setting", r"authorized_keys\b"),
        ("adds a key or trust setting", r"\bgit\s+config\b[^\n]*\bcredential\.helper\b"),
        ("adds a key or trust setting", r"--trusted-host\b|\bnpm\s+config\s+set\s+strict-ssl\s+"
         r"false\b|\bstrict-ssl\s*=\s*false\b|\bsslVerify\s*=?\s*false\b|"
         r"\bhttp\.sslVerify\b|\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*0\b|\b--insecure\b|"
         r"\bverify\s*=\s*False\b|\bPYTHONHTTPSVERIFY\s*=\s*0\b"),
        ("adds a key or trust setting", r"\bapt-key\s+add\b|\bgpg\s+(?:--\S+\s+)*--import\b|"
         r"\brpm\s+--import\b|/etc/apt/trusted\.gpg|\[trusted=yes\]"),
        ("adds a key or trust setting", r"\bsudoers\b|\bNOPASSWD\b|\bvisudo\b"),
        ("adds a key or trust setting",
         r"\bchmod\s+(?:-R\s+)?0?777\b|\bchmod\s+(?:-R\s+)?a\+rwx\b"),
    ]
]


def _fields(draft: Draft) -> Iterator[tuple[str, str]]:
    for name in ("title", "description", "domain", "objective", "trap", "insight",
                 "validated_path", "domain_title", "domain_description"):
        value = getattr(draft, name)
        if isinstance(value, str) and value:
            yield name, value
    for i, kw in enumerate(draft.keywords):
        yield f"keywords[{i}]", kw
    for i, item in enumerate(draft.checklist):
        yield f"checklist[{i}]", item


def _quote(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def override_reasons(field: str, text: str) -> list[str]:
    """Reasons ``text`` (one field of a draft) carries an instruction that overrides rules.

    Args:
        field: Field name used in the reason (``insight``, ``checklist[2]``...).
        text: The field's text.

    Returns:
        One reason per matched pattern family, e.g.
        ``"instruction override: 'ignore previous instructions' in insight"``.
    """
    out: list[str] = []
    seen: set[str] = set()
    for label, pattern in (*INJECTION, *_OVERRIDES):
        m = pattern.search(text)
        if m and label not in seen:
            seen.add(label)
            out.append(f"{label}: '{_quote(m.group(0))}' in {field}")
    return out


def validation_reasons(draft: Draft) -> list[str]:
    """Reasons ``draft`` breaks the ORF rules a written EXP file must meet."""
    out: list[str] = []
    if not draft.title.strip():
        out.append("invalid: empty title")
    if not draft.description.strip():
        out.append("invalid: empty description")
    if len(draft.description) > DESCRIPTION_MAX:
        out.append(f"invalid: description is {len(draft.description)} chars (max "
                   f"{DESCRIPTION_MAX})")
    if not isinstance(draft.keywords, list) or not all(
        isinstance(k, str) and k.strip() for k in draft.keywords
    ):
        out.append("invalid: keywords must be a list of non-empty strings")
    if draft.complexity not in ("low", "medium", "high"):
        out.append(f"invalid: complexity {draft.complexity!r} (low|medium|high)")
    if not [c for c in draft.checklist if c.strip()]:
        out.append("invalid: no checklist item")
    if not DOMAIN_SLUG.match(draft.domain):
        out.append(f"invalid: domain {draft.domain!r} is not a slug [a-z0-9][a-z0-9-]{{0,63}}")
    return out


def screen_draft(draft: Draft) -> list[str]:
    """Reasons to drop ``draft`` before it is written; an empty list means it may be written.

    Checks every text field for credential-shaped literals (the redaction detectors), for
    instructions aimed at future agents that override their rules, and the ORF rules.

    Args:
        draft: The candidate playbook.

    Returns:
        Short readable reasons such as
        ``"credential-shaped literal (github-token) in validated_path"``.
    """
    reasons: list[str] = []
    for field, text in _fields(draft):
        for kind in leak_kinds(text):
            reasons.append(f"credential-shaped literal ({kind}) in {field}")
        reasons.extend(override_reasons(field, text))
    reasons.extend(validation_reasons(draft))
    return reasons
