"""Shared fixtures: isolate every test from the user's store, ledger and API keys."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
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
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                 request: pytest.FixtureRequest) -> None:
    """No real keys, no user store: every test starts offline in its own folder."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                 "GOOGLE_GEMINI_BASE_URL", "ORF_STORE", "ORF_LEDGER", "ORF_BACKEND",
                 "ORF_MODEL", "ORF_RAISE_ERRORS", "ORF_OPENAI_BASE_URL", "ORF_OPENAI_MODEL",
                 "ORF_OPENAI_API_KEY", "ORF_OPENAI_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORF_HOME", str(tmp_path / "orf-home"))
    # The tests written for the lessons reader keep testing it; the episodes reader (the
    # default) is tested where a test asks for it (``episodes_reader``).
    if request.node.get_closest_marker("episodes") is None:
        monkeypatch.setenv("ORF_READER", "lessons")
    else:
        monkeypatch.delenv("ORF_READER", raising=False)


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


@dataclass(frozen=True)
class BuiltWheel:
    """The project's wheel, built once per test run (``built_wheel``)."""

    path: Path
    compiled: list[str]
    """The redaction modules compiled into it (``setup.py``): none when ``not_compiled``."""
    not_compiled: str | None
    """Why this machine cannot compile them (no mypyc, no C compiler, no Python.h), or None."""
    log: str


def _cannot_compile() -> str | None:
    """Why a C extension cannot be built here, or None."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypy (mypyc) is not installed"
    if not (shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h)"
    return None


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> BuiltWheel:
    """``pip wheel`` of the repository, offline, with the redaction modules compiled when the
    machine can (a compile takes most of a minute: the packaging tests share this one)."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("needs setuptools")
    out = tmp_path_factory.mktemp("wheel")
    why = _cannot_compile()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(REPO)],
        capture_output=True, text=True, cwd=out,
        env={**os.environ, "ORF_USE_MYPYC": "0" if why else "1"})
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        compiled = [n for n in zf.namelist()
                    if n.startswith("pipeline/privacy/") and n.endswith(".so")]
    return BuiltWheel(wheel, compiled, why, done.stderr)
