"""The ``orf`` console script: a fast path for hooks, the click CLI for everything else.

Importing the CLI costs about 300 ms (pydantic settings, every command module); a tool hook
runs after every tool call and has a budget of 200 ms, so ``orf hook <client>`` is served
from here without importing ``pipeline.cli``.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``orf``."""
    argv = sys.argv[1:]
    if len(argv) >= 2 and argv[0] == "hook" and not {"-h", "--help"} & set(argv):
        from .agents import hook

        if argv[1] in hook.CLIENTS:
            sys.exit(hook.main(argv[1:]))
    from .cli import main as cli_main

    cli_main()
