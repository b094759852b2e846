"""A test hook: stop the process at a named point of ``orf mine`` so a test can kill it there."""

from __future__ import annotations

import os
import sys
import time

PAUSE_ENV = "ORF_TEST_PAUSE_AT"
"""Test hook: ``ORF_TEST_PAUSE_AT=<point>`` makes the process announce ``orf: paused at
<point>`` on stderr and sleep there (``ORF_TEST_PAUSE_SECONDS``, default 3600), so a test can
SIGKILL it at a known point. Points: ``sources`` (discovery and the ledger check done),
``scanned`` (parse+detect done), ``drafting`` (the first
session's judge+draft came back, others pending), ``writing`` (the first EXP file is written,
its intent not yet closed), ``written`` (all files written, sources not yet recorded)."""


def pause_point(name: str) -> None:
    """Sleep at ``name`` when the test hook asks for it (see ``PAUSE_ENV``)."""
    if os.environ.get(PAUSE_ENV) != name:
        return
    print(f"orf: paused at {name}", file=sys.stderr, flush=True)
    time.sleep(float(os.environ.get("ORF_TEST_PAUSE_SECONDS", "3600")))
