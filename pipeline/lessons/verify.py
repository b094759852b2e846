"""The verifier: the log judges every claim of a draft, whoever wrote it.

A draft cites its evidence: the trap steps, the fix steps and the quoted error (``Evidence``).
Each rule below reads the session's steps and returns why the draft's claim does not hold, or
None. A draft is accepted only when no rule objects; the reasons go back to the writer once
(a model's send-back) and are then counted with the draft dropped. The same rules serve the
gemini and openai-compatible backends, drafts handed back by the user's own agent
(``orf submit``) and the offline heuristic.

The rules (``RULES``, in order; the first that objects is enough for a rule's step):
- the cited steps exist, the trap comes before the fix, every trap step failed (or is a
  person's correction);
- the quoted error is in the output of the cited trap steps;
- every fix step succeeded (a command whose exit was 0 and that did not print that it did
  nothing, an edit that applied); a search that printed nothing found nothing, whatever its
  exit status, and an output of only ``[]`` is an empty answer; a command whose exit status
  is a filter's (``| tail``, ``|| true``) did not succeed when it printed a failure count;
- each command of the validated path ran after the trap and succeeded (a general form with
  ``<placeholders>`` counts when it cites the concrete step, a fix step);
- the fix acts on the trap's target, or explains itself: a state change (an edit, an install)
  followed by the target working, or a corrected invocation whose changed words the error
  names; a different command that merely succeeded is not a fix;
- the trap's error does not come back on the same target after the fix;
- no fix edit is undone later;
- a cause the log contradicts is refused (``contradictions.CONTRADICTIONS``): a patch called
  stale whose expected line a read after the failure shows in the file, a file called unread
  that a step read before the refusal with no compaction between (``cause_not_contradicted``);
- no secret, no instruction aimed at future agents, no home path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..detect.info import Info
from ..detect.outputs import body_of
from ..model import Draft, Step
from ..normalize import HOME_PATH, error_line
from .contradictions import cause_not_contradicted
from .delta import command_of, did_nothing, path_of
from .episodes import (
    SEGMENTS,
    SessionEpisodes,
    failed,
    is_correction,
    program_and_sub,
    target_of,
)
from .proof import NEW_KEYS, OLD_KEYS, edit_text, key_line

_WS = re.compile(r"\s+")
_WRAPPER = re.compile(r"^(?:/bin/)?(?:ba|z)?sh\s+-l?c\s+(['\"]?)(.*)\1\s*$", re.DOTALL)
_DIRS = re.compile(r"(?:[\w.~@+-]*/)+(?=[\w.@+-])")
_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.|\[\.\.\.\])\s*")
_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_WILDCARD = re.compile(r"^(?:<[^>]*>|\{[^}]*\}|\$\w+|\$\{[^}]*\}|…|\.\.\.|\*|[A-Z_]{3,})$")
_TOKEN_CHARS = re.compile(r"[\w.:/@=+-]{2,}")
# An error about how a program was called: the corrected invocation is the fix.
_USAGE = re.compile(r"usage:|unexpected argument|unrecognized|unknown (?:option|flag|command|"
                    r"argument)|invalid (?:option|argument|value)|not a valid|no such "
                    r"(?:option|command|subcommand)|takes \d+|expected \d+ argument|"
                    r"is not recognized|not supported|exceeds (?:the )?maxim|too (?:large|long|"
                    r"many)|use (?:the )?\w+ (?:and \w+ )?param", re.IGNORECASE)
# "Instead of `x`", "`x` -> `y`": the span names the failing call, not a step to run.
_NOT_THIS = re.compile(r"(?:instead of|rather than|not|never|avoid|don'?t|do not|replace|"
                       r"from)\s*:?\s*$", re.IGNORECASE)
_PRINTED = re.compile(r"\s*(?:->|→|\((?:here )?it printed|\(it printed)")
_SAID = ("user", "error", "system")
MIN_QUOTE = 6
"""A quoted error shorter than this (after folding whitespace) proves nothing."""
FILTERS = frozenset({"head", "tail", "grep", "egrep", "rg", "wc", "sort", "uniq", "cat", "less",
                     "more", "sed", "awk", "cut", "tr", "tee", "column", "jq", "xargs"})
"""Programs that, last in a pipe, give the shell their exit status, not the command's."""
EMPTY_RESULTS = frozenset({"[]", "{}", "null", "[ ]", "{ }"})
"""A query's whole output that says it found nothing (``gh pr list --json …`` printing ``[]``)."""
SEARCHES = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack", "find", "git grep"})
"""Programs whose "found nothing" is silence (and an exit 1 a pipe or ``|| true`` hides)."""
_LAST_COMMAND = re.compile(r"\s*(?:&&|;)\s*")
_PIPE = re.compile(r"(?<![|>&])\|&?(?!\|)")
_OR_TRUE = re.compile(r"\|\|\s*(?:true|:)\s*$")
_FAILURE_COUNT = re.compile(r"\b[1-9]\d* (?:failed|failures?|errors?)\b|^(?:FAIL|FAILED|ERROR)\b",
                            re.MULTILINE)


