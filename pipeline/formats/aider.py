"""aider's Markdown chat history: ``<project>/.aider.chat.history.md``.

aider appends to one file per project; each run opens with ``# aider chat started at
YYYY-MM-DD HH:MM:SS`` (local time, no zone) and becomes one trajectory. Inside a run:

* ``#### text`` lines are the user's turns (each line ends with two spaces; consecutive lines
  are one message). A ``#### `` line without them is a Markdown heading of a reply.
* ``> text`` lines are aider's own output: announcements (``Aider v0.86.1``, ``Model: X with
  diff edit format``), ``Tokens: 2.4k sent, 104 received. Cost: ...``, ``Applied edit to P``,
  ``Running cmd``, confirmations (``Create new file? (Y)es/(N)o [Yes]: y``), errors. A message
  of several lines has ``> `` on its first line only and two trailing spaces on its last;
  lines that follow an output line with no blank line between continue it.
* anything else, after a blank line, is an assistant reply.

The steps (built by ``aider_session.py``; the block rules are in ``aider_blocks.py``):

* a user turn is a ``user`` step, slash commands included (``extra["command"]``); ``/code X``
  (``/ask``, ``/architect``, ``/context``) is logged again as ``X``: one step. The task is the
  first turn that is not a command, or the ``X`` of ``/code X``;
* a reply is a ``message`` step whose text keeps the prose and puts one line,
  ``[SEARCH/REPLACE edit of P]``, for each block (the block is its own step); a ``<think>``
  opening is a ``reasoning`` step. The next ``Tokens:`` line gives the turn's tokens (sent +
  received, on the message; ``2.4k`` is read as 2400, aider's own rounding) and its cost
  (``extra["cost"]``, dollars); the session's ``extra["cost"]`` is their sum;
* each SEARCH/REPLACE block is an ``edit`` step (``file_path``, ``old_string``,
  ``new_string``, as Claude Code's Edit), with ``extra["status"]``: ``applied`` when
  ``Applied edit to P`` follows, or when aider's failure report says "The other N
  SEARCH/REPLACE blocks were applied successfully"; ``failed`` when that report names it
  (``SearchReplaceNoExactMatch``, its error signature) or when aider could not read the reply's
  edits at all ("The LLM did not conform to the edit format." followed by no per-block report);
  ``skipped`` when the user refused to create the file; otherwise ``unconfirmed`` (ask mode):
  only ``failed`` is a failure. Under the ``whole`` edit format, ``Applied edit to P`` is a
  ``write`` step with the file listed before it as ``content``;
* ``/run cmd`` (or ``!cmd``), ``/test cmd`` and ``Running cmd`` (a command a reply suggested,
  run after the user's yes; a declined one is no step) are ``bash`` steps, ``extra["via"]``
  saying which. aider prints a command's output to the terminal only, never to this file, and
  logs no exit code, so the status comes from what aider does next: ``/test`` (and the
  ``--auto-test`` run after edits, a step of its own) adds its output to the chat only on a
  non-zero exit, so "Added N lines of output to the chat." means it failed, and its absence
  exit code 0; after a failing ``/run`` whose output the user added, aider pre-fills the next
  prompt with "What's wrong? Fix", so that next user turn marks the ``/run`` failed; "Error
  running command" fails any. Otherwise a ``/run`` or suggested command is not marked failed,
  whatever it did: the file cannot tell;
* the lint report aider shows after edits ("# Fix any errors below, if possible.") is a failed
  lint step (the linter's command when the report names it).

``.aider.input.history`` (the prompts with their times) and ``.aider.llm.history`` (the raw
messages sent to the model) are not sessions: nothing claims them, so discovery skips them as
not session logs, like any other file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from ..model import Trajectory
from . import base
from .aider_blocks import Fences, is_tool, is_user, tool_text
from .aider_session import Session
from .jsonio import ReadStats, check_head
from .records import source_info

NAME = "aider"
HISTORY_NAME = ".aider.chat.history.md"
_HEADER = re.compile(r"^# aider chat started at (.*?)\s*$")
_OPENING = b"# aider chat started at "
_TOKENS = "> Tokens: "


def _read_lines(path: Path, ctx: base.ParseContext, stats: ReadStats) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line, hashed as read; bad bytes are warned about."""
    with path.open("rb") as fh:
        check_head(path, fh.read(65536))
        fh.seek(0)
        lineno = 0
        for raw in fh:
            lineno += 1
            stats.update(raw)
            if len(raw) > ctx.max_line_bytes:
                ctx.warn(path, lineno, f"line of {len(raw)} bytes exceeds the limit; skipped")
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                ctx.warn(path, lineno, f"invalid UTF-8 at byte {exc.start}; read with "
                         "replacement characters")
                text = raw.decode("utf-8", errors="replace")
            if lineno == 1:
                text = text.lstrip("\ufeff")  # a byte order mark is no part of the start line
            yield lineno, text.rstrip("\r\n")
        stats.lines = lineno


