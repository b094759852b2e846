"""The real samples of ``../shared/trajectories`` for the benches: every session, its format
folder, and the December 2026 batch split into a tuning half and a held-out third.

The held-out third (``held_out``) is chosen by a hash of the file name, so it is the same on
every machine and nobody picks it: it is read once, at the end of a piece of work, to score it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "trajectories"
_ROW = re.compile(r"^\|\s*([^|\s][^|]*?)\s*\|")


def december_batch(root: Path = SHARED) -> set[str]:
    """File names listed after the "2026-12 batch" note of each folder's SOURCES.md."""
    names: set[str] = set()
    for sources in root.glob("*/SOURCES.md"):
        after = False
        for line in sources.read_text("utf-8").splitlines():
            if "2026-12 batch" in line:
                after = True
                continue
            m = _ROW.match(line)
            if after and m and not set(m.group(1)) <= set("-: ") and m.group(1) != "file":
                names.add(m.group(1))
    return names


def held_out(name: str) -> bool:
    """True for the third of the December batch kept unread until the final score."""
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0
