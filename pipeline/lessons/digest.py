"""The digest a reader (a model, or the user's own coding agent) learns from: compact text.

One digest per session: the task as the user wrote it, how the run ended (the log's signals,
the final message, the files the run changed), then each episode as the steps themselves,
``#index`` first so a draft can cite them: the command or edit, its exit, the real error lines
of a failure, the first lines of a success, the agent's words in between. Everything quoted
from the log sits inside ``<<<LOG … LOG>>>`` blocks, redacted again and with home paths made
relative. A token budget is kept by shrinking outputs first; a session whose episodes still do
not fit is cut into chunks, at most ``MAX_CHUNKS``, the episodes with the most failures kept.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..detect.info import Info
from ..detect.outputs import body_of
from ..model import Step
from ..normalize import VOLATILE_KEYS, error_line
from ..privacy import redact
from .context import LINE_CHARS, Mention, mentions
from .delta import command_of, path_of
from .episodes import Episode, SessionEpisodes, failed
from .proof import NEW_KEYS, OLD_KEYS, edit_text
from .symptom import error_body
from .text import relativize, roots_of

OPEN, CLOSE = "<<<LOG", "LOG>>>"
_COMMAND_KEYS = ("command", "cmd", "CommandLine")
_BODY_KEYS = ("input", "patch", "code", "script", "content", "file_text")
_PLACE_KEYS = frozenset({"workdir", "cwd", "dir", "directory", "Cwd", "login", "shell"})
"""Where a command ran: the digest's paths are already relative to it."""
MAX_CHUNKS = 2
"""Digests sent for one session at most (with one send-back: at most 3 calls a session)."""
DEFAULT_BUDGET = 4000
"""Tokens of one digest (about 4 characters a token)."""


@dataclass(frozen=True)
class _Level:
    fail_lines: int
    fail_chars: int
    ok_lines: int
    ok_chars: int
    words: int
    edit: int
    task: int


# Tried in turn until the episodes fit; the last level is the floor a chunk is cut at.
_LEVELS = (
    _Level(fail_lines=14, fail_chars=1400, ok_lines=4, ok_chars=300, words=300, edit=900,
           task=2000),
    _Level(fail_lines=10, fail_chars=900, ok_lines=2, ok_chars=200, words=200, edit=300,
           task=1200),
    _Level(fail_lines=6, fail_chars=600, ok_lines=1, ok_chars=120, words=140, edit=160,
           task=800),
    # The floor: what a passing step printed gives way before a whole episode does.
    _Level(fail_lines=6, fail_chars=600, ok_lines=0, ok_chars=0, words=140, edit=160,
           task=800),
)


@dataclass(frozen=True)
class Digest:
    """One chunk of a session's digest."""

    text: str
    episodes: tuple[int, ...]
    """Start steps of the episodes it shows."""
    tokens: int
    """Estimated tokens."""


@dataclass(frozen=True)
class SessionDigest:
    """A session's digest chunks and what was left out."""

    chunks: tuple[Digest, ...]
    dropped: int
    """Episodes over the chunk cap, not shown."""
    raw_tokens: int
    """Estimated tokens of the whole transcript (every step's text and output)."""

    @property
    def tokens(self) -> int:
        """Tokens of every chunk."""
        return sum(c.tokens for c in self.chunks)


def estimate_tokens(text: str) -> int:
    """Rough token count (about 4 characters a token)."""
    return (len(text) + 3) // 4


def _fence(body: str) -> str:
    # A log line holding the fence must not close the block early.
    body = body.replace(CLOSE, "LOG>> >").replace(OPEN, "<< <LOG")
    return f"{OPEN}\n{body}\n{CLOSE}"


def _clip(text: str, chars: int) -> str:
    text = text.strip()
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _one(text: str, chars: int) -> str:
    return _clip(" ".join(text.split()), chars)


