"""The adapter contract: every log format is one module exposing an ``Adapter`` subclass.

Adapters know nothing of detection, LLMs or the store: they turn bytes into ``Trajectory``
objects and report problems as ``ParseIssue``s instead of raising, so one bad line never
stops a batch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..model import ParseIssue, Trajectory
from ..privacy import SessionSecrets


@dataclass
class ParseContext:
    """Options and the issue sink passed to an adapter."""

    output_max_chars: int = 4000
    """Step outputs are truncated (head+tail) past this many characters."""
    max_line_bytes: int = 256_000_000
    """Lines longer than this are reported and skipped."""
    issues: list[ParseIssue] = field(default_factory=list)
    """Problems met so far (non-fatal unless ``fatal``)."""
    secrets: SessionSecrets = field(default_factory=SessionSecrets)
    """Secrets seen so far in the source being parsed: the step builders redact with it."""

    def warn(self, path: Path | str, line: int | None, message: str) -> None:
        """Record a non-fatal problem at ``path:line``."""
        self.issues.append(ParseIssue(str(path), line, message))


class Adapter(ABC):
    """One log format."""

    name: str = ""
    """Public format name (``claude-code``, ``codex``, ...): used by --format and in JSON."""
    description: str = ""
    """One line for ``orf formats``."""
    where: str = ""
    """Where users find these logs (shown by ``orf formats``)."""
    text: bool = False
    """True for a format that is not JSON (aider's Markdown chat history): its ``sniff`` is
    also offered heads that do not open like JSON, which the JSON formats never see."""

    @abstractmethod
    def sniff(self, path: Path, head: bytes) -> int:
        """Return 0..100: how sure this adapter is that ``path`` is its format.

        ``head`` is the first bytes of the file (about 64 KiB), or b"" for a folder.
        """

    def claims_dir(self, path: Path) -> bool:
        """True when the folder ``path`` is one session in this format (brain, conversation)."""
        return False

    def is_subsession(self, path: Path) -> bool:
        """True when the claimed folder ``path`` is a sub-agent that its parent's parse attaches.

        Discovery then skips it while walking, so it is reported once, under its parent.
        """
        return False

    @abstractmethod
    def parse(self, path: Path, ctx: ParseContext) -> Iterator[Trajectory]:
        """Yield the trajectories in ``path`` (a file, or a folder this adapter claimed)."""
