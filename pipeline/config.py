"""Settings: defaults < pyproject ``[tool.orf]`` < env ``ORF_*`` < command-line flags.

Every tunable lives here with its default and a one-line docstring, so the README's
configuration reference and ``orf config`` can be generated from this one class.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10 fallback
    import tomli as tomllib


class DetectSettings(BaseModel):
    """Loop detector thresholds. A single repeat is already waste; these grade severity."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    warn_repeats: int = 3
    """Repeats (including the first attempt) at which a loop is graded ``warn``."""
    high_repeats: int = 5
    """Repeats at which a loop is graded ``high``."""
    cycle_min_period: int = 2
    """Shortest cycle period looked for."""
    cycle_max_period: int = 5
    """Longest cycle period looked for."""
    cycle_min_repeats: int = 2
    """A cycle must repeat at least this many times to be reported."""
    near_repeat_similarity: float = 0.85
    """Similarity (0..1) of normalized arguments above which two actions are near-repeats."""
    reread_overlap: float = 0.5
    """Share (0..1) of a read's line range already shown since the file last changed above
    which the read is a re-read; below it the agent is paging."""
    retry_variation_min: int = 3
    """Different actions hitting the same error signature at least this often."""
    chant_chunk: int = 50
    """Chunk size in characters for chanting detection."""
    chant_repeats: int = 10
    """Occurrences of one chunk that count as chanting."""
    monologue_repeats: int = 3
    """Identical agent messages in a row with no observation between."""
    thrash_compactions: int = 3
    """Compactions/condensations within ``thrash_window`` steps that count as context thrash."""
    thrash_window: int = 20
    """Window in steps for context thrash."""


class Settings(BaseModel):
    """All settings of ``orf``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    store: Path = Path("experiences")
    """The ORF store (folder holding INDEX.md)."""
    ledger: Path | None = None
    """SQLite ledger; default ``<store>/../.orf/ledger.db``."""
    backend: str | None = None
    """``gemini``, ``openai-compatible`` or ``heuristic``; default gemini when a key is set,
    heuristic otherwise."""
    model: str = "gemini-2.5-flash"
    """Gemini model used by the gemini backend (``--model`` sets it for that backend)."""
    openai_base_url: str | None = None
    """Base URL of the openai-compatible server, e.g. ``http://127.0.0.1:11434/v1``."""
    openai_model: str | None = None
    """Model the openai-compatible server serves (``--model`` sets it for that backend)."""
    openai_api_key_env: str = "ORF_OPENAI_API_KEY"
    """Environment variable holding the openai-compatible server's key (optional; a local
    server checks none). The key itself is never a setting."""
    concurrency: int = 4
    """Parallel online LLM calls."""
    jobs: int = Field(default_factory=lambda: os.cpu_count() or 1)
    """Worker processes for parse and detect."""
    output_max_chars: int = 4000
    """Step outputs longer than this are truncated (head and tail kept)."""
    max_file_bytes: int = 2_000_000_000
    """Files larger than this are skipped with a message."""
    max_line_bytes: int = 256_000_000
    """A single line longer than this is reported and skipped."""
    draft_input_tokens: int = 6000
    """Token budget of the drafting prompt per session."""
    max_drafts_per_session: int = 3
    """At most this many drafts per session."""
    reader: Literal["episodes", "lessons"] = Field(
        default_factory=lambda: "lessons" if os.environ.get("ORF_READER") == "lessons"
        else "episodes")
    """What a model backend reads: every session's episodes (failures and corrections, in a
    digest; the verifier keeps what the log proves), or only the lessons the rules found."""
    absolute_paths: bool = False
    """Keep absolute log paths in provenance (a private store); by default they are written
    relative to the store's repository, or as ``~/…`` without the user name."""
    max_draft_retries: int = 2
    """Runs in which a source's sessions may go undrafted (unusable replies) before it is
    recorded with the reason and not sent again until its log or the model changes."""
    digest_tokens: int = 4000
    """Token budget of one digest chunk (a long session is cut into at most two)."""
    call_timeout_s: float = 120.0
    """Per-call timeout for online Gemini calls."""
    max_attempts: int = 5
    """Attempts per Gemini call (transport/429/5xx retries)."""
    min_wasted_steps: int = 1
    """Sessions with fewer wasted steps are not sent to judge/draft."""
    judge_min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    """A model's judge verdict below this confidence is recorded as ``unknown`` (with its
    reason)."""
    max_sessions_per_run: int = 50
    """At most this many sessions go to judge/draft per run (most wasted first)."""
    dedupe_duplicate: float = 0.80
    """Text similarity at or above which a draft is a duplicate of an existing playbook."""
    dedupe_related: float = 0.45
    """Text similarity at or above which a draft is related (written, linked)."""
    lock_timeout_s: float = 60.0
    """How long a run waits for the store lock."""
    fail_on_error: float = 0.5
    """Fraction of failed inputs above which a run exits 1 instead of 3."""
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {
            # USD per 1M tokens (input, output), online. Batch Mode is half of this.
            "gemini-2.5-flash": (0.30, 2.50),
            "gemini-2.5-flash-lite": (0.10, 0.40),
            "gemini-2.5-pro": (1.25, 10.00),
            "gemini-3-flash-preview": (0.50, 3.00),
        }
    )
    """Price table, USD per 1M tokens (input, output)."""
    detect: DetectSettings = Field(default_factory=DetectSettings)
    """Loop detector thresholds."""

    @property
    def ledger_path(self) -> Path:
        """Where the ledger lives (beside the store by default)."""
        if self.ledger is not None:
            return self.ledger
        return self.store.resolve().parent / ".orf" / "ledger.db"

    def with_model(self, model: str | None) -> Settings:
        """``--model`` applied to the backend in use: the openai-compatible one, else Gemini."""
        if model is None:
            return self
        name = "openai_model" if self.resolved_backend() == "openai-compatible" else "model"
        return self.model_copy(update={name: model})

    def resolved_backend(self) -> str:
        """The backend to use: explicit setting, else gemini when a key is set."""
        if self.backend:
            return self.backend
        if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
            return "gemini"
        if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
            return "gemini"
        return "heuristic"


