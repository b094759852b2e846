"""What one case's cause is, as data: the mechanism table and the facts its sentences name.

A lesson's title, principle and checks come from the first mechanism whose conditions all
match the lesson; a lesson no mechanism fits falls back on its error class's sentences. Each
sentence names this case's values (``{module}``, ``{param}``, ``{tried_indent}``), so two
playbooks only share text when they teach the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Lesson


@dataclass(frozen=True)
class Mechanism:
    """One cause with what it teaches.

    ``when`` maps a field of :func:`fields_of` to a regex that must match it; the sentences
    are ``str.format`` templates over :func:`fields_of` and the lesson's facts.
    """

    key: str
    error_class: str
    when: dict[str, str]
    title: str
    principle: str
    checks: tuple[str, ...] = field(default_factory=tuple)
    same_call_checks: bool = False
    """The checks are about the failing call's own arguments: they hold only when the fix
    was that call corrected (not, say, the whole file rewritten)."""


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "gutter", "edit_not_found", {"note": r"line-number gutter"},
        "Strip the `cat -n` line-number gutter from old_str before retrying str_replace",
        "The file viewer prints each line as its number, a tab and the text; the file holds "
        "only the text. An old text copied from that view carries the `{gutter}` + tab "
        "prefix, so it matches nothing, and viewing the lines again only shows the same "
        "gutter to copy.",
        ("The old text starts with the file's own indentation, with no line number and tab "
         "in front",), same_call_checks=True),
    Mechanism(
        "indent", "edit_not_found", {"note": r"^indentation differs"},
        "Copy the old text's indentation from the file, tab for tab, before retrying the edit",
        "A replacement by value matches whitespace exactly: the old text had {tried_indent} "
        "where the file has {found_indent}, so every line of the block was one nesting level "
        "off. The read output shows the file's own indentation after its line-number gutter; "
        "copy it from there, not from memory.",
        ("The old text's first line has {found_indent} of indentation, as the file's line "
         "does",), same_call_checks=True),
    Mechanism(
        "multiple", "edit_not_found", {"note": r"more than one place"},
        "Make the old text unique with neighbouring lines, or insert by line number, when it "
        "matches several places",
        "The editor refuses an old text that occurs more than once in the file, so the same "
        "short line sent again is refused again. Neighbouring lines make it unique; `insert` "
        "places new text after a given line number without matching any text.",
        ("A view of {target} shows the new line once, where it was meant to go",)),
    Mechanism(
        "heredoc", "syntax_error", {"symptom": r"^\s*(\w+)\s*(?:&&|\|\||;)\s*.*(?:\n.*)?\^"},
        "Put the here-document terminator alone on its line",
        "A here-document ends only at a line that holds its terminator alone; `{heredoc} && …` "
        "on that line is not the end, so the shell fed the rest of the command to the "
        "interpreter as code.",
        ("The terminator line holds nothing but the terminator",)),
    Mechanism(
        "range_short", "syntax_error", {"symptom": r"unmatched|unexpected indent|EOF",
                                         "range": r"^end\+\d+$"},
        "Widen the edit range to the last line your text replaces, or the old closing line "
        "stays below it",
        "`edit N:M` replaces lines N to M only. The new text also rewrote the line after the "
        "range, so the old one stayed below it and closed twice (`{error}`); the range "
        "`{removed}` -> `{added}` covered it.",
        ("The edit preview shows no closing line repeated right below the new text",)),
    Mechanism(
        "workspace_build", "missing_module", {"inserted": r"\bbuild\b|\btsc -b\b"},
        "Build the workspace package `{module}` before running what imports it",
        "`{module}` is a package of this workspace whose imports resolve to its build output, "
        "and that output did not exist yet; installing dependencies does not create it. "
        "Building the package (`{fix}`) did, and the same command then passed.",
        ()),
    Mechanism(
        "import_path", "missing_module", {"added": r"(?:PYTHONPATH|NODE_PATH)=\S"},
        "Put the package's directory on the import path (`{added}`) instead of rerunning",
        "`{module}` is in the repository but not on the import path `{program}` searches, so "
        "reruns and changed flags fail on the same import. `{added}` added its directory and "
        "the same tests then passed.",
        ("The command runs with `{added}`",)),
    Mechanism(
        "module_install", "missing_module", {"kinds": r"\binstall\b"},
        "Install `{module}` into the environment the command runs in, then rerun it",
        "`{module}` was not installed in the environment `{program}` runs in, so every rerun "
        "failed on the same import. `{fix}` installed it and the same command then passed.",
        ()),
    Mechanism(
        "deps_not_installed", "missing_program", {"kinds": r"\binstall\b"},
        "Install the project's dependencies when `{program}` is not found, instead of trying "
        "other launchers",
        "`{program}` comes from the project's own dependencies, not from the system: it did "
        "not exist in this checkout until `{fix}` installed them. Other launchers of the same "
        "missing program only changed the error message.",
        ("`test -x {bin}` succeeds",)),
    Mechanism(
        "shim", "missing_program", {"symptom": r"shim", "added": r"\S"},
        "Call `{added}` when `{removed}` is a shim whose target is not installed",
        "A version-manager shim named `{removed}` is on PATH, but the interpreter it points to "
        "is not installed, so the shim fails before the script runs; other permissions or a "
        "rerun do not create that target. `{added}` is installed and ran the same script.",
        ("The command calls `{added}`, not the `{removed}` shim",)),
    Mechanism(
        "run_with", "missing_program", {"spawned": r"\S", "added": r"^--with\b"},
        "Give `uv run` the tool with `{added}` when it cannot spawn `{spawned}`",
        "`uv run` starts only what the project environment has installed, and `{spawned}` "
        "was not in it, so a rerun (or a sync that installs nothing new) fails the same way. "
        "`{added}` added the tool to the run and it started.",
        ("The command runs with `{added}`",)),
    Mechanism(
        "other_program", "missing_program", {"added": r"\S", "removed": r"\S"},
        "Call the installed `{added}` when `{removed}` is not found",
        "`{removed}` does not resolve to a program here; `{added}` does, and ran the same "
        "arguments.",
        ("The command calls `{added}` instead of `{removed}`",)),
    Mechanism(
        "stale_git_lock", "lock_held", {"symptom": r"index\.lock", "inserted": r"\.lock\b"},
        "Remove a stale `.git/index.lock` only after checking no git process runs",
        "git holds `.git/index.lock` while a git process runs and leaves it behind when one "
        "crashes; retrying waits on the same file. `{fix}` removed the stale lock and "
        "`{verify}` then passed; removing it while git still runs would corrupt the index.",
        ()),
    Mechanism(
        "port_held", "port_in_use", {"inserted": r"\b(?:kill|lsof|fuser)\b"},
        "Stop the process that still holds the port before restarting the server",
        "`{error}` means a running process still listens on that port, and a restart binds "
        "the same port again. `{fix}` stopped it and `{verify}` then started.",
        ()),
    Mechanism(
        "no_exec_bit", "permission", {"inserted": r"\bchmod\b.*\+x"},
        "Make the script executable with `chmod +x` when running it is denied",
        "The shell refused to run the script because it has no execute permission; changing "
        "the command cannot fix that. `{fix}` set the bit and the same command then ran.",
        ("`test -x {chmod_target}` succeeds",)),
    Mechanism(
        "wrong_dir", "wrong_path", {"kinds": r"\bcwd\b", "cwd": r"\S"},
        "Run the command from the directory that holds the project it reads",
        "`{program}` reads its project from the working directory, and the project is in "
        "`{cwd}`, not where the command ran; rerunning in the same place fails the same way. "
        "From `{cwd}` it passed.",
        ()),
    Mechanism(
        "unknown_option", "version_mismatch", {"removed": r"^-", "added": r"^$"},
        "Drop the option the installed `{program}` does not know",
        "The installed `{program}` does not accept `{removed}` (`{error}`), so rewording the "
        "call keeps failing; the same call without it passed. Check the installed version's "
        "`--help` before adding the option back.",
        ("The command no longer passes `{removed}`",)),
    Mechanism(
        "credentials_set", "auth", {"inserted": r"\b(?:export|login|auth)\b"},
        "Provide the credentials the command reads before retrying it",
        "`{error}`: the request went out without credentials the service accepts, and a "
        "retry sends the same ones. `{fix}` provided them and the same command then passed.",
        ()),
    Mechanism(
        "proxy_set", "network", {"inserted": r"(?i)\bproxy\b", "symptom": r"(?i)resol"},
        "Set the proxy this network requires before retrying the download",
        "The host name did not resolve from here, so every retry failed the same way; the "
        "network only reaches out through a proxy. `{fix}` set it and the same command then "
        "passed.",
        ()),
    Mechanism(
        "hang_excluded", "timeout", {"added": r"\S", "removed": r"^$"},
        "Leave out the part that hangs (`{added}`) instead of raising the timeout",
        "The command timed out waiting on one part of its work, and a longer timeout reruns "
        "the same wait. `{added}` left that part out and the run finished.",
        ("The command runs with `{added}`",)),
    Mechanism(
        "code_fixed", "assertion", {"kinds": r"\bedit\b"},
        "Change the code the failing assertion names, then rerun the same test",
        "`{error}` compares the expected value with the actual one, and a rerun without a "
        "change returns the same difference. `{fix}` changed the code under test and the same "
        "test then passed.",
        ()),
    Mechanism(
        "missing_param", "invalid_args", {"param": r"\S"},
        "Send the `{param}` parameter the harness names as required",
        "The harness rejected the call before it ran because `{param}` was not among its "
        "arguments; text written only in the reasoning is not sent. The call with `{param}` "
        "set passed the harness's check.",
        ("The call's arguments include `{param}`",)),
)
"""Mechanisms, first match wins (most specific first)."""

MECHANISM_CLASSES = frozenset({"edit_not_found", "invalid_args", "missing_program",
                               "missing_module", "syntax_error"})
"""Classes whose lessons need a mechanism: their class sentences alone read the same for
every case (re-read, install it, fix the text). The other classes fall back on their own
class sentences when no mechanism fits."""

_FACT_RES: tuple[tuple[str, str], ...] = (
    ("module", r"(?:Cannot find module|No module named|cannot find package|Failed to resolve "
               r"import|unresolved import)\s+['\"`]([^'\"`]+)['\"`]"),
    ("param", r"(?:Parameter|required parameter)\s+[`'\"]?(\w+)[`'\"]?\s+(?:is required|is "
              r"missing)"),
    ("heredoc", r"^\s*(\w+)\s*(?:&&|\|\||;)"),
    ("spawned", r"Failed to spawn: `?([\w.-]+)`?"),
    ("gutter", r"\b(\d+)\t"),
)

_INSERTED_FACTS: tuple[tuple[str, str], ...] = (
    ("chmod_target", r"\bchmod\s+(?:-\w+\s+)*\+x\s+(\S+)"),
    ("cwd", r"^(?:cd|pushd)\s+(\S+)"),
)
"""(fact, regex over each inserted step with one group): values the fix names."""
"""(fact, regex over the last error with one group): values the sentences name."""

_RANGE = re.compile(r"^(\d+):(\d+)$")


def range_change(removed: list[str], added: list[str]) -> str:
    """``end+1`` when an ``N:M`` line range only moved its end, else ""."""
    if len(removed) != 1 or len(added) != 1:
        return ""
    a, b = _RANGE.match(removed[0]), _RANGE.match(added[0])
    if a is None or b is None or a.group(1) != b.group(1):
        return ""
    diff = int(b.group(2)) - int(a.group(2))
    return f"end+{diff}" if diff > 0 else f"end{diff}"


def facts_from(error: str, found: dict[str, str]) -> dict[str, str]:
    """``found`` plus the facts the last error names."""
    out = dict(found)
    for name, pattern in _FACT_RES:
        match = re.search(pattern, error, re.MULTILINE)
        if match and name not in out:
            out[name] = match.group(1)
    return out


def fields_of(lesson: Lesson) -> dict[str, str]:
    """The lesson as the strings the mechanism conditions and templates read."""
    fix = lesson.fix
    last_error = lesson.sequence[-1][1] if lesson.sequence else lesson.symptom_line
    last_error = re.sub(r"^E\s+", "", last_error.strip())  # pytest's error gutter
    found: dict[str, str] = {}
    for name, pattern in _INSERTED_FACTS:
        match = next((m for step in fix.inserted if (m := re.search(pattern, step))), None)
        if match:
            found[name] = match.group(1)
    return {
        **found,
        "symptom": lesson.symptom, "error": last_error, "note": fix.edit_note or "",
        "kinds": " ".join(fix.kinds), "inserted": " && ".join(fix.inserted),
        "added": " ".join(fix.added), "removed": " ".join(fix.removed),
        "program": lesson.program, "target": lesson.target,
        "fix": fix.inserted[0] if fix.inserted else lesson.resolving_action,
        "verify": lesson.verify, "range": range_change(fix.removed, fix.added),
        **lesson.facts,
    }


def pick(lesson: Lesson) -> Mechanism | None:
    """The first mechanism whose conditions all hold for ``lesson``."""
    values = fields_of(lesson)
    for mech in MECHANISMS:
        if mech.error_class != lesson.error_class:
            continue
        if all(re.search(rx, values.get(name, ""), re.MULTILINE) for name, rx in
               mech.when.items()) and fill(mech.title, lesson) and fill(mech.principle, lesson):
            return mech
    return None


def fill(template: str, lesson: Lesson) -> str:
    """``template`` with the lesson's values; "" when it names a value the lesson lacks."""
    values = fields_of(lesson)
    try:
        text = template.format(**values)
    except (KeyError, IndexError):
        return ""
    # A sentence with an empty slot (``````) says nothing specific: leave it out.
    return "" if "``" in text.replace("```", "") else text
