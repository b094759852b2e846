"""Compile the redaction modules with mypyc when a wheel is built; everything else is pyproject.

Redaction runs on every string of every step, and its Python-level work (the walk over a
step's strings, the rule loop, the session memory) costs about a fifth less compiled:
``bench/ingest.py`` prints which build it measured. The ``.py`` files ship either way, so the
package works unchanged where compiling is not possible.

``ORF_USE_MYPYC``: ``1`` compiles, ``0`` does not; unset, a wheel is compiled and an editable
install is not (there the compiled modules would shadow the sources being edited). A build
that cannot compile (no mypy, no C compiler, mypyc refusing the code) says so and goes on
with the pure-Python modules, none of them compiled (``AllOrNothing``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError

COMPILED = [
    "pipeline/privacy/anchors.py",
    "pipeline/privacy/assignments.py",
    "pipeline/privacy/contexts.py",
    "pipeline/privacy/fragments.py",
    "pipeline/privacy/headers.py",
    "pipeline/privacy/hints.py",
    "pipeline/privacy/hits.py",
    "pipeline/privacy/memory.py",
    "pipeline/privacy/plan.py",
    "pipeline/privacy/redact.py",
    "pipeline/privacy/rules.py",
    "pipeline/privacy/values.py",
]


def _wanted() -> bool:
    flag = os.environ.get("ORF_USE_MYPYC", "")
    if flag in ("0", "1"):
        return flag == "1"
    return not any(arg.startswith(("editable", "develop")) for arg in sys.argv[1:])


def _extensions() -> list[Any]:
    if not _wanted():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("orf: mypy is not installed; the redaction modules stay pure Python",
              file=sys.stderr)
        return []
    try:
        # A build environment holds the build requirements only: the project's dependencies
        # (orjson) are typed as Any there, which changes nothing mypyc compiles.
        extensions = mypycify(["--ignore-missing-imports", *COMPILED], opt_level="3",
                              debug_level="0")
    except (Exception, SystemExit):  # mypyc exits on a type error it cannot compile
        print("orf: mypyc could not compile the redaction modules (its errors are above); "
              "they stay pure Python", file=sys.stderr)
        return []
    return extensions


class AllOrNothing(build_ext):
    """Build every compiled module or none.

    The modules share one library (``<hash>__mypyc``): a wheel holding some of them without it
    would not import. So a failed compile (no C compiler, a compiler error) removes what was
    built, says so, and leaves the pure-Python modules. A library left by an earlier build of
    other modules (another hash) is removed first, so no stale one ships.
    """

    def run(self) -> None:
        """Remove stale libraries, build, and on a failure remove every module built."""
        outputs = [self.get_ext_fullpath(ext.name) for ext in self.extensions]
        folders = {os.path.dirname(path) for path in outputs}
        for folder in folders:
            for name in os.listdir(folder) if os.path.isdir(folder) else []:
                path = os.path.join(folder, name)
                if "__mypyc." in name and path not in outputs:
                    os.remove(path)
        try:
            super().run()
        except (BaseError, CCompilerError, OSError) as exc:
            for path in outputs:
                if os.path.exists(path):
                    os.remove(path)
            print(f"orf: the redaction modules could not be compiled ({type(exc).__name__}; "
                  "the compiler's output is above); they stay pure Python", file=sys.stderr)


setup(ext_modules=_extensions(), cmdclass={"build_ext": AllOrNothing})
