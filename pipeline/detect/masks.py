"""One mask for comparing what two runs printed: numbers, hex ids and spacing left out.

Two runs that print the same lines but for a timing, a count, an address or a hash gave the
same answer; ``same_error`` (error lines) and ``answered`` (whole answers) both compare
through it, so "the same" means one thing in both.
"""

from __future__ import annotations

import re

NUMBERS = re.compile(r"0x[0-9a-fA-F]+|[0-9a-f]{8,}|\d+(\.\d+)?")
"""Hex addresses, ids and hashes of 8+ hex digits, and decimal numbers."""


def masked(line: str) -> str:
    """``line`` with its spacing collapsed and every number or hex id replaced by ``#``."""
    return NUMBERS.sub("#", " ".join(line.split()))
