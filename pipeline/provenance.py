"""Where a playbook came from: the ``provenance`` mapping of a draft and of its EXP file, typed.

Built in one place (``Provenance.for_draft``) and changed only through its methods: the screen
stage puts the session's reference and the verdict in (``screened``), the writer the write key
and dates (``for_write``), a reinforcing session appends itself (``reinforced``), and a
consolidation merges several (``merged``). Readers get typed values (``Provenance.read``):
``sessions`` is always a list of ``SessionRef``, whether the file holds ids or mappings.

The mapping form (``wire()``) is what drafts carry, ``orf analyze --draft --json`` prints and EXP
frontmatter holds. It keeps every key in the order it was first set and every unknown key, and
writes a session read as a bare id back as one, so a file read and written again changes only
where a method changed it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

VERSION = 1
"""Version of the mapping we write; bump when keys change meaning."""
_HOME = re.compile(r"^(?:/Users|/home)/[^/]+/|^[A-Za-z]:[\\/]Users[\\/][^\\/]+[\\/]")


def steps_label(indices: Iterable[int], mark: str = "") -> str:
    """``2-4,7``: step positions as runs, as a session's ``steps`` holds them.

    ``mark="#"`` gives ``#2-4,#7``, as reports cite steps.
    """
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(f"{mark}{a}" if a == b else f"{mark}{a}-{b}" for a, b in runs)


def portable_path(path: str, root: Path | None) -> str:
    """``path`` relative to ``root`` when inside it, ``~/…`` under a home folder, else as is."""
    p = Path(path)
    if root is not None and p.is_absolute():
        try:
            return p.resolve().relative_to(root).as_posix()
        except ValueError:
            pass
    home = str(Path.home())
    if home not in ("/", "") and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1:]
    return _HOME.sub("~/", path, count=1)


class SessionRef(BaseModel):
    """One session a playbook was drawn from (or that showed its trap again)."""

    model_config = ConfigDict(extra="allow")

    id: str
    path: str | None = None
    format: str | None = None
    steps: str | None = None
    """Step numbers of its findings, as ranges: ``5-6,9``."""
    wasted_steps: int | None = None
    _bare: bool = PrivateAttr(default=False)
    _keys: list[str] = PrivateAttr(default_factory=list)

    @classmethod
    def bare(cls, session_id: str) -> SessionRef:
        """A session known only by its id (written as the bare id)."""
        ref = cls(id=session_id)
        ref._bare = True
        return ref

    @classmethod
    def read(cls, value: Any) -> SessionRef:
        """From an entry of ``sessions``: an id (older files) or a mapping."""
        if not isinstance(value, dict):
            return cls.bare(str(value))
        ref = cls.model_validate({**value, "id": str(value.get("id", ""))})
        ref._keys = list(value)
        return ref

    @property
    def is_bare(self) -> bool:
        """Whether it was read (or made) as an id alone."""
        return self._bare

    def as_mapping(self) -> dict[str, Any]:
        """The entry as a mapping (a bare id becomes ``{"id": id}``)."""
        wire = self.wire()
        return wire if isinstance(wire, dict) else {"id": wire}

    def wire(self) -> str | dict[str, Any]:
        """The entry as a file holds it."""
        if self._bare:
            return self.id
        values = {**self.model_dump(include=set(type(self).model_fields)),
                  **(self.__pydantic_extra__ or {})}
        keys = self._keys or [k for k in values if k in self.model_fields_set
                              or k in (self.__pydantic_extra__ or {})]
        return {k: values[k] for k in keys if k in values}


class VerdictRef(BaseModel):
    """The judge's verdict as provenance keeps it (the keys that were set)."""

    model_config = ConfigDict(extra="allow")

    outcome: str | None = None
    reason: str | None = None
    decided_by: str | None = None


