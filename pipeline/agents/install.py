"""``orf hook install CLIENT``: merge the orf hook into a client's project settings file.

Only the hook entries are added (or an older orf entry for the same client replaced); every
other key, event and hook of the file stays as it was. The file is rewritten atomically.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import fsutil
from ..errors import ConfigError


@dataclass(frozen=True)
class HookTarget:
    """Where and how one client registers a tool hook."""

    settings: str
    """The project settings file, relative to the project folder."""
    entries: tuple[tuple[str, str], ...]
    """(event, matcher) pairs to register."""
    timeout: int
    """Hook timeout in the client's unit (seconds for Claude Code and Codex, ms for Gemini)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Additional keys of the hook entry."""


TARGETS: dict[str, HookTarget] = {
    # Failures only: a Bash call that exits nonzero is a PostToolUseFailure ("Exit code N");
    # PostToolUse fires for successes, so registering it would start orf after every call.
    "claude-code": HookTarget(".claude/settings.json", (("PostToolUseFailure", "*"),), 5),
    # AfterTool has no failure-only event: the hook reads the response's error or exit code.
    "gemini": HookTarget(".gemini/settings.json", (("AfterTool", ".*"),), 5000,
                         {"name": "orf-playbooks",
                          "description": "The matching ORF playbook after a failed tool call"}),
    # Codex (hooks on by default since 0.124) sends PostToolUse for Bash, apply_patch and MCP
    # tools (`mcp__server__tool`), failed or not; the matcher is a regex on the tool name.
    "codex": HookTarget(".codex/hooks.json", (("PostToolUse", "Bash|apply_patch|mcp__.*"),), 5),
}
"""Hook clients and their settings files."""


def orf_executable() -> str:
    """The ``orf`` script beside the running interpreter (works without an active venv)."""
    script = Path(sys.executable).parent / "orf"
    return str(script) if script.is_file() else "orf"


def hook_command(client: str, store: Path, project: Path | None = None,
                 absolute: bool = False) -> str:
    """The shell command the client runs: ``<orf> hook <client> --store <store>``.

    Teams commit the settings file, so by default the command holds no path of this machine:
    ``orf`` when the one on PATH is this one, else the script's path relative to ``project``
    when it lies inside (``.venv/bin/orf``); the store relative to ``project`` likewise.
    Clients run hooks from the project folder. ``absolute`` writes both as absolute paths (a
    private setup, or an ``orf`` outside the project and off PATH).
    """
    script, where = Path(orf_executable()), store.resolve()
    program = str(script)
    if not absolute:
        on_path = shutil.which("orf")
        if on_path is not None and (not script.is_absolute()
                                    or Path(on_path).resolve() == script.resolve()):
            program = "orf"
        elif project is not None:
            program = _inside(script, project) or program
        if project is not None:
            where = Path(_inside(where, project) or where)
    return f"{shlex.quote(program)} hook {client} --store {shlex.quote(str(where))}"


def _inside(path: Path, project: Path) -> str | None:
    """``path`` relative to ``project`` when it lies inside, else None."""
    try:
        return path.resolve().relative_to(project.resolve()).as_posix() or "."
    except ValueError:
        return None


def _is_orf_hook(entry: Any, client: str) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and bool(
        re.search(rf"(?:^|[/\s'\"])orf'? hook {re.escape(client)}(?:\s|$)", command))


def merge_hook(settings: dict[str, Any], client: str, command: str) -> bool:
    """Add the orf hook of ``client`` to a settings mapping in place; True when it changed.

    Raises:
        ConfigError: When ``hooks`` or one of its events is not of the documented shape.
    """
    target = TARGETS[client]
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' is not a JSON object")
    changed = _drop_stale(hooks, client, {event for event, _ in target.entries})
    for event, matcher in target.entries:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"'hooks.{event}' is not a JSON array")
        wanted = {"type": "command", "command": command, "timeout": target.timeout,
                  **target.extra}
        if any(isinstance(g, dict) and g.get("matcher") == matcher and wanted in g.get("hooks", [])
               for g in groups):
            continue
        kept, _ = _without_orf(groups, client)  # an older orf entry is replaced below
        kept.append({"matcher": matcher, "hooks": [wanted]})
        hooks[event] = kept
        changed = True
    return changed


def _without_orf(groups: list[Any], client: str) -> tuple[list[Any], bool]:
    """``groups`` without the orf hooks of ``client``, and whether one was removed.

    A group that held only those goes; other hooks and groups stay as they were.
    """
    kept, removed = [], False
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            others = [h for h in group["hooks"] if not _is_orf_hook(h, client)]
            if len(others) != len(group["hooks"]):
                removed = True
                if not others:
                    continue
                group["hooks"] = others
        kept.append(group)
    return kept, removed


def _drop_stale(hooks: dict[str, Any], client: str, events: set[str]) -> bool:
    """Remove orf hooks of ``client`` from events orf no longer registers.

    An older install put Claude Code's hook on ``PostToolUse`` too. True when one was removed.
    """
    changed = False
    for event in [e for e in hooks if e not in events and isinstance(hooks[e], list)]:
        kept, removed = _without_orf(hooks[event], client)
        changed = changed or removed
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return changed


def install_hook(client: str, project: Path, store: Path,
                 absolute: bool = False) -> tuple[Path, bool]:
    """Merge the orf hook into ``project``'s settings file for ``client``.

    Returns:
        The settings file and whether it changed.

    Raises:
        ConfigError: When the file exists but is not a JSON object of the documented shape.
    """
    path = project / TARGETS[client].settings
    settings: Any = {}
    if path.is_file():
        try:
            settings = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc}); fix it or move it away, "
                              "nothing was changed") from exc
        if not isinstance(settings, dict):
            raise ConfigError(f"{path}: not a JSON object; nothing was changed")
    try:
        changed = merge_hook(settings, client, hook_command(client, store, project, absolute))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}; nothing was changed") from exc
    if changed:
        fsutil.atomic_write(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
    return path, changed
