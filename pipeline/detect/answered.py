"""Already answered: asking again what an earlier step answered, before its state changed.

A command asks a question about some state; asking again before any of that state changed
learns nothing.

Each observing or checking command is read as a *question* (``question``) about one piece of
state, with the kinds of change its answer depends on (``DEPENDS``):

- ``output``: what a program prints for a target (a lint run, a typecheck, ``uv pip list``,
  ``git show x:f``), with output filters stripped, so ``lint | grep error`` and ``lint | tail``
  ask one question. It depends on every change of files or environment, except removing
  build output or caches (``rm -rf dist`` / ``node_modules/.cache``) when the tool then
  answered from its cache (``cache hit, replaying logs``): it never looked at what was
  removed. Forced to run without the build output, it asked something new;
- ``package``: whether a package is installed (``uv pip show x``, ``pip list | grep x``),
  which only installs and environment changes move (an install that printed that it changed
  nothing moved nothing: ``effects.no_op_install``);
- ``task``: what a sub-agent launched with the same instructions reports, which any change
  moves.

A step is already answered when an earlier step asked the same question and no change its
question depends on happened since. Exemptions: the output is new although the filters are
the same (something outside the log changed), the question is about live state (a CI run, a
container, a remote: ``_LIVE``), and a question asked with another filter long after (
``REFILTER_WINDOW`` steps: a new filter is then a new question). Reruns of the identical
command with nothing changed at all are left to ``rerun_unchanged`` and ``exact_repeat``;
this family adds only what needs the model: other filters, other spellings of a package
query, and changes the answer does not depend on. The pass is linear: one dict of questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import brief, make_finding
from .classify_shell import BUILD_DIRS, is_cleanup
from .effects import no_op_install
from .info import Info, shape
from .masks import masked
from .programs import program
from .rerun_unchanged import cleaned_reruns

REFILTER_WINDOW = 20
"""Steps within which the same output asked through another filter is the same question."""

ASKING = frozenset({"run", "test", "lint", "build", "inspect", "search", "list"})
"""Classes of shell step whose output answers a question about the state (the programs piped
after it must only select from it: ``programs.Program.selects``)."""

DEPENDS: dict[str, frozenset[str]] = {
    "output": frozenset({"files", "packages", "environment", "context"}),
    "package": frozenset({"packages", "environment", "context"}),
    # A person's turn changes none of them: it does not excuse a re-read (the labels' rule
    # book), a check asked again ("verify it works first" after it was verified), nor a
    # sub-agent sent again with the same instructions (its notices arrive as turns).
    "task": frozenset({"files", "packages", "environment", "clean", "context"}),
}
"""Which kinds of change (``change_kinds``) each question's answer depends on."""

# Questions whose answer changes by itself: CI runs and PRs, containers, clusters, remotes,
# clocks and processes. Asking again is polling, never an answered question.
_LIVE = re.compile(
    r"^(gh\s+(run|pr|api|workflow|release)|docker|podman|kubectl|helm|curl|wget|ssh|"
    r"git\s+(fetch|ls-remote|pull|push)|date|ps|top|uptime|sleep|tail\s+-[fF]|journalctl|"
    r"systemctl|lsof|netstat|ss|nvidia-smi)\b")
# `uv pip show x`, `pip3 show x y`, `python -m pip show x`: which of the named packages exist.
_PIP_SHOW = re.compile(r"^(?:uv\s+|python[\d.]*\s+-m\s+)?pip3?\s+show\s+(.+)$")
_PIP_LIST = re.compile(r"^(?:uv\s+|python[\d.]*\s+-m\s+)?pip3?\s+(list|freeze)\b")
# How a build tool got its answer: its cache, replays, timings (turbo, nx, gradle, bazel).
# Only their own cache report: an error line that says "cached" is part of the answer.
_CHATTER = re.compile(r"\bcache (hit|miss|bypass)\b|replaying logs|^Cached:|\b\d+ cached\b|"
                      r"read the output from the cache|"
                      r"^\s*Time:|FULL TURBO|\bup-to-date\b|\bFROM-CACHE\b", re.I)
# The tool answered from its cache (turbo, nx, gradle, bazel): removing build output or a
# cache it does not use changed nothing it looked at.
_REPLAYED = re.compile(r"cache hit, replaying|FULL TURBO|\bFROM-CACHE\b|\bUP-TO-DATE\b|"
                       r"existing outputs match the cache", re.I)
_SETUP_FIRST = re.compile(r"\s*(rm|make\s+clean|cargo\s+clean|mkdir)\b")
_CAP = re.compile(r"\b(?:head|tail)\s+(?:-n\s*|--lines[= ]?|-)?(\d+)\b")


