"""The ``--backend`` choice, read from the provider registry each time it is used.

Read lazily, so a provider registered after the CLI was imported (a plugin, a test module)
is accepted and listed like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from ..llm.registry import PROVIDERS, backend_names


class BackendChoice(click.Choice[str]):
    """``click.Choice`` over the registered backend names."""

    name = "backend"

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(backend_names())

    @choices.setter
    def choices(self, value: Iterable[Any]) -> None:
        """Ignored: the registry is the one list."""


def backend_help(lead: str) -> str:
    """``lead`` followed by each backend's one-line help."""
    lines = "; ".join(f"{spec.name}: {spec.help}" for spec in PROVIDERS.values())
    return f"{lead} ({lines})"
