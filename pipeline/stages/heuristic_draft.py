"""Offline playbooks: built from one finding and the steps it points at, no model involved.

The text is plain and concrete: the command that looped, the error it kept hitting (as the
log printed it, redacted), the step that broke the loop. The insight is the family's general
principle, so it holds beyond the one session. Drafts are marked ``drafted_by: heuristic``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from ..privacy import redact
from ..model import Draft, Finding, Step, Trajectory, Verdict
from ..normalize import error_line
from .view import StoreContext

if TYPE_CHECKING:
    from ..llm.backend import Backend

INSIGHTS: dict[str, str] = {
    "exact_repeat": "Running the same action again after it failed returns the same failure; "
    "change the input, the environment or the diagnosis before the next attempt.",
    "rerun_unchanged": "Re-running an unchanged command cannot produce a different result; "
    "find out what must change before running it again.",
    "near_repeat": "Small variations of an action that keeps failing the same way waste steps; "
    "read the error, form a hypothesis about its cause, and test that hypothesis.",
    "retry_variation": "When different attempts hit the same error, the cause lies beneath the "
    "attempts; diagnose the error itself before trying another variant.",
    "cycle": "Actions that cycle without new information mean the plan is stuck; state what "
    "each step should change before repeating the sequence.",
    "edit_revert": "An edit followed by its revert means the change was never verified; check "
    "a hypothesis with a quick test before applying it.",
    "reread": "Reading the same content again without new intent wastes context; note what is "
    "needed the first time it is read.",
    "monologue": "Repeating the same message does not change the state; take an action that "
    "produces new information.",
    "chanting": "Repeating the same output does not change the state; stop and take an action "
    "that produces new information.",
    "context_thrash": "Frequent context compaction means the working set is too large; narrow "
    "the scope and summarise before continuing.",
}
DEFAULT_INSIGHT = ("A step that produced no new information should not be repeated as is; change "
                   "the input or the hypothesis first.")

# Program -> (domain id, name, description) for offline domain picking.
_ECOSYSTEMS: dict[str, tuple[str, str, str]] = {}
for _progs, _eco in (
    ("pytest python python3 pip pip3 uv poetry tox nox mypy ruff flake8 pylint black isort "
     "conda pipenv django-admin", ("python-tooling", "Python Tooling",
                                  "Traps with Python test runners, packaging and linters.")),
    ("cargo rustc rustup clippy", ("rust-tooling", "Rust Tooling",
                                   "Traps with cargo builds, tests and the Rust toolchain.")),
    ("npm npx yarn pnpm node jest vitest tsc eslint bun deno", (
        "javascript-tooling", "JavaScript Tooling",
        "Traps with Node.js package managers, bundlers and test runners.")),
    ("go gofmt golangci-lint", ("go-tooling", "Go Tooling",
                                "Traps with go build, go test and modules.")),
    ("mvn gradle java javac ./gradlew ./mvnw", ("java-tooling", "Java Tooling",
                                                "Traps with Maven, Gradle and the JDK.")),
    ("make cmake gcc g++ clang ninja", ("build-tooling", "Build Tooling",
                                        "Traps with make, CMake and C/C++ compilers.")),
    ("git gh", ("git-workflow", "Git Workflow", "Traps with git and GitHub CLI operations.")),
    ("docker kubectl helm", ("containers", "Containers",
                             "Traps with Docker images and Kubernetes tooling.")),
):
    for _p in _progs.split():
        _ECOSYSTEMS[_p] = _eco
_FALLBACK_DOMAIN = ("agent-loops", "Agent Loop Traps",
                    "Wasted-step loops coding agents fall into, and how to break them.")

_ERROR_CLASS = re.compile(
    r"(?:^|\s)((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)|error\[\w+\]|"
    r"command not found|No such file or directory|Permission denied|timed out|"
    r"Segmentation fault|Killed|FAILED|fatal)"
)
_SLUG = re.compile(r"[^a-z0-9]+")
_PREFIX = re.compile(r"^(?:cd\s+\S+\s*(?:&&|;)\s*|sudo\s+|timeout\s+\d+\s+|env\s+\S+=\S+\s+)+")


def _command(step: Step) -> str:
    """The action as a user would type it: the shell command, or tool + target."""
    args = step.args or {}
    for key in ("command", "cmd", "CommandLine"):
        value = args.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            return redact(" ".join(value.split()))[:160]
    for key in ("path", "file_path", "filePath", "TargetFile", "AbsolutePath", "pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return redact(f"{step.tool or 'tool'} {value}")[:160]
    return redact(step.tool or step.kind)


def _program(command: str) -> str:
    """First word of a shell command, past ``cd x &&``, ``sudo``, ``env`` and ``python -m``."""
    words = _PREFIX.sub("", command).split()
    if len(words) >= 3 and words[0].startswith("python") and words[1] == "-m":
        return words[2]
    return words[0] if words else ""


def _error_text(traj: Trajectory, finding: Finding) -> str:
    """The error line as the log printed it (redacted), from the last failing step."""
    for idx in reversed(finding.steps):
        if 0 <= idx < len(traj.steps):
            step = traj.steps[idx]
            if step.is_error or step.exit_code not in (None, 0):
                line = error_line(step.output)
                if line:
                    return redact(line)[:200]
    return ""


def _error_class(error: str) -> str:
    match = _ERROR_CLASS.search(error)
    return match.group(1) if match else ""


def _domain(program: str, context: StoreContext) -> tuple[str, str | None, str | None]:
    """An existing category when one matches, else an ecosystem slug, else agent-loops."""
    known = {cid for cid, _name, _desc in context.categories}
    domain = _ECOSYSTEMS.get(program, _FALLBACK_DOMAIN)
    if domain[0] in known:
        return domain[0], None, None
    words = set(_SLUG.sub(" ", f"{program} {domain[1]}".lower()).split()) - {"", "tooling"}
    for cid, name, desc in context.categories:
        if words & set(_SLUG.sub(" ", f"{cid} {name} {desc}".lower()).split()):
            return cid, None, None
    return domain


def _title(kind: str, program: str, err_class: str, command: str) -> str:
    prog = f"`{program}`" if program else "a command"
    after = f" after {err_class}" if err_class else ""
    titles = {
        "rerun_unchanged": f"Change something before rerunning {prog}{after}",
        "exact_repeat": f"Do not repeat {prog} unchanged{after}",
        "retry_variation": f"Diagnose {err_class or 'the error'} instead of tweaking {prog}",
        "near_repeat": f"Treat near-identical {prog} calls as repeats{after}",
        "cycle": f"Break the cycle of actions around {prog}",
        "edit_revert": "Verify an edit before applying it instead of reverting and redoing it",
        "reread": "Keep notes instead of re-reading unchanged files",
        "monologue": "Act instead of repeating the same message",
        "chanting": "Stop repeating the same text and take an informative action",
        "context_thrash": "Narrow the working set when context keeps being compacted",
    }
    return titles.get(kind, f"Avoid repeating {prog}{after}")[:120]


def _validated_path(finding: Finding) -> list[str]:
    res = finding.resolution
    assert res is not None
    lines: list[str] = []
    change = redact(res.change)
    if change.startswith("same command after: "):
        cause = change.removeprefix("same command after: ")
        lines.append(f"Fix the cause first: {cause}.")
        if res.action:
            lines.append(f"Then run `{redact(res.action)[:200]}` again; it now succeeds.")
    elif change.startswith("command changed: "):
        lines.append("Read the error and change the command itself, not its cosmetics.")
        if res.action:
            lines.append(f"The command that worked: `{redact(res.action)[:200]}`.")
    else:
        lines.append(change[:300])
        if res.action:
            lines.append(f"Run `{redact(res.action)[:200]}`.")
    lines.append("Confirm the output differs from the failing attempts before moving on.")
    return [f"{n}. {line}" for n, line in enumerate(lines, 1)]


def heuristic_draft(traj: Trajectory, finding: Finding, verdict: Verdict | None,
                    backend: Backend, store_context: StoreContext) -> Draft | None:
    """A playbook built from one finding alone; None when nothing in the log validated a path."""
    from .draft import provenance

    if finding.resolution is None:
        return None
    first = traj.steps[finding.steps[0]] if finding.steps and 0 <= finding.steps[0] < len(
        traj.steps) else None
    command = _command(first) if first else ""
    program = _program(command) if first is not None and first.tool == "bash" else ""
    error = _error_text(traj, finding)
    err_class = _error_class(error)
    domain, domain_title, domain_desc = _domain(program, store_context)
    attempts = finding.wasted_steps + 1
    trap = [redact(finding.summary) if finding.summary else ""]
    if command:
        trap.append(f"The agent ran `{command}` {attempts} times"
                    + (f"; each attempt failed with `{error}`." if error else "."))
    trap.append("Nothing between the attempts could change the result, so "
                f"{finding.wasted_steps} step(s)"
                + (f" and {finding.wasted_tokens:,} tokens" if finding.wasted_tokens else "")
                + " were wasted.")
    subject = f"`{program}`" if program else "an action"
    description = (f"Trigger when {subject} fails"
                   + (f" with {err_class}" if err_class else "")
                   + (f" (`{error[:160]}`)" if error else "")
                   + " and the next move would be to run it again, or a cosmetic variant of it, "
                   "without changing what caused the failure.")
    checklist = [
        f"`{command[:80]}` no longer fails" + (f" with {err_class}" if err_class else "")
        if command else "The repeated action now succeeds",
        "Something that affects the failure changed before each retry (an edit, an install, "
        "a different input)",
        "No action was run a third time with the same arguments and the same error",
    ]
    keywords = list(dict.fromkeys(
        w for w in [*finding.kind.split("_"), program.lower(), err_class.lower(), "agent-loop"]
        if w and len(w) > 2 and " " not in w and w.isascii()
    ))[:8]
    while len(keywords) < 3:
        keywords.append(["retry", "wasted-steps", "agent"][len(keywords)])
    complexity: Literal["low", "medium", "high"] = (
        "low" if finding.wasted_steps <= 2 else "medium" if finding.wasted_steps <= 5 else "high"
    )
    objective = (f"Get `{command}` to succeed without repeating it unchanged." if command
                 else "Make progress without repeating actions that produce no new information.")
    return Draft(
        title=_title(finding.kind, program, err_class, command),
        description=description[:1024],
        domain=domain,
        domain_title=domain_title,
        domain_description=domain_desc,
        keywords=keywords,
        complexity=complexity,
        objective=objective,
        trap="\n".join(t for t in trap if t),
        insight=INSIGHTS.get(finding.kind, DEFAULT_INSIGHT),
        validated_path="\n".join(_validated_path(finding)),
        checklist=checklist,
        provenance=provenance(traj, finding, verdict, backend, "heuristic"),
    )
