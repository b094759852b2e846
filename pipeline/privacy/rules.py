"""Secret shapes: tokens with a distinctive prefix, and private key blocks.

A shape is enough on its own: ``ghp_`` followed by 36 characters is a GitHub token wherever it
appears. Each rule is a compiled regex run only when one of its cheap lower-case hints is in
the text. Context rules (names, flags, files) live in ``contexts.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector: a regex, the hints that gate it, the group holding the secret."""

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
    gate: re.Pattern[str] | None = None
    """A cheap regex every match contains: the rule runs only on a text where it is found."""


def rule(kind: str, pattern: str, hints: Iterable[str], group: int = 0, fold: bool = False,
         gate: str | None = None) -> Rule:
    """Compile a ``Rule`` (``fold``: ``pattern`` is lower case and matches case-insensitively)."""
    folded = re.compile(pattern, re.IGNORECASE) if fold else None
    return Rule(kind, re.compile(pattern), tuple(h.lower() for h in hints), group, folded,
                re.compile(gate) if gate else None)


def matches(rule: Rule, text: str, low: str, gated: bool = True) -> Iterator[re.Match[str]]:
    """Matches of ``rule`` in ``text`` (``low`` is ``text.lower()``, offsets are shared).

    ``gated``: skip the rule when its ``gate`` is not in the text (tests turn this off).
    """
    if gated and rule.gate is not None and rule.gate.search(text) is None:
        return iter(())
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
PREFIXED: list[Rule] = [
    rule("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|ANPA|AGPA)"
       r"[A-Z0-9]{16}(?![A-Z0-9])", ["akia", "asia", "abia", "acca", "aida", "aroa", "anpa",
                                      "agpa"]),
    rule("aws-secret-access-key", r"(?:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*"
       r"[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", ["secret_access_key", "secretaccesskey",
                                                      "secretaccess"], 1, True),
    rule("google-api-key", _B + r"AIza[0-9A-Za-z_\-]{20,}" + _E, ["aiza"]),
    rule("google-oauth-client-secret", _B + r"GOCSPX-[0-9A-Za-z_\-]{20,}" + _E, ["gocspx-"]),
    rule("google-oauth-token", _B + r"ya29\.[0-9A-Za-z_\-]{20,}" + _E, ["ya29."]),
    rule("github-token", _B + r"ghp_[A-Za-z0-9]{16,}" + _E, ["ghp_"]),
    rule("github-oauth-token", _B + r"gho_[A-Za-z0-9]{16,}" + _E, ["gho_"]),
    rule("github-user-token", _B + r"ghu_[A-Za-z0-9]{16,}" + _E, ["ghu_"]),
    rule("github-app-token", _B + r"ghs_[A-Za-z0-9]{16,}" + _E, ["ghs_"]),
    rule("github-refresh-token", _B + r"ghr_[A-Za-z0-9]{16,}" + _E, ["ghr_"]),
    rule("github-fine-grained-token", _B + r"github_pat_[A-Za-z0-9_]{16,}" + _E, ["github_pat_"]),
    rule("gitlab-token", _B + r"gl(?:pat|dt|ptt|oas|rt|cbt|ft|imt|agent)-[A-Za-z0-9_\-]{16,}" + _E,
       ["glpat-", "gldt-", "glptt-", "gloas-", "glrt-", "glcbt-", "glft-", "glimt-",
        "glagent-"]),
    rule("bitbucket-app-password", _B + r"ATBB[A-Za-z0-9_=.\-]{20,}" + _E, ["atbb"]),
    rule("atlassian-api-token", _B + r"ATATT3[A-Za-z0-9_=\-]{20,}" + _E, ["atatt3"]),
    rule("slack-token", _B + r"xox[abposr]-[0-9A-Za-z\-]{10,}" + _E, ["xoxb-", "xoxa-", "xoxp-",
                                                                      "xoxo-", "xoxs-",
                                                                      "xoxr-"]),
    rule("slack-app-token", _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}" + _E, ["xapp-"]),
    rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
       r"[A-Za-z0-9/_\-]{20,}", ["hooks.slack.com"]),
    rule("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
       r"\d+/[A-Za-z0-9_\-]{20,}", ["/api/webhooks/"]),
    # ASCII only (base64url), not ``\d``: hyperscan then looks for it with fixed counts
    rule("discord-bot-token", _B + r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]"
         r"{27,40}" + _E, ["."], gate=r"\.[A-Za-z0-9_\-]{6}\."),  # "." is in most texts
    rule("telegram-bot-token", r"(?<![\w:])\d{8,10}:AA[0-9A-Za-z_\-]{33}" + _E, [":aa"]),
    rule("stripe-secret-key", _B + r"sk_(?:live|test)_[0-9A-Za-z]{12,}" + _E, ["sk_live_",
                                                                          "sk_test_"]),
    rule("stripe-restricted-key", _B + r"rk_(?:live|test)_[0-9A-Za-z]{12,}" + _E,
       ["rk_live_", "rk_test_"]),
    rule("stripe-publishable-key", _B + r"pk_live_[0-9A-Za-z]{20,}" + _E, ["pk_live_"]),
    rule("stripe-webhook-secret", _B + r"whsec_[0-9A-Za-z]{16,}" + _E, ["whsec_"]),
    rule("square-access-token", _B + r"(?:sq0atp|EAAA)[0-9A-Za-z_\-]{22,}" + _E,
       ["sq0atp", "eaaa"]),
    rule("square-oauth-secret", _B + r"sq0csp-[0-9A-Za-z_\-]{40,}" + _E, ["sq0csp-"]),
    rule("twilio-api-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", ["sk"]),
    rule("twilio-account-sid", r"AC[0-9a-f]{32}(?![A-Za-z0-9])", ["ac"]),
    rule("sendgrid-api-key", _B + r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{8,50}" + _E,
       ["sg."]),
    rule("mailgun-api-key", _B + r"key-[0-9a-f]{32}" + _E, ["key-"]),
    rule("anthropic-api-key", _B + r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{12,}" + _E,
       ["sk-ant-"]),
    rule("openai-project-key", _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}" + _E,
       ["sk-proj-", "sk-svcacct-", "sk-admin-"]),
    rule("openai-api-key", _B + r"sk-[A-Za-z0-9]{32,}" + _E, ["sk-"]),
    rule("huggingface-token", _B + r"hf_[A-Za-z0-9]{24,}" + _E, ["hf_"]),
    rule("groq-api-key", _B + r"gsk_[A-Za-z0-9]{24,}" + _E, ["gsk_"]),
    rule("xai-api-key", _B + r"xai-[A-Za-z0-9]{32,}" + _E, ["xai-"]),
    rule("perplexity-api-key", _B + r"pplx-[A-Za-z0-9]{40,}" + _E, ["pplx-"]),
    rule("replicate-api-token", _B + r"r8_[A-Za-z0-9]{24,}" + _E, ["r8_"]),
    rule("npm-token", _B + r"npm_[A-Za-z0-9]{20,}" + _E, ["npm_"]),
    rule("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_\-]{16,}" + _E, ["pypi-age"]),
    rule("rubygems-api-key", _B + r"rubygems_[0-9a-f]{48}" + _E, ["rubygems_"]),
    rule("docker-hub-token", _B + r"dckr_pat_[A-Za-z0-9_\-]{12,}" + _E, ["dckr_pat_"]),
    rule("shopify-token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, ["shpat_", "shpca_",
                                                                           "shppa_", "shpss_"]),
    rule("digitalocean-token", _B + r"do[opr]_v1_[a-f0-9]{20,}" + _E, ["_v1_"]),
    rule("databricks-token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E, ["dapi"]),
    rule("linear-api-key", _B + r"lin_api_[A-Za-z0-9]{40}" + _E, ["lin_api_"]),
    rule("notion-token", _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E,
       ["secret_", "ntn_"]),
    rule("postman-api-key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E, ["pmak-"]),
    rule("vault-token", _B + r"hv[sb]\.[A-Za-z0-9_\-]{20,}" + _E, ["hvs.", "hvb."]),
    rule("doppler-token", _B + r"dp\.(?:pt|st|sa|ct|scim)\.[A-Za-z0-9]{40,}" + _E, ["dp."]),
    rule("pulumi-token", _B + r"pul-[a-f0-9]{40}" + _E, ["pul-"]),
    rule("grafana-token", _B + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|"
         r"glc_[A-Za-z0-9+/]{32,}={0,2})" + _E, ["glsa_", "glc_"]),
    rule("newrelic-api-key", _B + r"NRA[KI]-[A-Z0-9]{27}" + _E, ["nrak-", "nrai-"]),
    rule("sentry-token", _B + r"sntr[ysu]_[A-Za-z0-9_=+/]{40,}" + _E, ["sntrys_", "sntryu_"]),
    rule("supabase-token", _B + r"sbp_[a-f0-9]{40}" + _E, ["sbp_"]),
    rule("tailscale-key", _B + r"tskey-[a-z]+-[A-Za-z0-9\-]{20,}" + _E, ["tskey-"]),
    rule("terraform-cloud-token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,}" + _E,
       [".atlasv1."]),
    rule("alibaba-access-key-id", _B + r"LTAI[A-Za-z0-9]{20}" + _E, ["ltai"]),
    rule("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ["age-secret-key-1"]),
    rule("jwt", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{10,}" + _E,
       ["eyj"]),
    rule("azure-storage-key", r"accountkey=([A-Za-z0-9+/]{40,}={0,2})", ["accountkey="], 1, True),
    rule("azure-shared-access-key", r"sharedaccesskey=([A-Za-z0-9+/]{30,}={0,2})",
       ["sharedaccesskey="], 1, True),
    rule("azure-sas-token", r"[?&;]sig=([A-Za-z0-9%+/=]{30,})", ["sig="], 1),
    rule("gcp-private-key-id", r"private_key_id\\?\"\s*:\s*\\?\"([0-9a-f]{40})",
       ["private_key_id"], 1),
]

# Multi-line private keys: real newlines, or ``\n`` escapes when the key sits in a JSON string.
# An unterminated block (cut by truncation) is redacted to the end of its base64 run.
_NL = r"(?:\\r|\\n|\s)"
PEM: list[Rule] = [
    rule("openssh-private-key", r"-----BEGIN OPENSSH PRIVATE KEY-----(?:[\s\S]{0,20000}?-----END "
       r"OPENSSH PRIVATE KEY-----|(?:[A-Za-z0-9+/=]|" + _NL + r")*)", ["-----begin openssh"]),
    rule("pgp-private-key", r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?:[\s\S]{0,40000}?-----END PGP "
       r"PRIVATE KEY BLOCK-----|(?:[A-Za-z0-9+/=:. ]|" + _NL + r")*)", ["-----begin pgp private"]),
    rule("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]{0,20000}?-----END "
       r"(?:[A-Z0-9]+ )*PRIVATE KEY-----|(?:[A-Za-z0-9+/=]|" + _NL + r")*)", ["private key-----"]),
]


SHAPE_KINDS: frozenset[str] = frozenset(r.kind for r in (*PREFIXED, *PEM))
"""Kinds found by a known key shape alone: strong enough to learn whatever the context."""