@dataclass(slots=True)
class _Asked:
    step: int
    filters: str
    subjects: frozenset[str]
    version: tuple[int, ...]
    cleans: int


def change_kinds(step: Step, info: Info) -> frozenset[str]:
    """Kinds of state a step changed: files, packages, environment, person, context, clean.

    ``clean`` is a change that only removed build output or caches; an install that printed
    that it changed nothing and a failed step change nothing.
    """
    if step.kind == "user":
        return frozenset({"person"})
    if step.kind == "compaction":
        return frozenset({"context"})  # the answers shown before it left the agent's context
    if step.kind != "tool" or info.cls == "none":
        return frozenset()
    if info.state_after == info.state and not info.env_change:
        return frozenset()
    if info.cls == "install":
        return frozenset() if no_op_install(step, info) else frozenset({"packages"})
    if info.env_change:
        return frozenset({"environment"})
    if _clears_only(info):
        return frozenset({"clean"})
    if info.extra.get("script_unknown") or info.cls in ("vcs", "build") or (
            info.unknown_mutation and info.cls not in ("edit", "write")):
        return frozenset({"files", "packages"})
    return frozenset({"files"})


def _clears_only(info: Info) -> bool:
    """The step's only writes remove build output or caches (``rm -rf dist``)."""
    if not info.shell or not info.writes or info.git_restore or info.extra.get(
            "script_targets") or info.extra.get("script_unknown") or not all(
                BUILD_DIRS.search(w) for w in info.writes):
        return False  # cheap tests first: parsing again is the cost of a large session
    segs = info.runs()
    writers = [g for g in segs if g.redirects or g.argv[0] in ("rm", "mv", "cp", "tee")]
    return bool(writers) and all(is_cleanup(g.argv) and not g.redirects for g in writers)


def question(step: Step, info: Info) -> tuple[str, str, str, frozenset[str]] | None:
    """The question a step asks: ``(topic, subject, filters, package names)``, or None.

    ``subject`` is the producing command in canonical form (cleanup and ``cd`` segments in
    front left out, filters stripped); ``filters`` is the text piped after it.
    """
    if step.kind != "tool":
        return None
    if info.cls == "task":
        return ("task", info.canon, "", frozenset())
    if not info.shell or info.cls not in ASKING or "<<" in info.command:
        return None
    if "|" not in info.command and not _SETUP_FIRST.match(info.command):
        # No filter and no clean-up in front: the canonical form is the subject (no second
        # parse, which a session of a million steps would not find in the parse cache).
        names = _packages(info.canon, info.filters())
        if names:
            return ("package", "", "", names)
        return None if _LIVE.match(info.canon) else ("output", info.canon, "", frozenset())
    return _shell_question(info)


def _shell_question(info: Info) -> tuple[str, str, str, frozenset[str]] | None:
    heads = info.runs()
    pipes = [g for g in info.segments() if g.piped]
    while len(heads) > 1 and is_cleanup(heads[0].argv):
        heads = heads[1:]  # `rm -rf dist && tsc`: clearing output is set-up, tsc the question
    if not heads or any(not program(g.argv[0]).selects for g in pipes):
        return None
    subject = " && ".join(info.form(g) for g in heads)
    if _LIVE.match(subject):
        return None
    piped = info.filters()
    filters = " | ".join(" ".join(argv) for argv in piped)
    names = _packages(subject, piped)
    if names:
        return ("package", "", filters, names)
    return ("output", subject, filters, frozenset())


