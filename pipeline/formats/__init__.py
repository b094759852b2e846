"""Log format adapters, looked up by name."""

from __future__ import annotations

import importlib

from .base import Adapter, ParseContext

# name -> module; modules are imported lazily so `orf --help` stays fast.
ADAPTER_MODULES: dict[str, str] = {
    "antigravity": "antigravity",
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "swe-agent": "swe_agent",
    "mini-swe-agent": "mini_swe_agent",
    "openhands": "openhands",
    "atif": "atif",
    "aider": "aider",
}

_cache: dict[str, Adapter] = {}


def get_adapter(name: str) -> Adapter:
    """The adapter called ``name``; raises ``KeyError`` for an unknown name."""
    if name not in _cache:
        module = importlib.import_module(f".{ADAPTER_MODULES[name]}", __name__)
        _cache[name] = module.Adapter()
    return _cache[name]


def all_adapters() -> list[Adapter]:
    """Every adapter, in the order of ``ADAPTER_MODULES``."""
    return [get_adapter(n) for n in ADAPTER_MODULES]


__all__ = ["ADAPTER_MODULES", "Adapter", "ParseContext", "all_adapters", "get_adapter"]
