"""A model reads a session's episodes; the verifier keeps what the log proves.

The request is the session's digest (``lessons/digest.py``) with ``prompts/learn.md``: the model
judges the run and proposes 0-3 drafts, each citing its evidence. Each proposal goes through
the verifier (``lessons/verify.py``); the rejected ones are sent back once with the reasons,
then dropped with them. A session is at most ``MAX_CHUNKS`` digests and one send-back: at most
three calls. The same parsing and verifying serve ``orf submit`` (drafts the user's own coding
agent wrote from ``orf learn``'s digests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import orjson
from pydantic import ValidationError

from ..hashing import value_hash
from ..lessons.digest import MAX_CHUNKS, SessionDigest, build_digest
from ..lessons.episodes import SessionEpisodes, build_episodes, target_of
from ..lessons.verify import Evidence, Proposal, verify
from ..llm.backend import Backend, LLMReply, LLMRequest
from ..model import Draft, Finding, Trajectory, Verdict
from ..normalize import error_signature
from ..privacy import redact
from ..prompts import load_prompt
from ..provenance import Provenance
from .screening import REJECTED
from .view import StoreContext

LEARN_VERSION = 1
"""Part of the signature of a learned lesson; bump when the signature's recipe changes."""
_DRAFT_FIELDS = ("title", "description", "domain", "keywords", "complexity", "objective",
                 "trap", "insight", "validated_path", "checklist")
SEND_BACK = (
    "\n\n## The verifier rejected some of your drafts\nThe log does not show these claims:\n"
    "{reasons}\nReply again with the full JSON: fix each rejected draft so that every claim "
    "cites steps that show it, or leave it out. Drafts not listed here were accepted and are "
    "kept: do not repeat them."
)


@cache
def learn_schema() -> dict[str, Any]:
    """JSON schema of a learn reply (``prompts/learn.schema.json``)."""
    return dict(orjson.loads(load_prompt("learn.schema.json")))


def instructions(max_drafts: int) -> str:
    """The system text of a learn request (also what ``orf learn`` writes for an agent)."""
    return load_prompt("learn.md").replace("{max_drafts}", str(max_drafts))


def _categories(store: StoreContext) -> str:
    if not store.categories:
        return ""
    rows = "\n".join(f"- `{cid}`: {name}" for cid, name, _ in store.categories[:30])
    return f"\n\n## Store categories (domain ids)\n{rows}"


def learn_request(traj: Trajectory, text: str, chunk: int, backend: Backend, store: StoreContext,
                  max_drafts: int, *, send_back: str | None = None) -> LLMRequest:
    """One request: the digest chunk ``text`` (already redacted), and the send-back reasons."""
    system = instructions(max_drafts)
    prompt = redact(text) + _categories(store)
    if send_back:
        prompt += SEND_BACK.format(reasons=send_back)
    schema = learn_schema()
    return LLMRequest(
        key=backend.cache_key(system, prompt, schema), purpose="draft",
        session_id=f"{traj.id}" if chunk == 0 else f"{traj.id}#{chunk}", system=system,
        prompt=prompt, schema=schema, max_output_tokens=8192,
        attempt=2 if send_back else 1)


def learn_signature(session: SessionEpisodes, ev: Evidence) -> str:
    """The same lesson in another session has the same signature: target and masked error."""
    steps = session.traj.steps
    trap = steps[ev.trap_steps[-1]]
    target = target_of(trap, session.infos[trap.index]).rsplit("/", 1)[-1]
    error = error_signature(ev.error, redacted=True) or ev.error[:120]
    return value_hash(["learn", LEARN_VERSION, target, error])


