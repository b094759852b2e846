"""Refusals the agent walks into again: by the user, and by the harness's tool-usage rules.

``refused_resubmit``: the user refuses a tool call ("The user doesn't want to proceed with
this tool use ... the user said: why not ...?") and the agent sends the same intent again in
another form (another edit of the same file, the same command reworded) and is refused again.
Every resubmission from the first refusal to the last one on that target is wasted: the
lesson is to stop and answer, not to find another way past the user.

``rule_refusal``: the harness refuses a call for breaking one of its usage rules (Claude
Code's Write/Edit "File has not been read yet"), and the very next call breaks the same rule
again, on whatever file: the rule, not the file, is what the agent has not learned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, is_action, path_ext

MISTAKE_FAMILIES = frozenset({"refused_resubmit", "rule_refusal"})
"""Families whose wasted steps repeat a mistake, not an action: another edit, another file.
They are not ``repeats`` (the labelling rules call edits across files and new content not a
repeat), so ``annotate_repeats`` and the label scores leave them out; their findings count
in ``orf mine`` like any other."""

_REFUSED = re.compile(
    r"^\s*(The user doesn't want to proceed with this tool use|"
    r"(exec command |patch |tool call |command )?rejected by (the )?user|"
    r"The user (rejected|denied|declined) (this|the) (tool|command|edit))", re.I)
"""A call the user refused (Claude Code, Codex CLI approval denials)."""

RULES = (
    ("read-before-write", re.compile(
        r"File has not been read yet|File has been (modified|unexpectedly modified) since "
        r"read|must read the file before", re.I)),
    ("absolute-path", re.compile(r"(path|file_path) must be (an )?absolute", re.I)),
    ("unique-match", re.compile(r"matches of the string to replace, but replace_all is "
                                r"false", re.I)),
    ("input-schema", re.compile(r"InputValidationError|invalid (tool )?parameters?", re.I)),
)
"""Harness tool-usage rules, by the refusal text that names them (first match wins)."""


def refused(step: Step) -> bool:
    """True when the user refused the call."""
    return step.kind == "tool" and _REFUSED.match(step.output[:300]) is not None


def rule_of(step: Step, info: Info) -> str | None:
    """The harness usage rule a failed call broke, or None."""
    if step.kind != "tool" or not info.failed:
        return None
    head = step.output[:400]
    return next((name for name, pattern in RULES if pattern.search(head)), None)


def _target(info: Info) -> str:
    """What a refused call aimed at: the file of an edit/write, else the command's program."""
    if info.cls in ("edit", "write") and info.paths and not info.shell:
        return "file|" + info.paths[0]
    words = info.canon.split(" ")
    return f"{info.cls}|{info.program}|{words[1] if len(words) > 1 else ''}"


@register("refused_resubmit")
def detect_refused(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """A refused call's intent resubmitted and refused again, with no person's turn between.

    A person's new message is a new direction: what the agent does after it starts over.
    """
    infos = infos_for(traj)
    steps = traj.steps
    open_by: dict[str, list[int]] = {}  # target -> [first refusal, resubmissions...]
    done: list[list[int]] = []

    def close(chain: list[int]) -> None:
        # The trap ends at the last refusal; what follows it is the way out.
        last = max(k for k, j in enumerate(chain) if refused(steps[j]))
        if last > 0:
            done.append(chain[:last + 1])

    for i, (step, info) in enumerate(zip(steps, infos, strict=True)):
        if step.kind == "user":
            for chain in open_by.values():
                close(chain)
            open_by = {}
            continue
        if not is_action(info) and not refused(step):
            continue
        key = _target(info)
        if key in open_by:
            open_by[key].append(i)
        elif refused(step):
            open_by[key] = [i]
    for chain in open_by.values():
        close(chain)
    done.sort(key=lambda c: c[0])
    for chain in done:
        first = infos[chain[0]]
        what = first.paths[0] if first.paths else first.label[:60]
        n = sum(refused(steps[j]) for j in chain)
        yield make_finding(
            "refused_resubmit", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "ext": path_ext(first.paths[0]) if first.paths else ""},
            summary=f"`{what}`: refused by the user {n}x and resubmitted in another form "
            f"{len(chain) - 1}x",
            confidence=0.85, error_signature="refused by the user",
        )


@register("rule_refusal")
def detect_rule(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Consecutive calls refused by the harness for one usage rule (any file)."""
    infos = infos_for(traj)
    steps = traj.steps
    streak: list[int] = []
    rule: str | None = None
    done: list[tuple[str, list[int]]] = []
    for i, (step, info) in enumerate(zip(steps, infos, strict=True)):
        if step.kind == "user":
            streak, rule = [], None  # a person's turn starts over
            continue
        if not is_action(info):
            continue
        now = rule_of(step, info)
        if now is not None and now == rule:
            streak.append(i)
            continue
        if rule is not None and len(streak) > 1:
            done.append((rule, streak))
        streak, rule = ([i], now) if now is not None else ([], None)
    if rule is not None and len(streak) > 1:
        done.append((rule, streak))
    for name, chain in done:
        sig = steps[chain[-1]].error_signature
        yield make_finding(
            "rule_refusal", traj, infos, chain, chain[1:], settings,
            shape={"rule": name, "tool": infos[chain[0]].program},
            summary=f"{infos[chain[0]].program} refused {len(chain)}x in a row for one harness "
            f"rule ({name})",
            confidence=0.8, error_signature=sig,
        )