class LessonRef(BaseModel):
    """The lesson a draft teaches: its error class, target and fix kinds."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    error_class: str = Field(alias="class")
    target: str | None = None
    delta: list[str] = Field(default_factory=list)


_NESTED = ("sessions", "verdict", "lesson")
"""Fields whose wire form is not their plain dump."""


class Provenance(BaseModel):
    """The provenance of one draft or EXP file. Unknown keys are kept as they are."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    version: int | None = None
    sessions: list[SessionRef] = Field(default_factory=list)
    source_paths: list[str] | None = None
    format: str | None = None
    agent: str | None = None
    signature: str | None = None
    """The finding signature: the key of review, the ledger and dedupe."""
    finding_kind: str | None = None
    step_range: list[int] | None = None
    source_ids: list[str] | None = None
    wasted_steps: int | None = None
    wasted_tokens: int | None = None
    verdict: VerdictRef | str | None = None
    """The outcome alone on a fresh draft; outcome, reason and judge once screened."""
    verdict_by: str | None = None
    backend: str | None = None
    model: str | None = None
    drafted_by: str | None = None
    signatures: list[str] | None = None
    """Every signature behind it (the finding's and the lesson's)."""
    lesson: LessonRef | None = None
    write_key: str | None = None
    first_seen: str | None = None
    last_seen: str | None = None
    related_to: str | None = None
    reinforcements: int | None = None
    consolidates: list[str] | None = None
    consolidation: str | None = None
    sources: dict[str, Any] | None = None
    """For a consolidation: each merged playbook's title, date and provenance, as read."""
    _keys: list[str] = PrivateAttr(default_factory=list)
    _unreadable: dict[str, Any] = PrivateAttr(default_factory=dict)

    # ---- reading and writing ----

    @classmethod
    def read(cls, value: Any) -> Provenance:
        """From a draft's or a file's mapping (anything else reads as empty).

        A value of the wrong type (a hand edit) is kept as it is, unread, rather than failing.
        A ``Provenance`` is returned as it is (its methods never change it in place).
        """
        if isinstance(value, Provenance):
            return value
        data = dict(value) if isinstance(value, dict) else {}
        kept: dict[str, Any] = {}
        if isinstance(data.get("sessions"), list):
            data["sessions"] = [SessionRef.read(s) for s in data["sessions"]]
        while True:
            try:
                prov = cls.model_validate(data)
                break
            except ValidationError as exc:
                bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
                if not bad & set(data):
                    raise
                kept.update({k: data.pop(k) for k in bad if k in data})
        prov._keys = list(value) if isinstance(value, dict) else []
        prov._unreadable = kept
        return prov

    def wire(self) -> dict[str, Any]:
        """The mapping form, keys in the order first set."""
        # Locals: pydantic's attribute lookup of private attributes is slow in a loop.
        extra = self.__pydantic_extra__ or {}
        unreadable = self._unreadable
        fields = type(self).model_fields
        out: dict[str, Any] = {}
        for key in self._keys:
            if key in unreadable:
                out[key] = unreadable[key]
            elif key in extra:
                out[key] = extra[key]
            elif key in fields:
                out[key] = self._wire_field(key)
        return out

    def _wire_field(self, key: str) -> Any:
        value = getattr(self, key)
        if key == "sessions":
            return [s.wire() for s in value]
        if key in _NESTED and isinstance(value, BaseModel):
            return value.model_dump(by_alias=True, exclude_unset=True)
        return value

    def _set(self, **values: Any) -> Provenance:
        """A copy with ``values`` set (new keys go last, as a dict update would put them)."""
        copy = self.model_copy(deep=True)
        copy._keys = list(self._keys)
        copy._unreadable = dict(self._unreadable)
        for key, value in values.items():
            copy._unreadable.pop(key, None)
            try:
                setattr(copy, key, value)
            except ValidationError:  # an unreadable value carried over stays as it was
                copy._unreadable[key] = value
            if key not in copy._keys:
                copy._keys.append(key)
        return copy

    # ---- the one builder ----

    @classmethod
    def for_draft(cls, *, session_id: str, source_path: str, format: str | None,
                  agent: str | None, signature: str, finding_kind: str, steps: list[int],
                  source_ids: list[str], wasted_steps: int, wasted_tokens: int | None,
                  verdict: str | None, verdict_by: str | None, backend: str,
                  model: str | None, drafted_by: str) -> Provenance:
        """Where a fresh draft came from: session, steps, signature, verdict, backend/model."""
        return cls.read({
            "sessions": [session_id],
            "source_paths": [source_path],
            "format": format,
            "agent": agent,
            "signature": signature,
            "finding_kind": finding_kind,
            "step_range": [steps[0], steps[-1]] if steps else [],
            "source_ids": source_ids[:50],
            "wasted_steps": wasted_steps,
            "wasted_tokens": wasted_tokens,
            "verdict": verdict,
            "verdict_by": verdict_by,
            "backend": backend,
            "model": model,
            "drafted_by": drafted_by,
        })

    # ---- what the stages change ----

    def with_evidence(self, scope: str, evidence: dict[str, Any]) -> Provenance:
        """What a model's draft cites (trap and fix steps, the error) and its scope."""
        return self._set(scope=scope, evidence=evidence)

    def with_lesson(self, finding_signature: str, lesson_signature: str, error_class: str,
                    target: str, delta: list[str]) -> Provenance:
        """The lesson it teaches; its signature joins the finding's (a duplicate elsewhere)."""
        return self._set(signatures=[finding_signature, lesson_signature],
                         lesson=LessonRef.model_validate(
                             {"class": error_class, "target": target, "delta": list(delta)}))

    def judged(self, outcome: str, decided_by: str) -> Provenance:
        """The verdict's outcome and judge (the draft may have been made before it came)."""
        return self._set(verdict=outcome, verdict_by=decided_by)

    def screened(self, signature: str, session: SessionRef, verdict: dict[str, Any] | None,
                 backend: str | None, model: str | None) -> Provenance:
        """What the screen stage knows: the one session with its steps, the full verdict."""
        values: dict[str, Any] = {"signature": signature, "sessions": [session]}
        if verdict is not None:
            values["verdict"] = VerdictRef.model_validate(
                {k: verdict.get(k) for k in ("outcome", "reason", "decided_by")
                 if verdict.get(k) is not None})
        values["backend"] = backend or self.backend
        values["model"] = model or self.model
        return self._set(**values)

    def for_write(self, *, write_key: str, signature: str, backend: str, model: str | None,
                  seen: str, wasted_steps: int, session_id: str,
                  related_to: str | None) -> Provenance:
        """The file's provenance: versioned, with its write key and first/last seen dates."""
        out = Provenance.read({"version": VERSION})._set(**self._fields())
        out = out._set(write_key=write_key, signature=signature,
                       backend=self.backend or backend, model=self.model or model,
                       first_seen=self.first_seen or seen, last_seen=seen,
                       wasted_steps=wasted_steps)
        if "sessions" not in out._keys:
            out = out._set(sessions=[SessionRef.bare(session_id)])
        if related_to:
            out = out._set(related_to=related_to)
        return out

    def _fields(self) -> dict[str, Any]:
        """Every set key and its typed value, in order (for copying into another)."""
        extra = self.__pydantic_extra__ or {}
        return {k: self._unreadable[k] if k in self._unreadable
                else extra[k] if k in extra else getattr(self, k) for k in self._keys}

    def portable(self, root: Path | None) -> Provenance:
        """Log paths as a teammate can read them (a PR must not publish user names).

        Relative to the store's repository ``root`` when inside it, else ``~/…`` for a home
        folder (no user name), else as given.
        """
        if not (self.source_paths or any(s.path for s in self.sessions)):
            return self
        out = self
        if self.source_paths:
            out = out._set(source_paths=[portable_path(p, root) for p in self.source_paths])
        if any(s.path for s in self.sessions):
            sessions = []
            for ref in out.sessions:
                if ref.path and not ref.is_bare:
                    ref = ref.model_copy(update={"path": portable_path(ref.path, root)})
                    ref._keys = list(ref._keys)
                sessions.append(ref)
            out = out._set(sessions=sessions)
        return out

    def session_ids(self) -> list[str]:
        """Ids of its sessions, in order."""
        return [s.id for s in self.sessions]

    def reinforced(self, session: SessionRef, seen: str) -> Provenance:
        """One more session showed its trap (unchanged when that session is already in)."""
        if session.id in self.session_ids():
            return self
        return self._set(sessions=[*self.sessions, session],
                         reinforcements=(self.reinforcements or 0) + 1, last_seen=seen)

    def all_signatures(self) -> set[str]:
        """Its signature and every one in ``signatures``."""
        return {s for s in (self.signature, *(self.signatures or ())) if s}

    def evidence_steps(self) -> int:
        """Its wasted steps plus each session's (the weight of a consolidation's parts)."""
        return (self.wasted_steps or 0) + sum(s.wasted_steps or 0 for s in self.sessions
                                              if not s.is_bare)

    @classmethod
    def merged(cls, parts: Iterable[tuple[str, str, str, Provenance]], *, signature: str | None,
               signatures: list[str], kind: str) -> Provenance:
        """A consolidation of ``(exp_id, title, created_at, provenance)`` parts, base first."""
        items = list(parts)
        return cls.read({})._set(
            signature=signature, signatures=signatures,
            consolidates=[exp_id for exp_id, _t, _c, _p in items], consolidation=kind,
            sessions=[s for _i, _t, _c, p in items for s in p.sessions],
            wasted_steps=sum(p.evidence_steps() for _i, _t, _c, p in items),
            sources={exp_id: {"title": title, "created_at": created,
                              "provenance": p.wire() or None}
                     for exp_id, title, created, p in items})