def _packages(subject: str, filters: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    """Package names a command asks about (``pip show a b``, ``pip list | grep -i a``)."""
    m = _PIP_SHOW.match(subject)
    if m:
        return frozenset(_norm(w) for w in m.group(1).split() if not w.startswith("-"))
    if _PIP_LIST.match(subject):
        asked = _terms(filters)
        return frozenset(_norm(w) for w in (asked[1] if asked else ()) if len(w) >= 3)
    return frozenset()


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


@register("already_answered")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Steps whose question an earlier step answered with nothing it depends on changed."""
    infos = infos_for(traj)
    # The same failing run after only a clean-up, failing the same way, is rerun_cleaned's
    # (found once, when a first candidate needs it).
    cleaned: set[int] | None = None
    counts = dict.fromkeys(("files", "packages", "environment", "person", "clean", "context"),
                           0)
    asked: dict[tuple[str, str], _Asked] = {}
    chains: dict[int, list[int]] = {}
    for i, (step, info) in enumerate(zip(traj.steps, infos, strict=True)):
        q = question(step, info)
        if q is not None:
            topic, subject, filters, names = q
            version = tuple(counts[k] for k in sorted(DEPENDS[topic]))
            key = (topic, subject)
            before = asked.get(key)
            if topic == "package":
                # One slot per package: `grep -i event` asks about `events-py` (a name
                # inside another is the same package); `pip show b` is not `pip show a`.
                key, before = _package_slot(asked, names)
            # Build output removed since (by a step between or by this one's own `rm -rf`):
            # only an answer replayed from a cache did not look at what was removed.
            removed = before is not None and (before.cleans != counts["clean"] or (
                "clean" in change_kinds(step, info)))
            if before is not None and (removed and not _REPLAYED.search(step.output) or not (
                    _answered(before, i, info, filters, version, infos, traj.steps))):
                before = None
            if before is not None and cleaned is None:
                cleaned = {k for c in cleaned_reruns(traj, infos) for k in c[1:]}
            if before is not None and cleaned is not None and i not in cleaned:
                chain = chains.pop(before.step, [before.step])
                chain.append(i)
                chains[i] = chain
            asked[key] = _Asked(i, filters, names, version, counts["clean"])
        for kind in change_kinds(step, info):
            counts[kind] += 1
    for chain in sorted(chains.values(), key=lambda c: c[0]):
        yield _finding(traj, infos, chain, settings)


def _package_slot(asked: dict[tuple[str, str], _Asked],
                  names: frozenset[str]) -> tuple[tuple[str, str], _Asked | None]:
    """The slot of the latest package query about one of ``names``, else a new one."""
    found = [(k, a) for k, a in asked.items() if k[0] == "package" and _overlap(
        names, a.subjects)]
    if not found:
        return ("package", ",".join(sorted(names))), None
    return max(found, key=lambda ka: ka[1].step)


def answer(step: Step, info: Info) -> tuple[bool, frozenset[str]] | str | None:
    """What a step answered: its outcome and the lines it printed, as a set.

    A build tool's report of its own cache (``cache hit, replaying logs``) and the order in
    which parallel tasks printed are how it got the answer, not the answer; for observing
    classes the masked fingerprint is the answer.
    """
    if info.cls not in ("run", "test", "lint", "build"):
        return info.out_fp
    lines = (masked(ln) for ln in step.output.splitlines())
    return (info.failed, frozenset(ln for ln in lines if ln and not _CHATTER.search(ln)))


def _answered(before: _Asked, i: int, info: Info, filters: str, version: tuple[int, ...],
              infos: list[Info], steps: list[Step]) -> bool:
    if before.version != version:
        return False
    prev = infos[before.step]
    if before.filters == filters:
        # A sub-agent's launch prints a new agent id each time: not an answer.
        if info.cls != "task" and answer(steps[before.step], prev) != answer(steps[i], info):
            return False  # the same question, a new answer: something changed outside
        # The identical command with nothing changed at all is rerun_unchanged's/
        # exact_repeat's; here only what they cannot see (a cleared cache between).
        return prev.canon != info.canon or prev.state_after != info.state or (
            info.cls == "task")  # no other family compares sub-agent launches
    if i - before.step > REFILTER_WINDOW or _capped(before.filters, prev.out_lines):
        return False  # the filter before stopped at its cap: the new one shows what it hid
    if not before.filters and not before.subjects:
        # The whole output was shown: a filter of it prints only lines it had. A line it
        # did not have is a new answer (the run printed something else this time). Package
        # queries are not one command: `pip list | grep x` prints other lines than `pip show x`.
        was, now = answer(steps[before.step], prev), answer(steps[i], info)
        if isinstance(was, tuple) and isinstance(now, tuple) and not now[1] <= was[1]:
            return False
    said, asks = _terms(prev.filters()), _terms(info.filters())
    if said is None or asks is None or said[0] != asks[0]:
        return False  # a pattern we cannot read, or `-v`/`-c`/`-l`: another question
    # `grep gc` then `grep maintenance` asks the output another question; `grep any` after
    # `grep no-explicit-any` (one term inside the other) asks the same one again.
    return not (said[1] and asks[1]) or _overlap(said[1], asks[1])


def _capped(filters: str, lines: int) -> bool:
    """The filters end in ``head``/``tail -N`` and the output reached N lines.

    One line short counts: harnesses trim a trailing blank line (``mix credo | tail -5``
    logged 4 lines), and a cap that may have cut lines is a new question, never the same.
    """
    caps = [int(n) for n in _CAP.findall(filters)]
    return bool(caps) and lines >= min(caps) - 1


def _terms(filters: tuple[tuple[str, ...], ...]) -> tuple[frozenset[str], frozenset[str]] | None:
    """What the greps piped after the command ask of its output: ``(modes, terms)``.

    ``terms`` are the lowercased alternatives the plain greps look for; ``modes`` one entry
    per grep whose flags change the question (``-v`` shows the complement, ``-c`` a count,
    ``-l`` names), with its own terms. None when a pattern cannot be read (``-f FILE``, no
    pattern): unknown, never the same question.
    """
    modes: set[str] = set()
    terms: set[str] = set()
    for argv in filters:
        if argv[0] not in _GREPS:
            continue
        got = _grep_args(argv[1:])
        if got is None:
            return None
        flags, patterns = got
        found = {t.strip().lower() for p in patterns for t in re.split(r"\\?\|", p)
                 if t.strip()}
        if flags:
            modes.add("".join(sorted(flags)) + ":" + ",".join(sorted(found)))
        else:
            terms |= found
    return frozenset(modes), frozenset(terms)


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg"})
# Options whose value is the next argument (or the rest of the cluster: `-A3`).
_GREP_VALUED = frozenset("ABCmegtTfM")
_GREP_LONG_VALUED = frozenset({"--after-context", "--before-context", "--context",
                               "--max-count", "--regexp", "--file", "--glob", "--type",
                               "--type-not", "--include", "--exclude", "--max-columns"})
_GREP_MODES = {"v": "v", "c": "c", "l": "l", "L": "L", "--invert-match": "v",
               "--count": "c", "--files-with-matches": "l", "--files-without-match": "L"}


def _grep_args(args: tuple[str, ...]) -> tuple[set[str], list[str]] | None:
    """``(mode flags, patterns)`` of a grep's arguments, or None when unreadable."""
    flags: set[str] = set()
    patterns: list[str] = []
    words: list[str] = []
    k = 0
    while k < len(args):
        a = args[k]
        k += 1
        if a == "--":
            words.extend(args[k:])
            break
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if name in _GREP_MODES:
                flags.add(_GREP_MODES[name])
            elif name in _GREP_LONG_VALUED:
                if not eq:
                    value, k = (args[k] if k < len(args) else ""), k + 1
                if name == "--file":
                    return None
                if name == "--regexp":
                    patterns.append(value)
            continue
        if not a.startswith("-") or a == "-":
            words.append(a)
            continue
        for n, ch in enumerate(a[1:], 1):
            if ch in _GREP_VALUED:
                value = a[n + 1:]
                if not value:
                    value, k = (args[k] if k < len(args) else ""), k + 1
                if ch == "f":
                    return None
                if ch == "e":
                    patterns.append(value)
                break
            if ch in _GREP_MODES:
                flags.add(_GREP_MODES[ch])
    if not patterns:
        if not words:
            return None
        patterns = words[:1]
    return flags, patterns


def _overlap(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(x in y or y in x for x in a for y in b)


def _finding(traj: Trajectory, infos: list[Info], chain: list[int],
             settings: DetectSettings) -> Finding:
    first = infos[chain[0]]
    runs = first.cls in ("run", "test", "lint", "build")
    kind = "rerun_unchanged" if runs else "exact_repeat" if first.cls == "task" else (
        "near_repeat")
    errs = [traj.steps[i].error_signature for i in chain if traj.steps[i].is_error]
    sig = errs[-1] if errs and len(errs) == len(chain) else None
    again = infos[chain[1]]
    more = f" (and {len(chain) - 2}x more)" if len(chain) > 2 else ""
    return make_finding(
        kind, traj, infos, chain, chain[1:], settings,
        shape={"cls": first.cls, "action": shape(first), "answered": True, "error": sig},
        summary=f"`{brief(traj, again)}` asked again what `{brief(traj, first, 50)}` "
        f"(#{chain[0]}) already showed{more}: {_what_changed(first, again)}",
        confidence=0.8, error_signature=sig,
    )


def _what_changed(first: Info, again: Info) -> str:
    """What differs between the two asks, and that nothing the answer depends on did."""
    if first.cls == "task":
        return "the same instructions, and nothing changed between"
    if _packages(first.canon, first.filters()):
        return "the same package asked another way, with no install or environment change between"
    f1, f2 = (" | ".join(" ".join(a) for a in x.filters()) for x in (first, again))
    if f1 != f2:
        return (f"only the filter changed (`{f1 or 'none'}` -> `{f2 or 'none'}`), and no file "
                "was edited between")
    if first.canon != again.canon:
        return "only the spelling changed, and no file was edited between"
    return "only build output or caches were removed between, and the tool said the same"
