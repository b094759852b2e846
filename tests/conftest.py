"""Shared fixtures: isolate every test from the user's store, ledger and API keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Shared, loaded machines: a slow first draw or a slow example is noise, not a failure.
settings.register_profile(
    "orf", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.load_profile("orf")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
MALFORMED = REPO / "tests" / "data" / "malformed"
"""Inputs that are not usable logs (empty, binary, compressed, bad lines): bad-input tests."""
SHARED = REPO.parent / "shared"
TRAJECTORIES = SHARED / "trajectories"
ORF_REFERENCE = SHARED / "orf-reference" / "experiences"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runapi", action="store_true", help="run tests that call the real API")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runapi"):
        return
    skip = pytest.mark.skip(reason="needs --runapi")
    for item in items:
        if "runapi" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real keys, no user store: every test starts offline in its own folder."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                 "GOOGLE_GEMINI_BASE_URL", "ORF_STORE", "ORF_LEDGER", "ORF_BACKEND",
                 "ORF_MODEL", "ORF_RAISE_ERRORS", "ORF_OPENAI_BASE_URL", "ORF_OPENAI_MODEL",
                 "ORF_OPENAI_API_KEY", "ORF_OPENAI_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORF_HOME", str(tmp_path / "orf-home"))


@pytest.fixture
def shared_trajectories() -> Path:
    """The real public samples, or skip when ../shared is absent (fresh clone)."""
    if not TRAJECTORIES.is_dir():
        pytest.skip("../shared/trajectories not present")
    return TRAJECTORIES


@pytest.fixture
def orf_reference() -> Path:
    """The ORF reference store, or skip when absent."""
    if not ORF_REFERENCE.is_dir():
        pytest.skip("../shared/orf-reference not present")
    return ORF_REFERENCE