@dataclass(frozen=True)
class Evidence:
    """What a draft cites from the log."""

    trap_steps: tuple[int, ...]
    """``Step.index`` of the failing steps (or the person's correction) the trap is about."""
    fix_steps: tuple[int, ...]
    """``Step.index`` of the steps that fixed it, in order."""
    error: str
    """The error as quoted from the trap steps' output (pieces may be joined by ``…``)."""


@dataclass(frozen=True)
class Proposal:
    """A draft with its evidence, before the verifier has read the log."""

    draft: Draft
    evidence: Evidence
    scope: str = "general"
    """``repository`` for a lesson about this repository, ``general`` otherwise."""


Rule = Callable[[Proposal, SessionEpisodes], "str | None"]


def _fold(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def _tool_steps(session: SessionEpisodes, indices: tuple[int, ...]) -> list[tuple[Step, Info]]:
    return [(session.traj.steps[i], session.infos[i]) for i in indices]


def _label(step: Step, info: Info) -> str:
    text = command_of(step) or info.label or step.tool or step.kind
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79] + "…"


def cited_steps(p: Proposal, s: SessionEpisodes) -> str | None:
    """The cited steps exist, the trap is before the fix, and the trap failed."""
    n = len(s.traj.steps)
    ev = p.evidence
    if not ev.trap_steps:
        return "no trap step cited"
    if not ev.fix_steps:
        return "no fix step cited"
    missing = [i for i in (*ev.trap_steps, *ev.fix_steps) if not 0 <= i < n]
    if missing:
        return f"cited step #{missing[0]} is not in the session (it has {n} steps)"
    if min(ev.fix_steps) <= max(ev.trap_steps):
        return f"fix step #{min(ev.fix_steps)} does not come after trap step " \
               f"#{max(ev.trap_steps)}"
    for step, info in _tool_steps(s, ev.trap_steps):
        # A failed call, a person's correction, or what the harness said went wrong (a logged
        # error, its feedback as a user turn): the quoted error must still be in it.
        if not (failed(step, info) or is_correction(step) or step.kind in _SAID):
            return f"trap step #{step.index} did not fail ({_label(step, info)})"
    return None


def _pieces(quote: str) -> list[str]:
    """The quote's pieces (split at ``…``), folded, each path cut to its last part."""
    return [x for x in (_fold(_DIRS.sub("", piece)) for piece in _ELLIPSIS.split(quote)) if x]


def _said(step: Step) -> str:
    # Readers see paths relative to the repository (``.git/index.lock``), the log has them
    # absolute: both sides keep only a path's last part.
    return _fold(_DIRS.sub("", step.output or step.text or ""))


def error_quoted(p: Proposal, s: SessionEpisodes) -> str | None:
    """The quoted error is in the output of the cited trap steps (pieces may be in several)."""
    pieces = _pieces(p.evidence.error)
    if sum(len(x) for x in pieces) < MIN_QUOTE:
        return "no error quoted from the trap steps"
    outputs = [_said(step) for step, _ in _tool_steps(s, p.evidence.trap_steps)]
    if all(any(piece in out for out in outputs) for piece in pieces):
        return None
    shown = p.evidence.error if len(p.evidence.error) <= 60 else p.evidence.error[:59] + "…"
    steps = ",".join(f"#{i}" for i in p.evidence.trap_steps)
    return f"the quoted error {shown!r} is not in the output of trap steps {steps}"