def _find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _from_pyproject(start: Path) -> dict[str, Any]:
    path = _find_pyproject(start)
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read [tool.orf]: {exc}") from exc
    section = data.get("tool", {}).get("orf", {})
    return dict(section) if isinstance(section, dict) else {}


def _from_env(environ: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in ("detect", "prices"):
            continue
        value = environ.get(f"ORF_{name.upper()}")
        if value not in (None, ""):
            out[name] = value
    return out


def setting_sources(
    overrides: dict[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    environ: dict[str, str] | None = None,
) -> dict[str, str]:
    """Which layer set each setting: ``default``, ``pyproject (PATH)``, ``env ORF_X``, ``flag``.

    The same layers as ``load_settings``, in the same order; detector thresholds are keyed
    ``detect.NAME``.
    """
    start = cwd or Path.cwd()
    pyproject = _find_pyproject(start)
    from_py = _from_pyproject(start)
    from_env = _from_env(os.environ if environ is None else environ)
    flags = {k for k, v in (overrides or {}).items() if v is not None}
    where = f"pyproject ({pyproject})"
    out: dict[str, str] = {}
    for name in Settings.model_fields:
        out[name] = ("flag" if name in flags else f"env ORF_{name.upper()}" if name in from_env
                     else where if name in from_py else "default")
    raw = from_py.get("detect")
    detect: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for name in DetectSettings.model_fields:
        out[f"detect.{name}"] = where if name in detect else "default"
    return out


def load_settings(
    overrides: dict[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build settings from the layers; ``overrides`` (flags) win. None values are ignored."""
    merged: dict[str, Any] = {}
    merged.update(_from_pyproject(cwd or Path.cwd()))
    merged.update(_from_env(os.environ if environ is None else environ))
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid setting {where!r}: {first['msg']}") from exc