def error_lines(output: str, lines: int, chars: int) -> list[str]:
    """The real error lines of an output: head, the line the error is on, tail; bounded."""
    body = [ln for ln in error_body(output, keep_marks=True) if ln.strip()] or \
        [ln for ln in output.splitlines() if ln.strip()]
    if len(body) > lines:
        key = error_line("\n".join(body)) or ""
        at = next((i for i, ln in enumerate(body) if key and key.strip() in ln), len(body) - 1)
        # What follows the error line explains it (a panic's frames, a compiler's notes):
        # more lines after it than before.
        head, tail, after = lines // 4, lines // 4, lines // 3
        keep = sorted({*range(head), *range(max(0, at - 1), min(len(body), at + 1 + after)),
                       *range(len(body) - tail, len(body))})
        picked: list[str] = []
        for i, k in enumerate(keep):
            if i and k != keep[i - 1] + 1:
                picked.append("…")
            picked.append(body[k])
        body = picked
    out, used = [], 0
    for ln in body:
        ln = _indent(ln) + _clip(ln, 300)  # indentation kept: a continuation line is evidence
        if used + len(ln) > chars:
            out.append("…")
            break
        out.append(ln)
        used += len(ln) + 1
    return out


def _shown_line(line: str, mark: str) -> str:
    # A patch line's own mark (``+``, ``-``, a space) stays in front of its indentation.
    lead = line[0] if mark == "|" and line[:1] in ("+", "-") else ""
    line = line[len(lead):]
    body = line.lstrip(" \t")
    return lead + line[: len(line) - len(body)].replace("\t", "\\t") + _clip(body, 200)


def _lines(text: str, chars: int, mark: str) -> list[str]:
    """An edit's text line by line, indentation kept visible (tabs as ``\\t``), bounded.

    A long text keeps its head and its tail (an added line is as often at the end as at the
    start), with ``…`` between.
    """
    shown = [_shown_line(line, mark) for line in text.splitlines() or [""]]
    if sum(len(x) + 1 for x in shown) > chars:
        head: list[str] = []
        tail: list[str] = []
        used = 0
        for i in range(len(shown)):
            pick = shown[i // 2] if i % 2 == 0 else shown[len(shown) - 1 - i // 2]
            if used + len(pick) + 1 > chars or i // 2 >= len(shown) - 1 - i // 2:
                break
            (head if i % 2 == 0 else tail).append(pick)
            used += len(pick) + 1
        shown = [*head, "…", *reversed(tail)]
    return [f"    {mark} {x}" for x in shown]


def _changed_lines(old: str, new: str, chars: int) -> list[str]:
    """An applied edit too long to show whole: its changed lines, with unchanged neighbours.

    Changed lines are ``-`` / ``+``, each run with one unchanged neighbour (``=``), unchanged
    stretches cut (``…``), bounded. What the edit changed is the evidence; a head and tail
    may be only what it kept.
    """
    a, b = old.splitlines(), new.splitlines()
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(1))
    shown: list[str] = []
    used = 0
    for number, group in enumerate(groups):
        if number or group[0][1] > 0:
            shown.append("    …")
        for tag, i1, i2, j1, j2 in group:
            rows = [("=", x) for x in a[i1:i2]] if tag == "equal" else \
                [("-", x) for x in a[i1:i2]] + [("+", x) for x in b[j1:j2]]
            for mark, line in rows:
                text = f"    {mark} {_shown_line(line, mark)}"
                if used + len(text) > chars:
                    return [*shown, "    …"]
                shown.append(text)
                used += len(text) + 1
    if groups and groups[-1][-1][2] < len(a):
        shown.append("    …")
    return shown


def _options(step: Step) -> str:
    """A command's other arguments that change how it runs (``sandbox_permissions=…``)."""
    shown = [f"{k}={v}" for k, v in (step.args or {}).items()
             if k not in _COMMAND_KEYS and k not in VOLATILE_KEYS and k not in _PLACE_KEYS
             and isinstance(v, (str, int, float, bool)) and len(str(v)) <= 80]
    return f" [{', '.join(shown)}]" if shown else ""


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))].replace("\t", "\\t")


def _body(step: Step) -> str:
    """A call's multi-line text (a patch, a script, a heredoc), shown line by line.

    Its order and indentation are often the lesson (hunks out of file order, a tab too few).
    """
    command = command_of(step)
    if "\n" in command:
        return command
    text = edit_text(step, _BODY_KEYS)
    return text if "\n" in text else ""


def _action(step: Step, info: Info, level: _Level) -> str:
    if info.edit_old is not None or info.edit_new is not None:
        return f"edit {path_of(step, info)}"
    command = command_of(step)
    if command:
        return _one(command.split("\n", 1)[0], 400) + _options(step)
    label = info.label or step.tool or "?"
    return _one(label.split("\n", 1)[0], 300)


