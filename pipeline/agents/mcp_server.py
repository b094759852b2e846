"""``orf mcp``: a read-only Model Context Protocol server over stdio (official ``mcp`` SDK).

Four tools, from small to large answers (progressive disclosure): ``list_categories``,
``get_frontmatter``, ``search_experiences`` and ``read_experience``. Each returns the text the
matching ``orf`` verb prints. Nothing here writes to the store.
"""

from __future__ import annotations

from collections.abc import Callable
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

    return server


def serve(store: Store) -> None:
    """Serve the store over stdio until the client closes the connection."""
    build_server(store).run("stdio")
