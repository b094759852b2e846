"""Agents read the store: search, the MCP server, the skill, context blocks and hooks.

Everything on the hook's path (``bm25``, ``search``, ``hook``) imports only the standard
library and orjson, so a hook answers in well under 200 ms; the store parser, PyYAML and
the mcp SDK are imported only where they are needed.
"""