def _last_command(command: str) -> str:
    """The last command of a line (after ``&&`` and ``;``): the one whose status is reported."""
    return _LAST_COMMAND.split(_unwrap(command).strip())[-1]


def masked_by(command: str) -> str | None:
    """The program whose exit status the shell reports instead of the command's, if any.

    ``pytest | tail -5`` exits as ``tail`` does, ``cmd || true`` always 0: such an exit 0
    says nothing about the command.
    """
    last = _last_command(command)
    if _OR_TRUE.search(last):
        return "|| true"
    stages = _PIPE.split(last)
    words = _bare(stages[-1].split()) if len(stages) > 1 else []
    return words[0] if words and words[0] in FILTERS else None


def _search(command: str) -> bool:
    """The last command of the line is a search (its first pipe stage)."""
    words = _bare(_PIPE.split(_last_command(command))[0].split())
    return bool(words) and (words[0] in SEARCHES or " ".join(words[:2]) in SEARCHES)


def fix_succeeded(p: Proposal, s: SessionEpisodes) -> str | None:
    """Every cited fix step succeeded."""
    for step, info in _tool_steps(s, p.evidence.fix_steps):
        if step.kind != "tool":
            continue  # a person's instruction or the agent's own note cited as context
        if failed(step, info):
            line = error_line(step.output or "") or "an error"
            return f"fix step #{step.index} failed ({_label(step, info)}: {line[:80]})"
        if info.shell and did_nothing(step):
            return f"fix step #{step.index} printed that it changed nothing"
        command = command_of(step) if info.shell else ""
        masked, output = masked_by(command), body_of(step.output or "")
        if command and _search(command) and not output.strip():
            return f"fix step #{step.index} is a search that printed nothing: it found nothing"
        if output.strip() in EMPTY_RESULTS:
            return (f"fix step #{step.index} printed only `{output.strip()}`: an empty result "
                    "is no answer")
        if masked and (count := _FAILURE_COUNT.search(output)):
            return (f"fix step #{step.index} printed `{count.group(0)}`; its exit status is "
                    f"`{masked}`'s, not the command's")
    return None


def _programs(s: SessionEpisodes) -> set[str]:
    """Programs the session ran: the detector's main program and each command's first word."""
    progs: set[str] = set()
    for step, info in zip(s.traj.steps, s.infos, strict=True):
        if info.shell:
            first = _bare(_unwrap(command_of(step)).split())
            progs.update(x for x in (info.program, first[0] if first else "") if x)
    return progs


def _bare(words: list[str], dirs: bool = True) -> list[str]:
    """Words of one command without the environment before it.

    By default the directories of paths are cut too: readers see repository-relative paths.
    """
    while words and re.fullmatch(r"\w+=\S*", words[0]):
        words = words[1:]
    return [_DIRS.sub("", w) for w in words] if dirs else words


def _unwrap(command: str) -> str:
    """``bash -lc 'git status'`` -> ``git status`` (Codex runs every command so)."""
    m = _WRAPPER.match(command)
    return m.group(2) if m else command


def _segment_matches(words: list[str], seg: str) -> bool:
    toks = _bare(seg.split())
    words = _bare(words)
    if not toks or not words or toks[0] != words[0]:
        return False
    fixed = [w for w in words if not _WILDCARD.match(w)]
    it = iter(toks)
    return all(any(w == t or (len(w) > 3 and w in t) for t in it) for w in fixed)


def _matches(span: str, command: str) -> bool:
    """Each piece of the span (``a && b``) matches a piece of ``command``, in order.

    A piece matches when its first word is the command's and its other words appear in order
    (``<placeholders>`` skip).
    """
    pieces = [p.split() for p in SEGMENTS.split(_unwrap(span)) if p.split()]
    segs = [seg for seg in SEGMENTS.split(_unwrap(command)) if seg.split()]
    if not pieces or not any(not _WILDCARD.match(w) for p in pieces for w in p):
        return False
    it = iter(segs)
    return all(any(_segment_matches(words, seg) for seg in it) for words in pieces)


def _mentioned(text: str, start: int, end: int) -> bool:
    """The span is named as what not to run, or as a probe quoted with what it printed."""
    return bool(_NOT_THIS.search(text[max(0, start - 40):start])
                or _PRINTED.match(text[end:end + 40]))


