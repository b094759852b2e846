"""Trajectory logs in, reviewed ORF playbooks out.

The library behind the ``orf`` command. The main entry points are importable from here; they
load lazily so that ``orf --help`` does not pay for the SDK or the detectors::

    from pipeline import ParseContext, detect_all, discover, parse_source
    for src in discover([Path("logs/")], issues=[]):
        for traj in parse_source(src, ParseContext()):
            print(traj.id, [f.kind for f in detect_all(traj)])
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "ParseContext": "pipeline.formats.base",
    "Settings": "pipeline.config",
    "Store": "pipeline.orf",
    "analyze_paths": "pipeline.analyze",
    "detect_all": "pipeline.detect",
    "discover": "pipeline.formats.discover",
    "load_settings": "pipeline.config",
    "mine": "pipeline.mine",
    "parse_source": "pipeline.formats.discover",
    "redact": "pipeline.privacy",
    "validate_store": "pipeline.orf",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
