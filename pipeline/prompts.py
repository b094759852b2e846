"""Find prompt templates in a source checkout (``prompts/``) or an installed wheel.

A wheel carries them as ``pipeline/_prompts`` (see ``package-dir`` in pyproject.toml); a source
checkout or an editable install reads the top-level ``prompts/`` folder directly.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent


@cache
def prompts_dir() -> Path:
    """Folder holding the prompt templates."""
    packaged = _HERE / "_prompts"
    if packaged.is_dir():
        return packaged
    return _HERE.parent / "prompts"


def load_prompt(name: str) -> str:
    """Text of ``prompts/<name>`` (e.g. ``judge.md``)."""
    return (prompts_dir() / name).read_text(encoding="utf-8")