class _Segmenter:
    """Cuts a session's lines into user turns, assistant replies and aider output messages."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.kind = ""  # "", "user", "reply", "tool"
        self.start = 0
        self.lines: list[str] = []
        self.open = False  # a tool message whose last line is still to come
        self.fences = Fences()

    def _emit(self) -> None:
        kind, lines = self.kind, self.lines
        self.kind, self.lines, self.open = "", [], False
        if kind == "user":
            self.session.user(self.start, [ln[5:].rstrip() for ln in lines])
        elif kind == "reply":
            while lines and not lines[-1].strip():
                lines.pop()
            self.session.reply(self.start, lines)
        elif kind == "tool":
            self.session.tool(self.start, [tool_text(lines[0])] + lines[1:])

    def _begin(self, kind: str, lineno: int, line: str) -> None:
        self.kind, self.start, self.lines = kind, lineno, [line]
        self.fences = Fences()
        if kind == "tool":
            self.open = not line.endswith("  ") and line.rstrip() != ">"
        elif kind == "reply":
            self.fences.track(line)

    def feed(self, lineno: int, line: str) -> None:
        """Take the next line of the session."""
        kind = self.kind
        if kind == "user" and is_user(line):
            self.lines.append(line)
            return
        if kind == "reply":
            if line.startswith(_TOKENS) or is_user(line):
                pass  # always ends a reply, even one with a fence left open
            elif self.fences.inside or not (is_tool(line) and line.endswith("  ")):
                self.lines.append(line)
                self.fences.track(line)
                return
        elif kind == "tool":
            if self.open and not (line.startswith(_TOKENS) or is_user(line)) \
                    and (self.fences.inside or not is_tool(line)):
                self.lines.append(line)
                self.fences.track(line)
                if line.startswith("^^^ ") or (line.endswith("  ") and not self.fences.inside):
                    self.open = False
                return
            if not self.open and line.strip() and not is_tool(line) and not is_user(line):
                # No blank line before it: the output message goes on (a multi-line subject).
                self.lines.append(line)
                self.open = not line.endswith("  ")
                return
        if kind:
            self._emit()
        if is_user(line):
            self._begin("user", lineno, line)
        elif is_tool(line):
            self._begin("tool", lineno, line)
        elif line.strip():
            self._begin("reply", lineno, line)

    def close(self) -> None:
        """End of the session."""
        if self.kind:
            self._emit()


def _started(stamp: str) -> str | None:
    """ISO form of the start line's time: aider writes local time without a zone, kept so."""
    try:
        # naive on purpose: the log does not say which zone its wall clock was in
        return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").isoformat()  # noqa: DTZ007
    except ValueError:
        return None


def _session_id(path: Path, started: str | None, line: int, seen: set[str]) -> str:
    """``aider-<start>-<hash of the file name>``: stable when the folder moves."""
    digest = hashlib.sha256(path.name.encode("utf-8", "replace")).hexdigest()[:8]
    when = started.replace("-", "").replace(":", "") if started else f"line{line}"
    sid = f"aider-{when}-{digest}"
    n = 2
    while sid in seen:
        sid = f"aider-{when}-{digest}-{n}"
        n += 1
    seen.add(sid)
    return sid


class Adapter(base.Adapter):
    """aider chat histories (Markdown)."""

    name = NAME
    description = "aider chat history (.aider.chat.history.md, one session per start line)"
    where = "<project>/.aider.chat.history.md"
    text = True

    def sniff(self, path: Path, head: bytes) -> int:
        """Claim a file whose first non-blank line is ``# aider chat started at``.

        The history's own file name is a hint: with it, the start line may come later.
        """
        if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(_OPENING):
            return 95
        if path.name.endswith(HISTORY_NAME) and b"\n" + _OPENING in head:
            return 90
        return 0

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield one trajectory per ``# aider chat started at`` line, in file order."""
        stats = ReadStats()
        trajs: list[Trajectory] = []
        seen: set[str] = set()
        session: Session | None = None
        segmenter: _Segmenter | None = None
        before = 0  # non-blank lines before the first start line
        first_issue = len(ctx.issues)

        def finish() -> None:
            if session is not None and segmenter is not None:
                segmenter.close()
                trajs.append(session.finish())
                trajs[-1].issues = list(ctx.issues[first_issue:])

        for lineno, line in _read_lines(path, ctx, stats):
            m = _HEADER.match(line)
            if m is not None:
                finish()
                first_issue = len(ctx.issues)
                started = _started(m.group(1))
                if started is None:
                    ctx.warn(path, lineno, f"start time {m.group(1)!r} is not "
                             "YYYY-MM-DD HH:MM:SS; the session has no start time")
                session = Session(path, ctx, _session_id(path, started, lineno, seen),
                                  started, lineno)
                segmenter = _Segmenter(session)
            elif segmenter is not None:
                segmenter.feed(lineno, line)
            elif line.strip():
                before += 1
                if before == 1:
                    ctx.warn(path, lineno, "text before the first '# aider chat started at' "
                             "line belongs to no session; skipped")
        finish()
        source = source_info(NAME, path, stats)
        for traj in trajs:
            traj.source = source
            yield traj
