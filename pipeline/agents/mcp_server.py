"""``orf mcp``: a Model Context Protocol server over stdio (official ``mcp`` SDK).

Four read-only tools, from small to large answers (progressive disclosure):
``list_categories``, ``get_frontmatter``, ``search_experiences`` and ``read_experience``, each
returning the text the matching ``orf`` verb prints; and the pair that makes the client's own
model the reader of session logs: ``learn_sessions`` (what ``orf learn`` writes) and
``submit_drafts`` (``orf submit``: only drafts the verifier accepts are written to the store).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import OrfError
from ..orf import Store
from . import views

INSTRUCTIONS = (
    "Reviewed playbooks of past coding-agent traps (ORF store). At the start of a task, or "
    "after an unexpected error, call search_experiences with the task or the error text, or "
    "list_categories then get_frontmatter; read_experience gives one whole playbook. Apply "
    "its Core Principle and Validated Path."
)
SDK_MISSING = "orf mcp needs the mcp SDK: pip install 'orf-pipeline[agents]' (or pip install mcp)"


def build_server(store: Store) -> Any:
    """An ``MCPServer`` exposing the store's read-only tools.

    Raises:
        ImportError: When the mcp SDK is not installed (message says what to install).
    """
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ImportError(SDK_MISSING) from exc
    server = MCPServer("orf", instructions=INSTRUCTIONS)

    def answer(make: Callable[[], str]) -> str:
        # A bad id or category is the agent's to fix: send the message as a tool error
        # (the SDK hides the text of any other exception).
        try:
            return make()
        except OrfError as exc:
            raise ToolError(str(exc)) from exc
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    def list_categories() -> str:
        """List the store's categories (id, name, description), as `orf list-categories`."""
        return answer(lambda: views.categories_text(store))

    @server.tool(annotations=read_only)
    def get_frontmatter(category: str) -> str:
        """Id, title, description and keywords of every playbook in one category."""
        return answer(lambda: views.frontmatter_text(store, category))

    @server.tool(annotations=read_only)
    def read_experience(id: str) -> str:
        """One whole playbook (Markdown), e.g. id EXP-20260720-0001."""
        return answer(lambda: views.experience_text(store, id))

    @server.tool(annotations=read_only)
    def search_experiences(query: str, limit: int = 5) -> str:
        """Playbooks ranked for a task description or an error message, best first."""
        return answer(lambda: views.search_text(store, query, max(1, min(limit, 50))))

    @server.tool(annotations=read_only)
    def learn_sessions(path: str) -> str:
        """Digests of a log file's or folder's sessions, with how to answer (submit_drafts)."""
        from ..config import load_settings
        from ..learn import learn

        items = learn([Path(path).expanduser()], load_settings({"store": store.root}), [])
        return "\n\n".join(i.text for i in items) or "no session with something to learn from"

    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                             idempotent_hint=True, open_world_hint=False)

    @server.tool(annotations=writes)
    def submit_drafts(drafts_json: str) -> str:
        """Verify drafts (learn_sessions' JSON) against their logs; write what the log proves.

        Returns one line per draft: written, reinforced, duplicate or rejected with reasons.
        """
        return answer(lambda: submit_text(store, drafts_json))

    return server


def submit_text(store: Store, drafts_json: str) -> str:
    """What ``submit_drafts`` answers (``orf submit``'s lines) for a JSON text."""
    import tempfile

    from ..config import load_settings
    from ..fsutil import atomic_write
    from ..learn import submit

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "drafts.json"
        atomic_write(path, drafts_json)
        report = submit(path, load_settings({"store": store.root}))
    lines = [f"{d.outcome}{' ' + d.exp_id if d.exp_id else ''}: {d.title}"
             + (f": {'; '.join(d.reasons)}" if d.reasons else "") for d in report.drafts]
    return "\n".join([*report.problems, *lines]) or "no drafts"


def serve(store: Store) -> None:
    """Serve the store over stdio until the client closes the connection."""
    build_server(store).run("stdio")
