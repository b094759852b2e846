"""Backend names mapped to lazy factories: the one list the CLI and ``orf config`` read.

A factory imports its SDK only when called, so the offline backend works without any SDK
installed, and a missing one is reported with the pip line that installs it. A test module (or
a plugin) adds a provider with ``register_provider(ProviderSpec(...))``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, MissingApiKey
from .backend import Backend
from .provider import Provider

if TYPE_CHECKING:
    from ..config import Settings
    from ..ledger import Ledger

ProviderFactory = Callable[["Settings", Any], Provider]
"""``factory(settings, client) -> Provider``; ``client`` is a ready SDK client (tests) or None."""

BackendWrapper = Callable[[Provider, "Settings", "Ledger | None"], Backend]
"""Builds the backend the stages talk to around a provider."""

BackendBuilder = Callable[["Settings", "Ledger | None", Any], Backend]
"""``build(settings, ledger, client) -> Backend`` for a backend that is no model provider."""


@dataclass(frozen=True, kw_only=True)
class ProviderSpec:
    """One registered backend: a model provider (``factory``) or a whole backend (``build``)."""

    name: str
    """Name given to ``--backend`` and ``ORF_BACKEND``."""
    help: str
    """One line for ``--help`` and ``orf config``."""
    factory: ProviderFactory | None = None
    """Builds the provider; imports its SDK inside (raises BackendError with the pip line)."""
    wrap: BackendWrapper | None = None
    """Backend around the provider; None: the shared ``ModelBackend`` wrapper."""
    build: BackendBuilder | None = None
    """Builds the backend itself, for one that sends no requests (the heuristic one)."""
    offline: bool = False
    """True when it needs no network and no key."""

    def __post_init__(self) -> None:
        """Exactly one of ``factory`` and ``build``; ``wrap`` only around a ``factory``."""
        if (self.factory is None) == (self.build is None):
            raise ValueError(f"backend {self.name!r}: give either factory or build")
        if self.wrap is not None and self.factory is None:
            raise ValueError(f"backend {self.name!r}: wrap needs a factory")


PROVIDERS: dict[str, ProviderSpec] = {}
"""Every known backend, by name, in registration order."""


def register_provider(spec: ProviderSpec) -> ProviderSpec:
    """Add (or replace) ``spec`` under its name; returns it."""
    PROVIDERS[spec.name] = spec
    return spec


def backend_names() -> list[str]:
    """Registered names, for ``click.Choice`` and ``orf config``."""
    return list(PROVIDERS)


def pip_dependency_error(feature: str, package: str, install: str | None = None) -> BackendError:
    """The error raised when an optional SDK is missing (``install``: what to pip install)."""
    return BackendError(
        f"{feature} needs the {package!r} package - run: pip install {install or package}"
    )


def get_backend(settings: Settings, ledger: Ledger | None = None, *, client: Any = None) -> Backend:
    """The backend named by ``settings.resolved_backend()``.

    Args:
        settings: Run settings (backend, model, timeouts, prices).
        ledger: Where calls are recorded and cached; None keeps an in-memory cache only.
        client: A ready SDK client (tests point it at a fake server).

    Raises:
        MissingApiKey: the backend needs a key and none is set.
        BackendError: unknown backend name, or its SDK is not installed.
    """
    name = settings.resolved_backend()
    spec = PROVIDERS.get(name)
    if spec is None:
        known = ", ".join(sorted(PROVIDERS))
        raise BackendError(f"unknown backend {name!r} - use one of: {known}")
    if spec.build is not None:
        return spec.build(settings, ledger, client)
    assert spec.factory is not None  # __post_init__: one of the two is set
    provider = spec.factory(settings, client)
    if spec.wrap is not None:
        return spec.wrap(provider, settings, ledger)
    from .service import ModelBackend

    return ModelBackend(provider, settings, ledger)


def _heuristic_backend(settings: Settings, ledger: Ledger | None, client: Any) -> Backend:
    from .heuristic import HeuristicBackend

    return HeuristicBackend(settings)


def _gemini(settings: Settings, client: Any) -> Provider:
    # Import lazily: the offline backend must work without the SDK installed.
    try:
        import google.genai  # noqa: F401
    except ImportError as exc:
        raise pip_dependency_error("The gemini backend", "google-genai") from exc
    from .gemini import GeminiProvider, has_credentials

    if client is None and not has_credentials():
        raise MissingApiKey(
            "No Gemini API key found - set GEMINI_API_KEY (or GOOGLE_API_KEY, or Vertex AI "
            "settings), or use --backend heuristic to run offline"
        )
    return GeminiProvider(settings, client=client)


def _gemini_backend(provider: Provider, settings: Settings, ledger: Ledger | None) -> Backend:
    from .gemini import GeminiBackend, GeminiProvider

    assert isinstance(provider, GeminiProvider)
    return GeminiBackend(settings, ledger, provider=provider)


register_provider(ProviderSpec(
    name="heuristic", build=_heuristic_backend, offline=True,
    help="no model: verdicts from the log's own signals, drafts from the findings",
))
register_provider(ProviderSpec(
    name="gemini", factory=_gemini, wrap=_gemini_backend,
    help="Google Gemini through google-genai (GEMINI_API_KEY; ORF_MODEL picks the model)",
))


def _openai_compatible(settings: Settings, client: Any) -> Provider:
    try:
        import openai  # noqa: F401
    except ImportError as exc:
        raise pip_dependency_error("The openai-compatible backend", "openai",
                                   "'orf-pipeline[openai]'") from exc
    from .openai_compat import make_provider

    return make_provider(settings, client)


register_provider(ProviderSpec(
    name="openai-compatible", factory=_openai_compatible,
    help="any OpenAI chat-completions server: Ollama, vLLM, llama.cpp, LM Studio, LiteLLM "
         "(ORF_OPENAI_BASE_URL, ORF_OPENAI_MODEL, optional ORF_OPENAI_API_KEY)",
))
