"""The provider registry's spec: a provider factory or a whole backend, never both."""

from __future__ import annotations

import pytest

from pipeline.config import Settings
from pipeline.llm.heuristic import HeuristicBackend
from pipeline.llm.registry import PROVIDERS, ProviderSpec, get_backend


def test_a_spec_needs_exactly_one_of_factory_and_build() -> None:
    with pytest.raises(ValueError, match=r"^backend 'x': give either factory or build$"):
        ProviderSpec(name="x", help="h")
    with pytest.raises(ValueError, match=r"^backend 'x': give either factory or build$"):
        ProviderSpec(name="x", help="h", factory=lambda s, c: None,  # type: ignore[arg-type,return-value]
                     build=lambda s, lg, c: None)  # type: ignore[arg-type,return-value]


def test_wrap_needs_a_factory() -> None:
    with pytest.raises(ValueError, match=r"^backend 'x': wrap needs a factory$"):
        ProviderSpec(name="x", help="h", build=lambda s, lg, c: None,  # type: ignore[arg-type,return-value]
                     wrap=lambda p, s, lg: None)  # type: ignore[arg-type,return-value]


def test_the_heuristic_backend_is_built_directly_without_a_provider() -> None:
    spec = PROVIDERS["heuristic"]
    assert spec.factory is None and spec.build is not None and spec.offline
    backend = get_backend(Settings(backend="heuristic"))
    assert type(backend) is HeuristicBackend
    assert backend.name == "heuristic"