def path_ran(p: Proposal, s: SessionEpisodes) -> str | None:
    """Each command of the validated path ran after the trap and succeeded."""
    progs = _programs(s)
    last_trap = max(p.evidence.trap_steps)
    steps = s.traj.steps
    text = p.draft.validated_path
    for m in _SPAN.finditer(text):
        span = " ".join(m.group(2).split())
        words = span.split()
        if len(words) < 2 or words[0] not in progs or _mentioned(text, m.start(), m.end()):
            continue  # not a command of this session (a file name, an error), or the trap's
        general = any(_WILDCARD.match(w) for w in words)
        ran_ok, ran_bad = None, None
        for k in range(last_trap + 1, len(steps)):
            step, info = steps[k], s.infos[k]
            if not info.shell or not _matches(span, command_of(step)):
                continue
            if failed(step, info):
                ran_bad = ran_bad if ran_bad is not None else k
            elif not general or k in p.evidence.fix_steps:
                ran_ok = k
                break
        if ran_ok is not None:
            continue
        if ran_bad is not None:
            return f"the validated command `{span}` failed at step #{ran_bad}"
        if general:
            return f"the general command `{span}` cites no fix step it generalizes"
        return f"the validated command `{span}` never ran after the trap"
    return None


def _changes_state(step: Step, info: Info) -> bool:
    return step.kind == "tool" and not failed(step, info) and bool(
        info.writes or info.cls in ("write", "edit", "install") or info.unknown_mutation
        or info.env_change or info.git_restore)


def _words(text: str) -> set[str]:
    return set(_TOKEN_CHARS.findall(text.lower()))


def _call(step: Step) -> str:
    """A call as words: the shell command, else the values of the tool's arguments."""
    command = command_of(step)
    if command:
        return command
    return " ".join(str(v) for _, v in sorted((step.args or {}).items())
                    if isinstance(v, (str, int, float)))


def _akin(a: str, b: str) -> bool:
    return len(a) >= 3 and len(b) >= 3 and (a in b or b in a)


def _explained_call(trap: tuple[Step, Info], fix: tuple[Step, Info]) -> bool:
    """A corrected call: the same call with more, or an error naming what changed.

    The same call with something added (an option, the environment, a ``cd``), a word swapped
    for a kindred one (``python`` -> ``python3``), a usage error, or an error that names a word
    the fix changed; another query that happened to pass is none of these.
    """
    (t, _), (f, _) = trap, fix
    before, after = _words(_call(t)), _words(_call(f))
    if not before:
        return False
    removed, added = before - after, after - before
    if all(any(_akin(r, a) for a in added) for r in removed):
        return True
    # ``gofmt -l . && go test ./...`` -> ``GOCACHE=/tmp/c go test ./...``: the failing piece
    # of a chain, run again with something added.
    target = target_of(f, fix[1])
    for seg in SEGMENTS.split(_unwrap(command_of(t))):
        words = _bare(seg.split(), dirs=False)
        if words and program_and_sub(" ".join(words), words[0]) == target and \
                _words(" ".join(words)) <= after:
            return True
    said = t.output or ""
    if _USAGE.search(said):
        return True
    said_words = _words(said)
    return any(w in said_words for w in removed | added if len(w) > 1)


def fix_on_target(p: Proposal, s: SessionEpisodes) -> str | None:
    """The fix acts on the trap's target, or the steps it cites explain it."""
    steps, infos = s.traj.steps, s.infos
    traps = [(steps[i], infos[i]) for i in p.evidence.trap_steps if steps[i].kind == "tool"]
    if not traps:
        return None  # a correction: the person's words are the evidence
    targets = {target_of(st, inf) for st, inf in traps}
    commands = {" ".join(command_of(st).split()) for st, _ in traps}
    first_fix = min(p.evidence.fix_steps)
    changed = any(_changes_state(steps[k], infos[k]) for k in range(max(p.evidence.trap_steps)
                                                                   + 1, first_fix + 1))
    for k in p.evidence.fix_steps:
        step, info = steps[k], infos[k]
        if step.kind != "tool":
            continue
        # A shell command may redo any call (``grep`` for a broken Grep tool); another tool
        # call only one of its own kind.
        same_call = any(_explained_call(t, (step, info)) for t in traps
                        if info.shell or t[0].tool == step.tool)
        if target_of(step, info) in targets or same_call:
            if " ".join(command_of(step).split()) in commands and changed:
                return None  # the same call, passing after a change in between
            if same_call:
                return None
            if not info.shell and changed:
                return None
        if _changes_state(step, info):
            written = {*info.writes, path_of(step, info)}
            if targets & written:
                return None  # the fix rewrote the file the trap failed on
            if any(target_of(steps[j], infos[j]) in targets and not failed(steps[j], infos[j])
                   for j in range(k + 1, len(steps))):
                return None  # a change, then the target worked
    target = ", ".join(sorted(t for t in targets if t)) or "the trap's target"
    return (f"no fix step acts on {target} with a change the log explains (a different "
            f"command that succeeded is not a fix)")