def _status(step: Step, info: Info) -> str:
    if not failed(step, info):
        return "ok"
    return f"exit {step.exit_code}" if step.exit_code not in (None, 0) else "error"


def render_step(step: Step, info: Info, level: _Level) -> list[str]:
    """The lines of one step in a digest (without the fence)."""
    if step.kind == "user":
        return [f"#{step.index} [user] {_one(step.output or step.text, level.words * 2)}"]
    if step.kind in ("message", "reasoning"):
        words = _one(step.output or step.text, level.words)
        return [f"#{step.index} [agent] {words}"] if words else []
    if step.kind != "tool":
        return [f"#{step.index} [{step.kind}] {_one(step.output or step.text, level.words)}"]
    lines = [f"#{step.index} [{step.tool or 'tool'}] {_action(step, info, level)} => "
             f"{_status(step, info)}"]
    if step.text and step.text.strip():
        lines.insert(0, f"#{step.index} [agent] {_one(step.text, level.words)}")
    if info.edit_old is not None or info.edit_new is not None:
        # The raw arguments: the detector's copy is stripped, and indentation is evidence.
        old = edit_text(step, OLD_KEYS) or info.edit_old or ""
        new = edit_text(step, NEW_KEYS) or info.edit_new or ""
        if len(old) + len(new) > 2 * level.edit and old and new and not failed(step, info):
            lines += _changed_lines(old, new, 2 * level.edit)
        else:  # short, or failed: the old text as the agent believed it is the lesson
            lines += _lines(old, level.edit, "-")
            lines += _lines(new, level.edit, "+")
    elif body := _body(step):
        rest = body.partition("\n")[2] if command_of(step) else body
        lines += _lines(rest, level.edit * 2, "|")
    output = step.output or ""
    if failed(step, info):
        lines.extend("    " + ln for ln in error_lines(output, level.fail_lines,
                                                       level.fail_chars))
    elif output.strip():
        # What the command printed, not the harness's exec header (Codex's "Exit code: 0").
        shown = [ln for ln in body_of(output).splitlines() if ln.strip()][: level.ok_lines]
        # Leading whitespace kept (tabs spelled out): an indentation mismatch is a lesson.
        lines.extend("    " + _indent(ln) + _clip(ln.lstrip(" \t"), level.ok_chars)
                     for ln in shown)
    return lines


def _episode_text(ep: Episode, number: int, session: SessionEpisodes, level: _Level,
                  mention: Mention | None) -> str:
    steps, infos = session.traj.steps, session.infos
    what = (f"failure at #{ep.start}" if ep.kind == "failure"
            else f"correction at #{ep.start}")
    facts = [what]
    if ep.target:
        facts.append(f"target {ep.target}")
    facts.append(f"{len(ep.failures)} failed step{'s' * (len(ep.failures) != 1)}")
    facts.append(f"worked at #{ep.worked}" if ep.worked is not None else "nothing on the "
                 "target worked within the window")
    hints = ([f"error class: {ep.error_class}"] if ep.error_class else []) + list(ep.hints)
    head = f"### Episode {number}: " + ", ".join(facts)
    if hints:
        head += "\nHints (from rules; may be wrong): " + "; ".join(hints)
    body: list[str] = []
    if mention is not None:
        # What the session had already shown about the missing name: often its cause.
        step, info = steps[mention.step], infos[mention.step]
        body.append(f"#{mention.step} [{step.tool or 'tool'}] {_action(step, info, level)} "
                    f"=> ok (before the episode; its lines naming `{mention.name}`)")
        body.extend("    " + _indent(ln) + _clip(ln.lstrip(" \t"), LINE_CHARS)
                    for ln in mention.lines)
    for i in ep.steps:
        body.extend(render_step(steps[i], infos[i], level))
    return head + "\n" + _fence("\n".join(body))


def _changed_files(session: SessionEpisodes) -> list[str]:
    last: dict[str, Step] = {}
    for step, info in zip(session.traj.steps, session.infos, strict=True):
        if step.kind == "tool" and not failed(step, info) and info.cls in ("write", "edit"):
            path = path_of(step, info)
            if path:
                last[path] = step
    return [f"{p} (last changed at #{s.index})" for p, s in list(last.items())[-12:]]


