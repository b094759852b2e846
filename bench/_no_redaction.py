"""A session memory that redacts nothing: what parsing costs without redaction.

It wraps a real ``SessionSecrets`` rather than subclassing it, because a compiled build
(``setup.py``) makes ``SessionSecrets`` a native class that Python classes cannot extend.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


class NoSecrets:
    """``SessionSecrets`` with its three scanning calls made pass-throughs."""

    def __init__(self) -> None:
        from pipeline.privacy import SessionSecrets

        self._real = SessionSecrets()  # learns nothing, so ``apply`` stays a no-op

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __len__(self) -> int:
        return 0

    def redact(self, text: str, counts: Counter[str] | None = None) -> str:
        return text

    def redact_value(self, obj: Any, counts: Counter[str] | None = None) -> Any:
        return obj

    def redact_values(self, objs: list[Any], counts: Counter[str] | None = None) -> list[Any]:
        return list(objs)


def compiled() -> bool:
    """True when the redaction modules in use were compiled by mypyc (``setup.py``)."""
    import importlib

    memory = importlib.import_module("pipeline.privacy.memory")
    return not str(getattr(memory, "__file__", "")).endswith(".py")
