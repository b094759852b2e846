"""Builders for synthetic steps and trajectories used by the detector tests."""

from __future__ import annotations

from typing import Any

from pipeline import normalize
from pipeline.model import RawRef, SourceInfo, Step, Trajectory


def tool(tool_name: str, output: str = "", *, error: bool = False, tokens: int | None = None,
         ts: str | None = None, **args: Any) -> Step:
    """A tool step (index/source_id are filled by ``traj``)."""
    return Step(
        index=0, source_id="", kind="tool", tool=tool_name, args=dict(args),
        action_key=normalize.action_key(tool_name, args), output=output, output_len=len(output),
        exit_code=1 if error else 0, is_error=error,
        error_signature=normalize.error_signature(output) if error else None,
        tokens=tokens, timestamp=ts,
    )


def sh(command: str, output: str = "ok", *, error: bool = False, **kw: Any) -> Step:
    """A bash step."""
    return tool("bash", output, error=error, command=command, **kw)


def read(path: str, output: str = "", **kw: Any) -> Step:
    """A read tool step (``view_range=[a, b]``, ``offset``/``limit``... go in ``kw``)."""
    return tool("read", output or f"contents of {path} {kw}", path=path, **kw)


def edit(path: str, old: str, new: str, *, error: bool = False) -> Step:
    """A string-replacement edit."""
    out = "ERROR: no match" if error else f"edited {path}"
    return tool("edit", out, error=error, path=path, old_str=old, new_str=new)


def write(path: str, content: str) -> Step:
    """A whole-file write."""
    return tool("write", f"wrote {path}", path=path, content=content)


def msg(text: str) -> Step:
    """An agent message without a tool call."""
    return Step(index=0, source_id="", kind="message", text=text, output=text)


def user(text: str) -> Step:
    """A user turn."""
    return Step(index=0, source_id="", kind="user", output=text)


def compaction() -> Step:
    """A context compaction event."""
    return Step(index=0, source_id="", kind="compaction", output="summary")


def traj(*steps: Step, prefix: str = "s") -> Trajectory:
    """A trajectory with dense indices and ``<prefix><n>`` source ids."""
    out = []
    for i, s in enumerate(steps):
        s.index = i
        s.source_id = f"{prefix}{i}"
        s.raw_ref = RawRef("log.jsonl", i + 1)
        out.append(s)
    return Trajectory(id="t", source=SourceInfo(format="test", path="log.jsonl"), steps=out)


def kinds(findings: list[Any]) -> list[str]:
    """Family names of findings, in order."""
    return [f.kind for f in findings]


def wasted(findings: list[Any], kind: str | None = None) -> list[int]:
    """Indices (from source ids ``s<n>``) of wasted steps, optionally of one family."""
    return sorted(int(s[1:]) for f in findings if kind in (None, f.kind)
                  for s in f.wasted_source_ids)
