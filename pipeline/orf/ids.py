"""Experience ids and domain slugs, checked before they ever become a path.

Both end up as path components under the store, so anything that could escape it
(``..``, ``/``, absolute paths, odd characters) is refused here, in one place.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable

from ..errors import InvalidIdentifier

DOMAIN_PATTERN = r"[a-z0-9][a-z0-9-]{0,63}"
EXP_ID_PATTERN = r"EXP-(\d{8})-(\d{4})"
DOMAIN_RE = re.compile(rf"\A{DOMAIN_PATTERN}\Z")
EXP_ID_RE = re.compile(rf"\A{EXP_ID_PATTERN}\Z")


def check_domain(domain: object) -> str:
    """Return ``domain`` if it is a lowercase slug, else raise ``InvalidIdentifier``.

    Args:
        domain: The candidate domain (category id), e.g. ``python-scripting``.

    Returns:
        The same string.

    Raises:
        InvalidIdentifier: When it is not a string matching ``[a-z0-9][a-z0-9-]{0,63}``.
    """
    if not isinstance(domain, str) or not DOMAIN_RE.match(domain):
        raise InvalidIdentifier(
            f"invalid domain {domain!r}: use a lowercase slug of letters, digits and '-' "
            "(1-64 characters, e.g. 'python-scripting')"
        )
    return domain


def check_exp_id(exp_id: object) -> str:
    """Return ``exp_id`` if it matches ``EXP-YYYYMMDD-NNNN`` with a real date.

    Raises:
        InvalidIdentifier: When the id is malformed (including any path-like input).
    """
    match = EXP_ID_RE.match(exp_id) if isinstance(exp_id, str) else None
    if match is None:
        raise InvalidIdentifier(
            f"invalid experience id {exp_id!r}: expected EXP-YYYYMMDD-NNNN, "
            "e.g. EXP-20260720-0001"
        )
    try:
        datetime.datetime.strptime(match.group(1), "%Y%m%d")  # noqa: DTZ007 (a date, no tz)
    except ValueError:
        raise InvalidIdentifier(
            f"invalid experience id {exp_id!r}: {match.group(1)} is not a real date"
        ) from None
    assert isinstance(exp_id, str)
    return exp_id


def id_sequence(exp_id: str) -> tuple[str, int]:
    """Split a valid id into its ``YYYYMMDD`` part and its sequence number."""
    match = EXP_ID_RE.match(exp_id)
    if match is None:
        raise InvalidIdentifier(f"invalid experience id {exp_id!r}")
    return match.group(1), int(match.group(2))


def new_experience_id(day: datetime.date, existing: Iterable[str]) -> str:
    """Next id for ``day``: the highest sequence of that date among ``existing`` plus one.

    Args:
        day: The creation date.
        existing: Every id already in the store (all domains); malformed ones are ignored.

    Raises:
        InvalidIdentifier: When the day already has 9999 experiences.
    """
    stamp = day.strftime("%Y%m%d")
    highest = 0
    for exp_id in existing:
        match = EXP_ID_RE.match(exp_id)
        if match and match.group(1) == stamp:
            highest = max(highest, int(match.group(2)))
    if highest >= 9999:
        raise InvalidIdentifier(f"no sequence number left for {stamp} (9999 used)")
    return f"EXP-{stamp}-{highest + 1:04d}"
