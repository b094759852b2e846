"""What the session already showed about the name an episode's error says is missing.

``Failed to spawn: `ruff```, ``No module named 'yaml'``, ``jq: command not found``: the
cause is often in a manifest the agent printed earlier (``ruff`` listed only under the
``dev`` extra, which a plain ``uv sync`` does not install). The digest shows those lines, with
the section they sit in and the step that printed them, so a reader names the cause from the
log instead of guessing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..detect.effects import MANIFEST
from ..detect.outputs import GUTTER, body_of
from .episodes import Episode, SessionEpisodes, failed

MISSING_NAME = (
    re.compile(r"Failed to spawn: `([\w.@/-]+)`"),
    re.compile(r"No module named '([\w.]+)'"),
    re.compile(r"Cannot find module '([^']+)'"),
    re.compile(r"command not found: ([\w.@/-]+)"),
    re.compile(r"(?m)^(?:\S+: )?(?:line \d+: )?([\w.@/-]+): (?:command )?not found"),
    re.compile(r"'([\w.-]+)' is not recognized as an internal or external command"),
    re.compile(r"exec: \"([\w.-]+)\": executable file not found"),
)
"""How errors name what is missing (the first group), in the order they are tried."""
MIN_NAME = 2
"""A shorter name (``a``) matches too many lines of a manifest to say anything."""
MAX_LINES = 6
"""Lines shown from one earlier read (the matches and the sections they sit in)."""
LINE_CHARS = 160
"""Characters of each of them: few lines, kept whole at every digest level."""
_SECTION = re.compile(r"^\s*(\[[^\]]+\]|\"?\w*[dD]ependencies\"?\s*[:=])")


@dataclass(frozen=True)
class Mention:
    """Lines of an earlier step's output that name the missing thing."""

    step: int
    """``Step.index`` of the earlier read."""
    name: str
    """What the error says is missing (``ruff``, ``yaml``)."""
    lines: tuple[str, ...]
    """The lines naming it, each after the section header it sits under."""


def missing_name(text: str) -> str | None:
    """The program or module an error says is missing, or None."""
    for rx in MISSING_NAME:
        m = rx.search(text)
        if m and len(m.group(1)) >= MIN_NAME:
            return m.group(1).split(".")[0] if "No module" in rx.pattern else m.group(1)
    return None


def mentions(session: SessionEpisodes, ep: Episode) -> Mention | None:
    """The latest manifest read before the episode that names what its error says is missing."""
    if ep.kind != "failure":
        return None
    steps, infos = session.traj.steps, session.infos
    name = missing_name(steps[ep.start].output or "")
    if name is None:
        return None
    # As a package is named, not inside another's extras (`mkdocstrings[python]`).
    word = re.compile(rf"(?<![\w\[-]){re.escape(name)}(?![\w\]-])")
    for j in range(ep.start - 1, -1, -1):
        info = infos[j]
        if info.cls != "read" or failed(steps[j], info) or not any(
                MANIFEST.search(p) for p in info.paths):
            continue
        lines = body_of(steps[j].output or "").splitlines()
        bare = [GUTTER.sub("", ln) for ln in lines]  # a viewer's line numbers (`cat -n`, Read)
        hits = [k for k, ln in enumerate(bare) if word.search(ln)]
        if not hits:
            continue
        keep: list[int] = []
        for k in hits:
            header = next((h for h in range(k, -1, -1) if _SECTION.match(bare[h])), None)
            keep.extend(h for h in (header, k) if h is not None and h not in keep)
        return Mention(j, name, tuple(bare[k] for k in sorted(keep)[:MAX_LINES]))
    return None
