"""OpenHands logs, in four shapes.

- V0 trajectory export: a JSON list of events.
- V0 session folder: ``sessions/<sid>/events/<n>.json``, one event per file.
- Eval ``output.jsonl``: one run per line, ``{instance_id, instruction, history[], metrics,
  error, test_result}``; ``history`` holds V0 events (also the older flat ones without
  ids, paired by position), ``[action, observation]`` pairs, or V1 events.
- V1 (software-agent-sdk) conversation folder: ``base_state.json`` + ``events/event-*.json``.

This module finds the events of each shape and reads the session-level fields around them
(``base_state.json``, the eval record's metrics and result); ``openhands_events.py`` turns
the events into steps and says when a step failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..errors import ParseFailure
from ..hashing import content_hash
from ..model import RawRef, SourceInfo, Trajectory
from ..normalize import truncate
from . import base
from .common import bounded, most_common
from .fields import as_int, as_key, obj
from .jsonio import ReadStats, iter_jsonl, load_json
from .openhands_events import EventBuilder
from .records import RECORD_ERRORS, skip_record, source_info

_V0_EVENT_FILE = re.compile(r"^\d+\.json$")
_V1_EVENT_FILE = re.compile(r"^event-\d+.*\.json$")


class Adapter(base.Adapter):
    """OpenHands event logs (V0 and V1) and eval outputs."""

    name = "openhands"
    description = "OpenHands V0 event lists/folders, eval output.jsonl, V1 conversations"
    where = ("~/.openhands/sessions/<sid>/events/, ~/.openhands/conversations/<id>/, "
             "evaluation/**/output.jsonl, trajectory exports (*.json)")

    def sniff(self, path: Path, head: bytes) -> int:
        """Score by content; folders are scored by ``claims_dir``."""
        if not head:
            return 85 if path.is_dir() and self.claims_dir(path) else 0
        start = head.lstrip()[:1]
        if start == b"[":
            if (b'"action"' in head or b'"observation"' in head) and (
                b'"source"' in head or b'"cause"' in head or b'"tool_call_metadata"' in head
            ):
                return 85
            if b'"kind": "ActionEvent"' in head or b'"kind": "MessageEvent"' in head:
                return 80
            return 0
        if start == b"{":
            first = head.split(b"\n", 1)[0]
            if b'"history"' in first and (b'"instruction"' in first or b'"instance_id"' in first):
                if b'"action"' in first or b'"observation"' in first or b'"kind"' in first:
                    return 85
                return 70
        return 0

    def claims_dir(self, path: Path) -> bool:
        """A V1 conversation (base_state.json + events/) or a V0 session (events/<n>.json)."""
        events = path / "events"
        if not events.is_dir():
            return path.name == "events" and self._event_files(path) is not None
        if (path / "base_state.json").is_file():
            return True
        return self._event_files(events) is not None

    @staticmethod
    def _event_files(folder: Path) -> list[Path] | None:
        """Event files in replay order, or None when ``folder`` holds none."""
        try:
            names = [p for p in folder.iterdir() if p.is_file()]
        except OSError:
            return None
        v0 = [p for p in names if _V0_EVENT_FILE.match(p.name)]
        if v0:
            return sorted(v0, key=lambda p: int(p.stem))
        v1 = [p for p in names if _V1_EVENT_FILE.match(p.name)]
        return sorted(v1, key=lambda p: p.name) if v1 else None

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield one trajectory per session (per line for eval ``output.jsonl``)."""
        if path.is_dir():
            yield self._parse_dir(path, ctx)
            return
        with path.open("rb") as fh:
            start = fh.read(4096).lstrip()[:1]
        if start == b"[":
            yield self._parse_list(path, ctx)
        else:
            yield from self._parse_jsonl(path, ctx)

    # ---- shapes ----

    def _parse_list(self, path: Path, ctx: base.ParseContext) -> Trajectory:
        first_issue = len(ctx.issues)
        stats = ReadStats()
        data = load_json(path, ctx, stats)
        if not isinstance(data, list):
            raise ParseFailure(f"{path}: not an OpenHands trajectory (expected a JSON list)")
        b = EventBuilder(ctx, path)
        raw = RawRef(str(path))
        for i, ev in enumerate(data):
            b.event(ev, raw, f"event[{i}]")
        traj = self._finish(b, path.stem, source_info(self.name, path, stats))
        traj.issues = list(ctx.issues[first_issue:])
        return traj

    def _parse_dir(self, path: Path, ctx: base.ParseContext) -> Trajectory:
        first_issue = len(ctx.issues)
        events_dir = path if path.name == "events" and not (path / "events").is_dir() \
            else path / "events"
        files = self._event_files(events_dir) or []
        stats = ReadStats()
        b = EventBuilder(ctx, path)
        sid = path.name
        base_state: dict[str, Any] = {}
        state_file = path / "base_state.json"
        if state_file.is_file():
            try:
                loaded = load_json(state_file, ctx, stats)
            except ParseFailure as exc:
                ctx.warn(state_file, None, str(exc).split(": ", 1)[-1])
                loaded = None
            if isinstance(loaded, dict):
                base_state = loaded
        if not files and not base_state:
            raise ParseFailure(f"{path}: no OpenHands event files found")
        for f in files:
            try:
                ev = load_json(f, ctx, stats)
            except ParseFailure as exc:
                ctx.warn(f, None, f"{str(exc).split(': ', 1)[-1]}; event skipped")
                continue
            b.event(ev, RawRef(str(f)), f.name)
        if isinstance(base_state.get("id"), str):
            sid = base_state["id"]
        self._apply_base_state(b, base_state)
        traj = self._finish(b, sid, source_info(self.name, path, stats))
        if isinstance(base_state.get("execution_status"), str):
            traj.outcome.exit_status = base_state["execution_status"]
        traj.issues = list(ctx.issues[first_issue:])
        return traj

    def _parse_jsonl(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        for lineno, rec in iter_jsonl(path, ctx):
            if not isinstance(rec, dict) or not isinstance(rec.get("history"), list):
                ctx.warn(path, lineno, "not an OpenHands eval record (no 'history' list); "
                         "skipped")
                continue
            try:
                traj = self._eval_run(path, lineno, rec, ctx)
            except RECORD_ERRORS as exc:
                # Each line is a run of its own: lose that run, not the rest of the file.
                skip_record(ctx, path, lineno, "record", exc)
                continue
            yield traj

    def _eval_run(self, path: Path, lineno: int, rec: dict[str, Any],
                  ctx: base.ParseContext) -> Trajectory:
        """The trajectory of one eval ``output.jsonl`` line."""
        first_issue = len(ctx.issues)
        b = EventBuilder(ctx, path)
        raw = RawRef(str(path), lineno)
        for i, ev in enumerate(rec["history"]):
            b.event(ev, raw, f"history[{i}]")
        inst = rec.get("instance_id")
        sid = as_key(inst) or f"{path.stem}-{lineno}"
        # Each line is its own run, so it gets its own hash (of the parsed record: the
        # reader does not hand back the raw bytes).
        blob = orjson.dumps(rec)
        traj = self._finish(b, sid, SourceInfo(self.name, str(path), content_hash(blob),
                                               len(blob)))
        self._apply_eval(traj, rec)
        if traj.task is None and isinstance(rec.get("instruction"), str):
            traj.task = bounded(ctx.secrets.redact(rec["instruction"]), redacted=True)
        traj.issues = list(ctx.issues[first_issue:])
        traj.extra["line"] = lineno
        return traj

    # ---- outcome, tokens, model ----

    def _finish(self, b: EventBuilder, sid: str, source: SourceInfo) -> Trajectory:
        return Trajectory(
            id=sid,
            source=source,
            agent="openhands",
            model=most_common(b.models),
            task=b.task,
            steps=b.steps,
            outcome=b.outcome,
            tokens_in=b.tokens_in,
            tokens_out=b.tokens_out,
            started_at=b.started_at,
        )

    @staticmethod
    def _apply_base_state(b: EventBuilder, state: dict[str, Any]) -> None:
        agent = obj(state.get("agent"))
        llm = obj(agent.get("llm"))
        if isinstance(llm.get("model"), str):
            b.models[llm["model"]] += 1
        st = obj(state.get("stats"))
        usage_map = obj(st.get("usage_to_metrics"))
        tin = tout = 0
        seen = False
        for metrics in usage_map.values():
            usage = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
            if isinstance(usage, dict):
                seen = True
                tin += as_int(usage.get("prompt_tokens")) or 0
                tout += as_int(usage.get("completion_tokens")) or 0
        if seen:
            b.tokens_in, b.tokens_out = tin, tout

    @staticmethod
    def _apply_eval(traj: Trajectory, rec: dict[str, Any]) -> None:
        metrics = obj(rec.get("metrics"))
        usage = metrics.get("accumulated_token_usage")
        if isinstance(usage, dict):
            traj.tokens_in = as_int(usage.get("prompt_tokens"))
            traj.tokens_out = as_int(usage.get("completion_tokens"))
        if isinstance(metrics.get("accumulated_cost"), (int, float)):
            traj.extra["cost_usd"] = metrics["accumulated_cost"]
        meta = obj(rec.get("metadata"))
        llm = obj(meta.get("llm_config"))
        if traj.model is None and isinstance(llm.get("model"), str):
            traj.model = llm["model"]
        if isinstance(meta.get("agent_class"), str):
            traj.extra["agent_class"] = meta["agent_class"]
        resolved = rec.get("resolved")
        test_result = rec.get("test_result")
        if isinstance(test_result, dict):
            report = obj(test_result.get("report"))
            for cand in (test_result.get("resolved"), report.get("resolved")):
                if isinstance(cand, bool):
                    resolved = cand
        if isinstance(resolved, bool):
            traj.outcome.resolved = resolved
        if "success" in rec and isinstance(rec["success"], bool):
            traj.extra["success"] = rec["success"]
        error = rec.get("error")
        if isinstance(error, str) and error.strip():
            traj.outcome.exit_status = "error: " + truncate(error.strip().splitlines()[0], 300)


__all__ = ["Adapter"]
