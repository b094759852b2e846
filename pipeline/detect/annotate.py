"""Per-step repeat annotation: which earlier action each step repeats, and whether in vain.

``annotate_repeats`` marks every step that repeats an earlier action in intent, including
legitimate repeats (a test rerun after a real edit, a file re-read after it changed), with
``repeat_of`` = the latest earlier step of that intent (what a person says of each
transition) and ``first_of`` = the earliest. A repeat is ``wasted`` exactly when
``detect_all`` lists it in a finding's ``wasted_source_ids``, so the annotation and the
findings never disagree.

Intent is matched, in order, by: the identical action key (``exact``); the same canonical
form (``same_action``: quoting, ``./``, sandbox roots, flag order, ``cd`` prefixes, location
variables such as ``PYTHONPATH``); a read of a range of a file already shown (``reread``);
the same script run again from another directory (``rerun``); the same command re-run only
to filter its output differently (``refilter``); a listing that shows the same names at
another spelling of its folder (``same_place``); an inline script re-run with a slightly
edited body (``script``, see ``scripts``); a near-equal observing command
(``similar``: same program, same target files, token Jaccard at least
``near_repeat_similarity``); a failed edit of a file retried after an earlier failed edit of
it (``edit_retry``); a file created again in whole (``rewrite``: deleted and re-created,
a patch script re-written); and a command the shell refused to parse, sent again
(``reissue``). Every map is keyed and bounded, so the pass stays linear.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import PERSISTENT_SHELLS, analyze, relative_cd, set_current
from .classify_shell import run_tail
from .edit_retry import OPEN_TARGETS, same_target, target
from .info import END, Info, is_action, place_key, shown_range
from .programs import program
from .refusals import MISTAKE_FAMILIES
from .run import detect_all
from .scripts import SCRIPT_WINDOW, Script, same_script, script_of
from .shell_edits import retries
from .unran import reissue_of

SIMILAR_WINDOW = 8
"""Recent commands per (program, targets) compared for ``similar`` (bounded: linear pass)."""

SIMILAR_CLASSES = frozenset({"read", "search", "list", "inspect"})
"""Classes compared by similarity. Only observing actions: for runs, tests and lints the
argument values are the experiment (``--rgx=foo,bar`` then ``--rgx="foo, bar"``), and batch
edits look alike."""

_WORD = re.compile(r"[A-Za-z_][\w.\-/]*|\d+")
_RECORDS = re.compile(r"git (add|commit|push|tag)\b")


@dataclass(slots=True)
class Repeat:
    """One step that repeats an earlier action."""

    step: int
    """Index of the repeating step."""
    source_id: str
    """Its source id."""
    repeat_of_step: int
    """Index of the latest earlier step it repeats."""
    repeat_of_source_id: str
    """Source id of that step."""
    first_of_step: int
    """Index of the earliest step of the chain of repeats this one belongs to."""
    first_of_source_id: str
    """Source id of that earliest step."""
    kind: str
    """How the intent matched: exact, same_action, reread, edit_retry, rewrite, rerun,
    refilter, same_place, script, similar, reissue, or the finding family that claimed the
    step as wasted."""
    wasted: bool
    """True when a finding lists the step as wasted (nothing between could change it)."""


def _tokens(canon: str) -> frozenset[str]:
    """Word tokens of a canonical command (quoting and punctuation ignored)."""
    return frozenset(_WORD.findall(canon))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Token Jaccard similarity (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _covered(rng: tuple[int, int], seen: list[tuple[int, int]], overlap: float) -> bool:
    lo, hi = rng
    if hi >= END and lo <= 1:
        return any(a <= 1 and b >= END for a, b in seen)
    total = 0
    for a, b in seen:
        x, y = max(a, lo), min(b, hi)
        if x <= y:
            total += y - x + 1
    return total >= overlap * (hi - lo + 1)


REFILTER_WINDOW = 20
"""Steps within which the same command re-run with another filter is a refilter; later, the
new filter asks a new question (another branch name in `git ls-remote | rg`)."""

REFILTER_CLASSES = frozenset({"inspect", "list", "search", "run", "test", "lint", "build"})
"""Classes whose command re-run only to filter its output differently is the same action."""


def _producer(info: Info) -> tuple[str, str] | None:
    """The command whose output a shell step filters (``git fsck | grep x`` -> ``git fsck``).

    None unless every non-piped segment is that same command and the rest only filter it.
    """
    if not info.shell or info.cls not in REFILTER_CLASSES or "|" not in info.command:
        return None
    heads = info.runs()
    pipes = [s for s in info.segments() if s.piped]
    if not heads or any(not program(s.argv[0]).selects for s in pipes):
        return None
    forms = {info.form(s) for s in heads}
    return (info.cls, forms.pop()) if len(forms) == 1 else None


class _Matcher:
    """Latest earlier step per intent key (see the module docstring)."""

    def __init__(self, settings: DetectSettings, infos: list[Info],
                 persistent: bool = False) -> None:
        self.settings = settings
        self.infos = infos
        self.persistent = persistent
        self.last_cd = -1
        self.last_create = -1
        self.by_key: dict[str, int] = {}
        self.by_canon: dict[tuple[str, str], int] = {}
        self.reads: dict[str, list[tuple[tuple[int, int], int]]] = {}
        self.failed_edit: dict[str, list[tuple[frozenset[str] | None, int]]] = {}
        self.writes: dict[str, int] = {}
        self.tails: dict[str, int] = {}
        self.producers: dict[tuple[str, str], int] = {}
        self.places: dict[tuple[str, str, str], int] = {}
        self.similar: dict[tuple[str, tuple[str, ...]], list[tuple[frozenset[str], int]]] = {}
        self.scripts: list[Script] = []
        self.looked: set[str] = set()
        self.unran = -1

    def match(self, i: int, info: Info, key: str | None) -> tuple[int, str] | None:
        """The earlier step ``i`` repeats and how, then remember ``i``."""
        found: tuple[int, str] | None = None
        if key and key in self.by_key:
            found = (self.by_key[key], "exact")
        elif (info.cls, info.canon) in self.by_canon:
            found = (self.by_canon[(info.cls, info.canon)], "same_action")
        elif info.cls == "read" and info.paths and not info.filtered:
            seen = self.reads.get(info.paths[0], [])
            rng = info.rng or (1, END)
            if seen and _covered(rng, [r for r, _ in seen], self.settings.reread_overlap):
                found = (seen[-1][1], "reread")
        elif info.shell and self._tail(info) in self.tails:
            found = (self.tails[self._tail(info)], "rerun")
        elif (producer := _producer(info)) is not None and i - self.producers.get(
                producer, -REFILTER_WINDOW - 1) <= REFILTER_WINDOW:
            found = (self.producers[producer], "refilter")
        elif (place := place_key(info)) is not None and place in self.places:
            found = (self.places[place], "same_place")
        elif (script := script_of(i, info)) is not None and (
                before := same_script(script, self.scripts)) is not None:
            found = (before.step, "script")
        elif (info.cls, info.program) in self._sim_keys(info):
            found = self._similar(info)
        elif info.cls in ("edit", "write") and (info.paths or info.content is not None):
            found = self._rewrite(info)
        if found is None and self.unran >= 0 and info.shell and reissue_of(
                self.infos[self.unran], info):
            # The command the shell refused, sent again (a patch made runnable, a check).
            found = (self.unran, "reissue")
        if found is not None and (self._elsewhere(found, info) or self._new_work(found, info)):
            found = None
        if (script := script_of(i, info)) is not None:
            self.scripts.append(script)
            del self.scripts[:-SCRIPT_WINDOW]
        self._remember(i, info, key)
        return found

    def _elsewhere(self, found: tuple[int, str], info: Info) -> bool:
        # The same listing, no file created or removed since, yet other names: the words
        # name another folder (SWE-agent's `cd java && ls` from where the last cd left it).
        j, kind = found
        before = self.infos[j]
        # In one shared shell a relative `cd x && ls` means another folder once a cd moved.
        if (self.persistent and kind in ("exact", "same_action") and self.last_cd > j
                and relative_cd(info)):
            return True
        return (info.cls == "list" and kind != "refilter" and self.last_create < j
                and before.out_fp is not None and info.out_fp is not None
                and before.out_fp != info.out_fp)

    def _new_work(self, found: tuple[int, str], info: Info) -> bool:
        # `git push` after another commit pushes the new commit: recording or sending the
        # working state acts on new content whenever anything changed since it last worked
        # (a push again after a rejected one and a pull is the same push retried).
        before = self.infos[found[0]]
        return _RECORDS.match(info.canon) is not None and not before.failed and (
            before.state_after != info.state)

    def _rewrite(self, info: Info) -> tuple[int, str] | None:
        # A failed edit retried, or the edit that finally applied after failed attempts; a
        # file created again in whole (deleted and re-created, a patch script re-written).
        words = target(info)
        for before, j in reversed(self.failed_edit.get(info.paths[0], []) if info.paths else []):
            if same_target(words, before):
                return (j, "edit_retry")
        path = (info.paths or info.writes or ("",))[0]
        # Read since it was written: the agent looked at the content and writes it revised
        # (an edit by rewrite, as tools without string replacement edit), not a re-creation.
        if info.content is not None and path in self.writes and path not in self.looked:
            return (self.writes[path], "rewrite")
        return None

    @staticmethod
    def _tail(info: Info) -> str:
        return run_tail(info)

    def _sim_keys(self, info: Info) -> set[tuple[str, str]]:
        return {(info.cls, info.program)} if info.shell and info.cls in SIMILAR_CLASSES else set()

    def _similar(self, info: Info) -> tuple[int, str] | None:
        toks = _tokens(info.canon)
        for other, j in reversed(self.similar.get((info.program, info.paths), [])):
            if jaccard(toks, other) >= self.settings.near_repeat_similarity:
                return (j, "similar")
        return None

    def _remember(self, i: int, info: Info, key: str | None) -> None:
        self.unran = i if info.extra.get("unran") else -1
        if info.shell and info.command.lstrip().startswith("cd "):
            self.last_cd = i
        # An edit changes a file's text, never which names a folder holds.
        if (info.cls == "write" or info.unknown_mutation and info.cls != "edit") and not (
                info.failed):
            self.last_create = i
        if info.shell and self._tail(info):
            self.tails[self._tail(info)] = i
        producer, place = _producer(info), place_key(info)
        if producer is not None:
            self.producers[producer] = i
        if place is not None:
            self.places[place] = i
        if info.shell and info.cls in SIMILAR_CLASSES:
            recent = self.similar.setdefault((info.program, info.paths), [])
            recent.append((_tokens(info.canon), i))
            del recent[:-SIMILAR_WINDOW]
        if key:
            self.by_key[key] = i
        self.by_canon[(info.cls, info.canon)] = i
        if info.cls == "read" and info.paths and not (info.failed or info.filtered
                                                      or info.withheld):
            seen = self.reads.setdefault(info.paths[0], [])
            # A clipped view showed only its head: it does not cover the rest of its range.
            seen.append((shown_range(info), i))
            del seen[:-32]
        if info.cls in ("edit", "write") and info.paths:
            if info.failed:
                tried = self.failed_edit.setdefault(info.paths[0], [])
                tried.append((target(info), i))
                del tried[:-OPEN_TARGETS]
            else:
                self.failed_edit.pop(info.paths[0], None)
        if info.content is not None and (info.paths or info.writes) and not info.failed:
            self.writes[(info.paths or info.writes)[0]] = i
            self.looked.discard((info.paths or info.writes)[0])
        if info.cls == "read" and info.paths and not info.failed:
            self.looked.add(info.paths[0])


def annotate_repeats(
    traj: Trajectory,
    settings: DetectSettings | None = None,
    findings: list[Finding] | None = None,
) -> list[Repeat]:
    """Every step that repeats an earlier action, legitimate repeats included.

    Args:
        traj: A normalized trajectory.
        settings: Detector thresholds; defaults when None.
        findings: ``detect_all``'s findings for ``traj`` when the caller has them (spares a
            second detection pass); computed when None.

    Returns:
        Repeats in step order; ``wasted`` agrees with the findings.
    """
    settings = settings or DetectSettings()
    if findings is None:
        findings = detect_all(traj, settings)
    # For a wasted step no intent key matched: the finding's step just before it.
    index = {s.source_id: i for i, s in enumerate(traj.steps)}
    claimed: dict[str, tuple[str, int]] = {}
    for f in findings:
        if f.kind in MISTAKE_FAMILIES:
            continue  # a repeated mistake on another target is not a repeated action
        members = sorted(index[sid] for sid in f.source_ids if sid in index)
        for sid in f.wasted_source_ids:
            at = index.get(sid, -1)
            k = bisect_left(members, at)
            claimed.setdefault(sid, (f.kind, members[k - 1] if k else max(at - 1, 0)))
    infos = analyze(traj)
    set_current(traj, infos)  # paths read against the session's folder, as detect_all reads them
    try:
        return _annotate(traj, infos, claimed, settings)
    finally:
        set_current(None)


def _annotate(traj: Trajectory, infos: list[Info], claimed: dict[str, tuple[str, int]],
              settings: DetectSettings) -> list[Repeat]:
    matcher = _Matcher(settings, infos, persistent=traj.agent in PERSISTENT_SHELLS)
    # A shell edit after an attempt that did not apply retries it, wasted or not.
    shell_retries = {i: j for j, i, _ in retries(traj, infos)}
    first: dict[int, int] = {}
    out: list[Repeat] = []
    for i, (step, info) in enumerate(zip(traj.steps, infos, strict=True)):
        sid = step.source_id
        # A sub-agent launched again with the same instructions is not an action the matcher
        # compares, but a finding that calls it wasted says what it repeats.
        if not is_action(info) and sid not in claimed:
            continue
        hit = matcher.match(i, info, step.action_key) if is_action(info) else None
        if hit is None and i in shell_retries:
            hit = (shell_retries[i], "edit_retry")
        if hit is None and sid in claimed:
            hit = (claimed[sid][1], claimed[sid][0])
        if hit is None or hit[0] >= i:
            continue
        j, kind = hit
        first[i] = first.get(j, j)
        out.append(Repeat(step=i, source_id=sid, repeat_of_step=j,
                          repeat_of_source_id=traj.steps[j].source_id,
                          first_of_step=first[i],
                          first_of_source_id=traj.steps[first[i]].source_id, kind=kind,
                          wasted=sid in claimed))
    return out
