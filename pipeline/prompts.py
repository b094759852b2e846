"""Find prompt templates in a source checkout (``prompts/``) or an installed wheel.

Installed wheels carry them as ``pipeline/_prompts``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


@cache
def prompts_dir() -> Path:
    """Folder holding the prompt templates."""
    try:
        packaged = resources.files("pipeline._prompts")
        path = Path(str(packaged))
        if path.is_dir():
            return path
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / "prompts"


def load_prompt(name: str) -> str:
    """Text of ``prompts/<name>`` (e.g. ``judge.md``)."""
    return (prompts_dir() / name).read_text(encoding="utf-8")
