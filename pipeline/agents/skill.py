"""The ``manage-experience`` skill and the short context blocks for agent instruction files.

The skill follows ORF's reference ``manage-experience/SKILL.md`` (agentskills.io frontmatter
``name`` and ``description``; Phase 1 consult, Phase 2 record) with ``orf`` verbs in place of
the reference script. The context block points to the store and the commands; it never
pastes playbook text into CLAUDE.md / GEMINI.md / AGENTS.md, which would go stale.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from .. import fsutil
from ..errors import OrfError

SKILL_NAME = "manage-experience"
DEFAULT_TARGET = Path(".claude/skills")
"""Where Claude Code looks for project skills; pass --target for other clients."""

DESCRIPTION = (
    "Consults and records ORF playbooks (reviewed lessons from past coding-agent sessions) in "
    "the store at {store_label} through the `orf` command. Use at the start of a complex task "
    "and right after an unexpected error to find the playbook for the trap, and at the end of "
    "a task that needed a non-obvious fix to record what worked."
)
COMPATIBILITY = ("Requires the `orf` command (pip install orf-pipeline) and read/write access "
                 "to the store folder.")

_SKILL = """\
---
name: manage-experience
description: {description}
license: Apache-2.0
compatibility: {compatibility}
metadata:
  version: "0.2.0"
  spec_format: "ORF-0.2"
  generated_by: "orf skill install"
---

# Instructions

You read and extend the ORF experience store at {store_label} with the `orf` command.
Playbooks are reviewed lessons: read them before repeating a trap, record one after escaping
a new trap.

## Phase 1: Progressive Discovery & Retrieval
1. Search with the task description or the exact error message:
   `orf search "<task or error text>"{opt}`.
2. Or browse: `orf list-categories{opt}`, then
   `orf get-frontmatter --category <domain-id>{opt}`.
3. If a description matches your problem or trap, read it:
   `orf read-experience --id EXP-<YYYYMMDD>-<NNNN>{opt}`.
4. Incorporate its "Abstracted Insight" and "Validated Path" into your execution, and go
   through its Verification Checklist before you finish.

## Phase 2: Recording New Experiences
If you resolved a task through a multi-step debugging loop, an unexpected trap, or a
domain-specific workaround:
1. Check that the store does not know it yet: `orf search "<the error or trap>"{opt}`.
2. Record it (the id and the INDEX.md line are written for you):

```
orf create-experience{opt} --domain <domain-id> \\
  --title "<short imperative title>" \\
  --description "<when to load it: the error or situation>" \\
  --keywords "<keyword>,<keyword>" --complexity medium \\
  --objective "<the task>" --trap "<what went wrong and why>" \\
  --insight "<the general principle, no file names>" \\
  --validated-path "<the steps that worked>" --checklist-item "<how to check it worked>"
```

3. Check the store: `orf validate{opt}` prints OK.

## Phase 3: Learning from past sessions
When asked to learn from session logs (yours or a teammate's):
1. `orf learn <log file or folder> -o .orf/learn` writes one request per session with
   something to learn from: instructions, the JSON schema of drafts, and the session's digest
   (each failure with its real error and the steps after it, by `#index`).
2. Read each request and answer it as it says: a JSON list of
   `{{"session": "<log path>", "session_id": "<id>", "drafts": [...]}}` into one file, each
   draft citing its `evidence` (`trap_steps`, `fix_steps`, the exact `error`). No draft is a
   fine answer for a session that teaches nothing.
3. `orf submit <that file>{opt}` checks every claim against the log and writes what holds;
   it prints why it rejected the others. Fix and resubmit those, or leave them out.
"""

_CONTEXT = """\
## Experience store (ORF playbooks)

{store_label} holds reviewed playbooks of traps that earlier agent sessions fell into
(ORF 0.2: `INDEX.md`, then one Markdown file per playbook). Consult it instead of guessing:

- Before a non-trivial task, and right after an unexpected error:
  `orf search "<task or error text>"{opt}`; read a match with
  `orf read-experience --id EXP-<YYYYMMDD>-<NNNN>{opt}` and follow its Validated Path.
- Browse by topic: `orf list-categories{opt}`, then
  `orf get-frontmatter --category <domain-id>{opt}`.
- {client_line}
- After solving a non-obvious trap, record it with `orf create-experience{opt}`
  (see `--help`).
"""

CONTEXT_FILES = {"claude": "CLAUDE.md", "gemini": "GEMINI.md", "codex": "AGENTS.md",
                 "agents": "AGENTS.md"}
"""Which instruction file each ``orf context --for`` block is meant for."""

_CLIENT_LINES = {
    "claude": "The same answers come as tools from `orf mcp` (`claude mcp add orf -- orf mcp`), "
              "and `orf hook install claude-code` shows the matching playbook when a tool fails.",
    "gemini": "The same answers come as tools from `orf mcp` (`mcpServers` in "
              "`.gemini/settings.json`); `orf hook install gemini` adds the AfterTool hook.",
    "codex": "The same answers come as tools from `orf mcp` (`[mcp_servers.orf]` in "
             "`~/.codex/config.toml`); `orf hook install codex` adds the PostToolUse hook.",
    "agents": "Clients that speak MCP get the same answers as tools from `orf mcp`.",
}


def _labels(store: str | None) -> tuple[str, str]:
    # Without an explicit store the commands use their own default (./experiences, ORF_STORE).
    if store is None:
        return "`experiences/`", ""
    return f"`{store}`", f" --store {shlex.quote(store)}"


def skill_text(store: str | None = None) -> str:
    """The SKILL.md text; commands carry ``--store STORE`` when a store is given."""
    label, opt = _labels(store)
    # JSON strings are YAML double-quoted scalars: any store path stays valid frontmatter.
    return _SKILL.format(description=json.dumps(DESCRIPTION.format(store_label=label)),
                         compatibility=COMPATIBILITY, store_label=label, opt=opt)


def context_text(client: str, store: str | None = None) -> str:
    """The block for ``CONTEXT_FILES[client]``.

    Raises:
        KeyError: When ``client`` is not one of ``CONTEXT_FILES``.
    """
    label, opt = _labels(store)
    return _CONTEXT.format(store_label=label, opt=opt, client_line=_CLIENT_LINES[client])


def install_skill(target: Path, store: str | None = None, force: bool = False) -> Path:
    """Write ``<target>/manage-experience/SKILL.md``; return its path.

    Raises:
        OrfError: When a different SKILL.md not written by orf is there and ``force`` is off.
    """
    path = target / SKILL_NAME / "SKILL.md"
    text = skill_text(store)
    if path.is_file() and not force:
        current = path.read_text(encoding="utf-8", errors="replace")
        if current != text and "generated_by: \"orf skill install\"" not in current:
            raise OrfError(f"{path} exists and was not written by orf; use --force to replace it")
    fsutil.atomic_write(path, text)
    return path