@dataclass
class Parsed:
    """A reply read: the verdict, the proposals, and what could not be used."""

    verdict: Verdict | None = None
    proposals: list[Proposal] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Per-draft shape problems (a missing field, a bad evidence list)."""
    error: str | None = None
    """Why the reply as a whole is unusable, or None."""


def _evidence(raw: Any) -> Evidence | None:
    if not isinstance(raw, dict):
        return None
    try:
        trap = tuple(int(x) for x in raw.get("trap_steps") or ())
        fix = tuple(int(x) for x in raw.get("fix_steps") or ())
    except (TypeError, ValueError):
        return None
    return Evidence(trap, fix, str(raw.get("error") or ""))


def proposal_of(item: Any, session: SessionEpisodes, drafted_by: str, backend_name: str,
                model: str | None) -> tuple[Proposal | None, str | None]:
    """One draft of a reply (or of an ``orf submit`` file) as a proposal, or why not."""
    if not isinstance(item, dict):
        return None, "a draft is not an object"
    ev = _evidence(item.get("evidence"))
    if ev is None:
        return None, f"draft {str(item.get('title'))[:60]!r}: no usable evidence"
    fields = {k: item.get(k) for k in _DRAFT_FIELDS}
    fields["complexity"] = fields["complexity"] or "medium"
    if isinstance(fields.get("checklist"), str):
        fields["checklist"] = [fields["checklist"]]
    path = fields.get("validated_path")
    if isinstance(path, list) and all(isinstance(x, str) for x in path):
        # Coding agents asked for a string often send the steps as a list: keep them in order.
        fields["validated_path"] = "\n".join(f"{k}. {x}" for k, x in enumerate(path, 1))
    scope = "repository" if item.get("scope") == "repository" else "general"
    try:
        draft = Draft.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        return None, f"draft {str(item.get('title'))[:60]!r}: {where}: {first.get('msg')}"
    draft.domain = draft.domain.strip().lower().replace(" ", "-").replace("_", "-")
    draft.keywords = [k.strip().lower() for k in draft.keywords if k.strip()][:8]
    if scope == "repository" and "this-repository" not in draft.keywords:
        draft.keywords = [*draft.keywords[:7], "this-repository"]
    steps = sorted({*ev.trap_steps, *ev.fix_steps})
    traj = session.traj
    in_range = [i for i in steps if 0 <= i < len(traj.steps)]
    tokens = [traj.steps[i].tokens for i in range(min(ev.trap_steps, default=0),
                                                  min(ev.fix_steps, default=0))
              if 0 <= i < len(traj.steps) and traj.steps[i].tokens is not None]
    draft.provenance = Provenance.for_draft(
        session_id=traj.id, source_path=traj.source.path, format=traj.source.format,
        agent=traj.agent, signature=learn_signature(session, ev) if in_range == steps and
        ev.trap_steps else "", finding_kind="episode", steps=steps,
        source_ids=[traj.steps[i].source_id for i in in_range],
        wasted_steps=max(0, min(ev.fix_steps, default=0) - min(ev.trap_steps, default=0) - 1),
        wasted_tokens=sum(t for t in tokens if t is not None) if tokens else None,
        verdict=None, verdict_by=None, backend=backend_name, model=model,
        drafted_by=drafted_by).with_evidence(
            scope, {"trap_steps": list(ev.trap_steps), "fix_steps": list(ev.fix_steps),
                    "error": ev.error[:500]})
    return Proposal(draft, ev, scope), None


def _verdict(raw: Any, decided_by: str, threshold: float) -> Verdict | None:
    if not isinstance(raw, dict):
        return None
    try:
        v = Verdict(outcome=raw.get("outcome", "unknown"), reason=str(raw.get("reason") or ""),
                    decided_by=decided_by, confidence=float(raw.get("confidence", 0.5)))
    except (ValidationError, TypeError, ValueError):
        return None
    if v.confidence < threshold and v.outcome != "unknown":
        return Verdict(outcome="unknown", reason=f"below confidence: {v.reason}",
                       decided_by=decided_by, confidence=v.confidence)
    return v


def parse_learn_reply(reply: LLMReply | str, session: SessionEpisodes, backend: Backend,
                      threshold: float) -> Parsed:
    """Read a learn reply: its verdict and each draft with its evidence."""
    out = Parsed()
    text = reply if isinstance(reply, str) else reply.text
    if not isinstance(reply, str) and not reply.ok:
        out.error = reply.error or "no reply"
        return out
    try:
        data = orjson.loads(text or "")
    except orjson.JSONDecodeError:
        out.error = "the reply is not JSON"
        return out
    if not isinstance(data, dict):
        out.error = "the reply is not a JSON object"
        return out
    out.verdict = _verdict(data.get("verdict"), backend.decided_by, threshold)
    for item in data.get("drafts") or []:
        proposal, why = proposal_of(item, session, "model", backend.name, backend.model)
        if proposal is not None:
            out.proposals.append(proposal)
        elif why:
            out.problems.append(why)
    return out


def checked(proposals: list[Proposal], session: SessionEpisodes) -> tuple[
        list[Proposal], list[tuple[Proposal, list[tuple[str, str]]]]]:
    """The proposals the log proves, and the others with (rule, reason) pairs."""
    accepted, rejected = [], []
    for p in proposals:
        problems = verify(p, session)
        if problems:
            rejected.append((p, problems))
        else:
            accepted.append(p)
    return accepted, rejected


def send_back_text(rejected: list[tuple[Proposal, list[tuple[str, str]]]],
                   problems: list[str]) -> str:
    """The reasons, one line each, as the send-back shows them to the model."""
    lines = [f"- draft {p.draft.title!r}: " + "; ".join(r for _, r in why)
             for p, why in rejected]
    return "\n".join(lines + [f"- {x}" for x in problems])


def rejection_note(p: Proposal, why: list[tuple[str, str]]) -> str:
    """The session note of a dropped draft: ``rejected: rule: reason (title)``."""
    return f"{REJECTED} {why[0][0]}: {why[0][1]} ({p.draft.title[:80]!r})"


def digest_of(traj: Trajectory, findings: list[Finding], budget: int) -> tuple[
        SessionEpisodes, SessionDigest]:
    """The session's episodes (findings as hints) and its digest chunks."""
    session = build_episodes(traj, findings)
    return session, build_digest(session, budget)


__all__ = ["MAX_CHUNKS", "REJECTED", "Parsed", "checked", "digest_of", "instructions",
           "learn_request", "learn_schema", "learn_signature", "parse_learn_reply",
           "proposal_of", "rejection_note", "send_back_text"]