def error_gone(p: Proposal, s: SessionEpisodes) -> str | None:
    """After the fix, the trap's error does not come back on the same target."""
    steps, infos = s.traj.steps, s.infos
    traps = [(steps[i], infos[i]) for i in p.evidence.trap_steps if steps[i].kind == "tool"]
    targets = {target_of(st, inf) for st, inf in traps}
    sigs = {st.error_signature for st, _ in traps if st.error_signature}
    pieces = _pieces(p.evidence.error)
    for k in range(max(p.evidence.fix_steps) + 1, len(steps)):
        step, info = steps[k], infos[k]
        if not failed(step, info) or target_of(step, info) not in targets:
            continue
        out = _said(step)
        if (step.error_signature and step.error_signature in sigs) or \
                (pieces and all(x in out for x in pieces)):
            return f"the trap's error came back at step #{k} after the fix " \
                   f"({_label(step, info)})"
    return None


def not_undone(p: Proposal, s: SessionEpisodes) -> str | None:
    """No fix edit is taken out again later (a revert, a restore)."""
    steps, infos = s.traj.steps, s.infos
    for k in p.evidence.fix_steps:
        step, info = steps[k], infos[k]
        if step.kind != "tool" or info.cls not in ("edit", "write"):
            continue
        path = path_of(step, info)
        key = key_line(info.edit_new or edit_text(step, NEW_KEYS))
        for j in range(k + 1, len(steps)):
            later, linfo = steps[j], infos[j]
            if later.kind != "tool" or failed(later, linfo):
                continue
            if linfo.git_restore and (path in linfo.git_restore or "*" in linfo.git_restore):
                return f"the fix at #{k} was undone at step #{j} ({_label(later, linfo)})"
            old = linfo.edit_old or edit_text(later, OLD_KEYS)
            new = linfo.edit_new if linfo.edit_new is not None else edit_text(later, NEW_KEYS)
            if key and path_of(later, linfo) == path and key in old and \
                    new.count(key) < old.count(key):
                return f"the fix at #{k} was undone at step #{j}"
    return None


def clean(p: Proposal, s: SessionEpisodes) -> str | None:
    """No secret, no instruction aimed at future agents, no home path."""
    from ..llm.screen import screen_draft

    problems = [r for r in screen_draft(p.draft) if not r.startswith("orf:")]
    if problems:
        return problems[0]
    d = p.draft
    for name, text in (("title", d.title), ("description", d.description), ("trap", d.trap),
                       ("insight", d.insight), ("validated path", d.validated_path),
                       ("checklist", "\n".join(d.checklist))):
        if HOME_PATH.search(text):
            return f"the {name} holds a home path"
    return None


RULES: tuple[tuple[str, Rule], ...] = (
    ("cited_steps", cited_steps),
    ("error_quoted", error_quoted),
    ("fix_succeeded", fix_succeeded),
    ("path_ran", path_ran),
    ("fix_on_target", fix_on_target),
    ("error_gone", error_gone),
    ("not_undone", not_undone),
    ("cause_not_contradicted", cause_not_contradicted),
    ("clean", clean),
)
"""Every rule, by name (the name is what summaries and the ledger count)."""


def verify(p: Proposal, session: SessionEpisodes) -> list[tuple[str, str]]:
    """Why the log does not support ``p``: (rule, reason) pairs, empty when it does.

    A draft whose steps do not exist is not read further: the other rules need them.
    """
    problems: list[tuple[str, str]] = []
    for name, rule in RULES:
        why = rule(p, session)
        if why is not None:
            problems.append((name, why))
            if name == "cited_steps":
                break
    return problems