def _header(session: SessionEpisodes, level: _Level) -> str:
    traj = session.traj
    steps = traj.steps
    tools = sum(1 for s in steps if s.kind == "tool")
    fails = sum(1 for s, i in zip(steps, session.infos, strict=True) if failed(s, i))
    who = ", ".join(x for x in (traj.source.format, traj.agent, traj.model) if x)
    lines = [f"# Session {traj.id} ({who}): {len(steps)} steps, {tools} tool calls, "
             f"{fails} failed"]
    lines.append("## Task, as the user wrote it")
    lines.append(_fence(_clip(traj.task or "(none in the log)", level.task)))
    o = traj.outcome
    signals = [f"{k}: {v}" for k, v in (
        ("exit_status", o.exit_status), ("task_complete", o.task_complete),
        ("resolved", o.resolved), ("score", o.score),
        ("tests_passed_at_end", o.tests_passed_at_end),
        ("submitted_patch", o.submitted_patch)) if v is not None]
    lines.append("## How it ended")
    if signals:
        lines.append("Signals in the log: " + "; ".join(signals))
    changed = _changed_files(session)
    if changed:
        lines.append("Files the run changed: " + "; ".join(changed))
    final = o.final_message or next((s.output for s in reversed(steps)
                                     if s.kind == "message" and s.output), "")
    if final:
        lines.append("Final message:")
        lines.append(_fence(_clip(final, level.task // 2)))
    return "\n".join(lines)


def _finish(text: str, roots: list[str]) -> str:
    return relativize(redact(text), roots)


def build_digest(session: SessionEpisodes, budget: int = DEFAULT_BUDGET) -> SessionDigest:
    """The digest chunks of ``session`` within ``budget`` tokens each.

    Args:
        session: The session and its episodes (``episodes.build_episodes``).
        budget: Estimated tokens per chunk.

    Returns:
        At most ``MAX_CHUNKS`` chunks (none when the session has no episode).
    """
    traj = session.traj
    raw = sum(len(s.output or "") + len(s.text or "") + len(str(s.args or "")) for s in
              traj.steps) + len(traj.task or "")
    raw_tokens = (raw + 3) // 4
    if not session.episodes:
        return SessionDigest((), 0, raw_tokens)
    roots = roots_of(traj.extra.get("cwd"))
    found = [mentions(session, ep) for ep in session.episodes]  # the same at every level
    for level in _LEVELS:
        header = _finish(_header(session, level), roots)
        blocks = [_finish(_episode_text(ep, n, session, level, found[n - 1]), roots)
                  for n, ep in enumerate(session.episodes, start=1)]
        total = estimate_tokens(header) + sum(estimate_tokens(b) for b in blocks)
        if total <= budget:
            text = header + "\n## Episodes\n" + "\n\n".join(blocks)
            return SessionDigest((Digest(text, tuple(e.start for e in session.episodes),
                                         estimate_tokens(text)),), 0, raw_tokens)
    return _chunked(session, header, blocks, budget, raw_tokens)


def _chunked(session: SessionEpisodes, header: str, blocks: list[str], budget: int,
             raw_tokens: int) -> SessionDigest:
    """Episodes packed into at most ``MAX_CHUNKS`` chunks, those with most failures first."""
    eps = session.episodes
    room = max(budget - estimate_tokens(header) - 10, budget // 4)
    rank = sorted(range(len(eps)), key=lambda i: (-len(eps[i].failures),
                                                  eps[i].worked is None, i))
    bins: list[list[int]] = [[] for _ in range(MAX_CHUNKS)]
    used = [0] * MAX_CHUNKS
    dropped = 0
    for i in rank:
        cost = estimate_tokens(blocks[i])
        slot = next((b for b in range(MAX_CHUNKS) if used[b] + cost <= room), None)
        if slot is None:
            dropped += 1
            continue
        bins[slot].append(i)
        used[slot] += cost
    chunks = []
    for members in bins:
        if not members:
            continue
        members.sort()
        text = header + "\n## Episodes\n" + "\n\n".join(blocks[i] for i in members)
        chunks.append(Digest(text, tuple(eps[i].start for i in members), estimate_tokens(text)))
    return SessionDigest(tuple(chunks), dropped, raw_tokens)
