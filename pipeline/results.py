"""What judging and drafting a session return: records of the model layer.

They sit below both the stages that produce them and the commands that read them, and import
nothing but ``pipeline.model``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Draft, Finding, Trajectory, Verdict


@dataclass
class DraftResult:
    """Drafts of one session, and why findings ended undrafted."""

    drafts: list[Draft] = field(default_factory=list)
    """Validated candidate playbooks (at most ``max_drafts_per_session``)."""
    failures: list[str] = field(default_factory=list)
    """One line per failed attempt or undrafted finding, with the reason."""


@dataclass
class SessionResult:
    """Judge and draft outcome of one session."""

    trajectory: Trajectory
    """The session."""
    findings: list[Finding]
    """Its findings (all of them, not only the drafted ones)."""
    verdict: Verdict
    """How the run ended, who decided, or why it is unscored."""
    drafts: list[Draft] = field(default_factory=list)
    """Validated candidate playbooks."""
    failures: list[str] = field(default_factory=list)
    """Failed attempts and undrafted findings, with reasons."""

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.trajectory.id
