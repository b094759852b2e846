"""One aider session being built from its turns: steps, statuses, tokens, model.

The adapter (``aider.py``) cuts the file into turns and calls ``user``, ``reply`` and ``tool``
in file order; each aider output message settles what came before it (an edit applied or
failed, a command's output added). What a status is read from is documented in ``aider.py``.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..model import OutcomeHints, RawRef, SourceInfo, Step, Trajectory
from .aider_blocks import EditBlock, Reply, parse_reply
from .base import ParseContext
from .common import bounded, most_common
from .steps import StepLog, set_output, text_step_and_text, tool_step

AGENT = "aider"
_WHOLE = frozenset({"whole", "editor-whole"})
_MODEL = re.compile(r"^(?:Main model|Models?): (\S+)(?: (?:with|using) ([\w-]+) edit format)?")
_VERSION = re.compile(r"^Aider v(\S+)")
_COUNT = r"([\d.]+)([kKmM]?)"
_SENT = re.compile(_COUNT + r" sent\b")
_RECEIVED = re.compile(_COUNT + r" received\b")
_COST = re.compile(r"Cost: \$([\d.]+) message")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_SKIPPED = re.compile(r"^Skipping edits to (.+)$")
_REPORT = re.compile(r"^# \d+ SEARCH/REPLACE blocks? failed to match!")
_NO_MATCH = re.compile(
    r"^## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in (.+)$",
    re.MULTILINE)
_OTHERS_APPLIED = re.compile(r"^# The other \d+ SEARCH/REPLACE blocks? (?:were|was) applied",
                             re.MULTILINE)
_RUNNING = re.compile(r"^Running (.+)$")
_ADD_OUTPUT = re.compile(r"^Add (?:[\d.]+k tokens of )?command output to the chat\?.*?:\s*(\S*)$")
_ADDED = re.compile(r"^Added (\d+) lines? of output to the chat\.")
# The command line aider echoes at start: ``/home/me/.local/bin/aider --model x ...``.
_LAUNCH = re.compile(r"^\S*[/\\]aider(?:\.exe)?(?:\s|$)")
_QUESTION = re.compile(r"\(Y\)es/\(N\)o")
_SLASH = re.compile(r"^/([\w-]+)\s*(.*)$", re.DOTALL)
_PROMPT_MODES = frozenset({"code", "ask", "architect", "context"})
WHATS_WRONG = "What's wrong? Fix"
"""The prompt aider pre-fills after a failing ``/run`` whose output went to the chat."""
NONCONFORM = "The LLM did not conform to the edit format."


def _count(m: re.Match[str] | None) -> int | None:
    """``2.4k`` -> 2400, ``1.1M`` -> 1100000, ``448`` -> 448."""
    if m is None:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return round(value * {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()])


def _same_path(a: str, b: str) -> bool:
    def norm(p: str) -> str:
        p = p.strip().replace("\\", "/")
        return p[2:] if p.startswith("./") else p
    a, b = norm(a), norm(b)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


@dataclass
class _Edit:
    step: Step
    block: EditBlock
    status: str | None = None


@dataclass
class _Shell:
    step: Step
    via: str
    out: list[str] = field(default_factory=list)
    collecting: bool = True
    asked: bool = False  # "Add ... output to the chat?" was just answered
    added: bool = False
    failed: bool = False


class Session:
    """Steps and totals of one ``# aider chat started at`` run."""

    def __init__(self, path: Path, ctx: ParseContext, sid: str, started: str | None,
                 line: int) -> None:
        self.path, self.ctx, self.sid, self.started, self.line = path, ctx, sid, started, line
        self.log = StepLog(path)
        self.ids: set[str] = set()
        self.models: Counter[str] = Counter()
        self.model: str | None = None
        self.edit_format: str | None = None
        self.formats: list[str] = []  # every edit format the session used, in order
        self.version: str | None = None
        self.test_cmd: str | None = None
        self.task: str | None = None
        self.final: str | None = None
        self.tokens_in = self.tokens_out = 0
        self.saw_tokens = False
        self.cost = 0.0
        # State of the current reply's window (until the next reply or user turn).
        self.reply_step: Step | None = None
        self.last_reply: Reply | None = None
        self.edits: list[_Edit] = []
        self.nonconform: int | None = None  # line of an unanswered "did not conform"
        self.shells: list[_Shell] = []
        self.lint: tuple[int, list[str]] | None = None
        self.last_run: _Shell | None = None
        self.echo: str | None = None  # the prompt a /code X turn logs again next
        self.prev: list[str] = []  # the previous aider output message

    # ---- step helpers ----

    def _sid(self, line: int) -> str:
        sid, n = str(line), 2
        while sid in self.ids:
            sid, n = f"{line}.{n}", n + 1
        self.ids.add(sid)
        return sid

    def _ref(self, line: int) -> RawRef:
        return RawRef(self.log.where, line)

    def _shell(self, line: int, command: str, via: str, raw: str = "bash") -> _Shell:
        args = {"command": command} if command else {}
        step = self.log.add(tool_step(0, self._sid(line), raw, args, "", self.ctx,
                                      raw_ref=self._ref(line), tool="bash" if command else None,
                                      extra={"via": via}))
        shell = _Shell(step, via)
        self.shells.append(shell)
        return shell

    def _settle_shells(self) -> None:
        for sh in self.shells:
            extra = sh.step.extra
            if sh.added:
                extra["output_added"] = True
            # /test adds its output to the chat on a non-zero exit only: silence is exit 0.
            code = 0 if sh.via == "/test" and not sh.failed else None
            set_output(sh.step, "\n".join(sh.out), self.ctx, exit_code=code, is_error=sh.failed)
            if sh.failed and sh.step.error_signature is None:
                sh.step.error_signature = "non-zero exit"  # aider logs no output, no code
        self.shells = []

    def _settle_edits(self) -> None:
        for e in self.edits:
            if e.status is None:
                if self.nonconform is not None:
                    self._fail(e, NONCONFORM)
                else:
                    e.status = "unconfirmed"
                    e.step.extra["status"] = "unconfirmed"
        if self.nonconform is not None and not self.edits:
            self._error(self.nonconform, NONCONFORM)
        self.edits, self.nonconform = [], None

    def _settle_lint(self) -> None:
        if self.lint is None:
            return
        line, report = self.lint
        self.lint = None
        cmd = next((ln[len("## Running: "):].strip() for ln in report
                    if ln.startswith("## Running: ")), "")
        step = self.log.add(tool_step(
            0, self._sid(line), "bash" if cmd else "aider-lint", {"command": cmd} if cmd else {},
            "", self.ctx, raw_ref=self._ref(line), tool="bash" if cmd else None,
            extra={"via": "lint"}))
        set_output(step, "\n".join(report).strip(), self.ctx, is_error=True)
        if step.error_signature is None:
            step.error_signature = "lint errors"

    def _close_window(self) -> None:
        self._settle_edits()
        self._settle_lint()
        self._settle_shells()
        self.reply_step = self.last_reply = None

    def _error(self, line: int, text: str) -> None:
        self.log.add(text_step_and_text(0, self._sid(line), "error", text, self.ctx,
                                        raw_ref=self._ref(line), is_error=True)[0])

    def _apply(self, e: _Edit, output: str, status: str = "applied") -> None:
        e.status = status
        e.step.extra["status"] = status
        set_output(e.step, output, self.ctx, is_error=False)

    def _fail(self, e: _Edit, output: str, signature: str | None = None) -> None:
        e.status = "failed"
        e.step.extra["status"] = "failed"
        set_output(e.step, output, self.ctx, is_error=True, signature_text=signature)

    def _edit_step(self, block: EditBlock) -> _Edit:
        args = {"file_path": block.path, "old_string": block.search,
                "new_string": block.replace}
        step = self.log.add(tool_step(0, self._sid(block.line), None, args, "", self.ctx,
                                      raw_ref=self._ref(block.line), tool="edit",
                                      extra={"edit_format": self.edit_format or "diff"}))
        edit = _Edit(step, block)
        self.edits.append(edit)
        return edit

    # ---- turns ----

    def user(self, line: int, lines: list[str]) -> None:
        """A user turn (the ``#### `` prefixes already removed)."""
        text = "\n".join(lines).strip()
        if not text or text == "<blank>":
            return
        if self.last_run is not None and self.last_run.added and text == WHATS_WRONG:
            # aider offers this prompt only after a non-zero exit of the /run just added.
            self.last_run.failed = True
            self.last_run.step.extra["failure_signal"] = "next prompt: What's wrong? Fix"
        self._close_window()
        self.last_run = None
        if self.echo is not None and text == self.echo:
            self.echo = None  # /code X logs X again as its own turn: one step
            return
        self.echo = None
        m = _SLASH.match(text)
        command = m.group(1).lower() if m else ("run" if text.startswith("!") else None)
        arg = (m.group(2).strip() if m else text[1:].strip()) if command else text
        step, clean = text_step_and_text(0, self._sid(line), "user", text, self.ctx,
                                         raw_ref=self._ref(line),
                                         extra={"command": f"/{command}"} if command else None)
        self.log.add(step)
        if command in _PROMPT_MODES and arg:
            self.echo = arg
            if self.task is None:  # cut from the redacted text: "/code " is its first word
                self.task = bounded(clean.split(None, 1)[-1], redacted=True)
        elif command is None and self.task is None:
            self.task = bounded(clean, redacted=True)
        if command == "run" and arg:
            self.last_run = self._shell(line, arg, "/run")
        elif command == "test":  # no command: the --test-cmd of a config file we cannot see
            cmd = arg or self.test_cmd or ""
            self._shell(line, cmd, "/test", raw="bash" if cmd else "aider-test")

    def reply(self, line: int, lines: list[str]) -> None:
        """An assistant reply."""
        self._close_window()
        self.last_run = None
        self.echo = None
        whole = self.edit_format in _WHOLE
        reply = parse_reply(lines, line, whole=whole)
        for at, message in reply.malformed:
            self.ctx.warn(self.path, at, message)
        if reply.reasoning:
            # The turn's tokens go to its message, or to its reasoning when it is all it has.
            self.reply_step = self.log.add(text_step_and_text(
                0, self._sid(line), "reasoning", reply.reasoning, self.ctx,
                raw_ref=self._ref(line))[0])
        if self.model:
            self.models[self.model] += 1
        if reply.text or not reply.reasoning:
            step, clean = text_step_and_text(0, self._sid(line), "message", reply.text,
                                             self.ctx, raw_ref=self._ref(line))
            self.reply_step = self.log.add(step)
            self.final = clean
        for block in reply.edits:
            self._edit_step(block)
        self.last_reply = reply

    def tool(self, line: int, lines: list[str]) -> None:
        """One aider output message: ``lines[0]`` without its ``> ``, then continuations."""
        text = lines[0]
        full = "\n".join(lines)
        if self.lint is not None and not text.startswith("Attempt to fix lint errors?"):
            self.lint[1].extend(lines)
            return
        if text.startswith("Tokens: "):
            self._tokens(text)
        elif (m := _MODEL.match(text)) is not None:
            self.model = m.group(1)
            self.edit_format = m.group(2) or self.edit_format
            if self.edit_format and self.edit_format not in self.formats:
                self.formats.append(self.edit_format)
        elif (m := _VERSION.match(text)) is not None:
            self.version = self.version or m.group(1)
        elif (m := _APPLIED.match(text)) is not None:
            self._applied(line, m.group(1).strip())
        elif (m := _SKIPPED.match(text)) is not None:
            for e in self.edits:
                if e.status is None and _same_path(e.block.path, m.group(1)):
                    self._apply(e, text, "skipped")
        elif text.startswith(NONCONFORM):
            self.nonconform = line
        elif _REPORT.match(text):
            self._report(line, full)
        elif self.nonconform is not None and not text.startswith("http"):
            self._format_error(line, full)
        elif (m := _RUNNING.match(text)) is not None:
            for sh in self.shells:
                sh.collecting = False
            self._shell(line, m.group(1).strip(), "suggested")
        elif (m := _ADD_OUTPUT.match(text)) is not None:
            if self.shells:
                self.shells[-1].collecting = False
                self.shells[-1].asked = m.group(1).lower().startswith("y")
        elif (m := _ADDED.match(text)) is not None:
            self._added(line, text)
        elif text.startswith("Attempt to fix test errors?"):
            if not any(sh.via == "auto-test" for sh in self.shells):
                self._auto_test(line, text)
        elif text == "# Fix any errors below, if possible.":
            self.lint = (line, [])
        elif text.startswith("Attempt to fix lint errors?"):
            self._settle_lint()
        elif text.startswith("Error running command"):
            if self.shells:
                self.shells[-1].out.extend(lines)
                self.shells[-1].failed = True
        elif _LAUNCH.match(text):
            self._launch(text)
        elif _QUESTION.search(text):
            # A confirmation ends a command's output; the line before it was its subject
            # (the next suggested command, the file to create), not output.
            shell = self.shells[-1] if self.shells else None
            if shell is not None and shell.collecting:
                shell.collecting = False
                if self.prev and shell.out[-len(self.prev):] == self.prev:
                    del shell.out[-len(self.prev):]
        elif self.shells and self.shells[-1].collecting:
            self.shells[-1].out.extend(lines)
        self.prev = lines

    # ---- aider output ----

    def _tokens(self, text: str) -> None:
        sent, received = _count(_SENT.search(text)), _count(_RECEIVED.search(text))
        if sent is None and received is None:
            return
        self.saw_tokens = True
        self.tokens_in += sent or 0
        self.tokens_out += received or 0
        cost = _COST.search(text)
        step = self.reply_step
        if step is not None and step.tokens is None:
            step.tokens = (sent or 0) + (received or 0)
            step.extra["tokens_sent"], step.extra["tokens_received"] = sent, received
        if cost is not None:
            try:
                value = float(cost.group(1))
            except ValueError:
                return
            self.cost += value
            if step is not None:
                step.extra["cost"] = value

    def _applied(self, line: int, path: str) -> None:
        hits = [e for e in self.edits if e.status is None and _same_path(e.block.path, path)]
        for e in hits:
            self._apply(e, f"Applied edit to {path}")
        if hits or any(_same_path(e.block.path, path) for e in self.edits):
            return
        # No block of the reply names the file: a whole-file listing, or a format not read.
        listing = next((f for f in (self.last_reply.files if self.last_reply else [])
                        if _same_path(f.path, path)), None)
        if listing is not None:
            args = {"file_path": path, "content": listing.content}
            self.log.add(tool_step(0, self._sid(listing.line), None, args,
                                          f"Applied edit to {path}", self.ctx,
                                          raw_ref=self._ref(listing.line), tool="write",
                                          extra={"edit_format": self.edit_format,
                                                 "status": "applied"}))
            return
        self.log.add(tool_step(0, self._sid(line), None, {"file_path": path},
                               f"Applied edit to {path}", self.ctx, raw_ref=self._ref(line),
                               tool="write" if self.edit_format in _WHOLE else "edit",
                               extra={"edit_format": self.edit_format, "status": "applied"}))

    def _report(self, line: int, full: str) -> None:
        """The SearchReplaceNoExactMatch report: the blocks it names failed."""
        self.nonconform = None
        parts = _NO_MATCH.split(full)
        for k in range(1, len(parts) - 1, 2):
            path, body = parts[k].strip(), parts[k + 1]
            head = f"SearchReplaceNoExactMatch: This SEARCH block failed to exactly match " \
                   f"lines in {path}"
            body = body.split("\nThe SEARCH section must exactly match")[0]
            search = body.split("=======")[0].split("SEARCH\n", 1)[-1]
            open_ = [e for e in self.edits if e.status is None and _same_path(e.block.path, path)]
            match = next((e for e in open_ if e.block.search.strip() == search.strip()),
                         open_[0] if open_ else None)
            if match is None:
                # A block the reply's text did not show as one: read it from the report.
                replace = body.split("=======", 1)[-1].split(">>>>>>> REPLACE")[0]
                match = self._edit_step(EditBlock(path, search.rstrip("\n"),
                                                  replace.strip("\n"), line))
            self._fail(match, f"{head}\n{body.strip()}", signature=head)
        if _OTHERS_APPLIED.search(full):
            for e in self.edits:
                if e.status is None:
                    self._apply(e, "applied (aider: the other SEARCH/REPLACE blocks were "
                                "applied successfully)")

    def _format_error(self, line: int, full: str) -> None:
        """The reply's edits could not be read by aider at all: none of them was applied."""
        self.nonconform = None
        open_ = [e for e in self.edits if e.status is None]
        for e in open_:
            self._fail(e, f"{NONCONFORM}\n{full}")
        if not open_:
            self._error(line, f"{NONCONFORM}\n{full}")

    def _added(self, line: int, text: str) -> None:
        shell = self.shells[-1] if self.shells else None
        if shell is not None and (shell.asked or shell.via == "/test"):
            shell.added = True
            shell.out.append(text)
            shell.collecting = False
            if shell.via == "/test":  # /test adds its output only on a non-zero exit
                shell.failed = True
            return
        self._auto_test(line, text)

    def _auto_test(self, line: int, text: str) -> None:
        """The test run aider starts after applying edits (``--auto-test``) failed."""
        shell = self._shell(line, self.test_cmd or "", "auto-test",
                            raw="bash" if self.test_cmd else "aider-test")
        shell.out.append(text)
        shell.collecting = False
        shell.added = shell.failed = True

    def _launch(self, text: str) -> None:
        try:
            argv = shlex.split(text)
        except ValueError:
            return
        for i, arg in enumerate(argv):
            if arg == "--test-cmd" and i + 1 < len(argv):
                self.test_cmd = argv[i + 1]
            elif arg.startswith("--test-cmd="):
                self.test_cmd = arg.split("=", 1)[1]

    def finish(self) -> Trajectory:
        """The trajectory (its ``source`` is set by the adapter once the file is read)."""
        self._close_window()
        extra: dict[str, object] = {"start_line": self.line}
        if self.formats:
            extra["edit_formats"] = self.formats
        if self.cost:
            extra["cost"] = round(self.cost, 6)
        return Trajectory(
            id=self.sid,
            source=SourceInfo(format=AGENT, path=str(self.path)),
            agent=AGENT,
            agent_version=self.version,
            model=most_common(self.models) or self.model,
            task=self.task,
            steps=self.log.steps,
            outcome=OutcomeHints(final_message=bounded(self.final, redacted=True)),
            tokens_in=self.tokens_in if self.saw_tokens else None,
            tokens_out=self.tokens_out if self.saw_tokens else None,
            started_at=self.started,
            extra=extra,
        )
