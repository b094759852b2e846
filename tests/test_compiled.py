"""The mypyc build of the redaction modules (``setup.py``) redacts exactly as the sources do.

A wheel is built with them compiled and unpacked; the same script then parses the planted
secret corpus and the real samples, and redacts a set of edge texts, once with the compiled
modules and once with the sources, each in its own process. Every byte must agree, and the
compiled run must really have used compiled modules.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from _secret_corpus import write_corpus
from conftest import REPO, TRAJECTORIES, BuiltWheel

# Parses every folder given and prints each trajectory as sorted-key JSON, then the session
# redaction of each line of the texts file: the same lines, whichever build is imported.
_DUMP = """
import dataclasses, importlib, sys
from pathlib import Path
import orjson
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.privacy import SessionSecrets, leak_kinds, redact, redact_value
memory = importlib.import_module("pipeline.privacy.memory")
print(memory.__file__)
for src in discover([Path(p) for p in sys.argv[2:]], issues=[]):
    for traj in parse_source(src, ParseContext()):
        print(orjson.dumps(dataclasses.asdict(traj), option=orjson.OPT_SORT_KEYS,
                           default=str).decode())
for n, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="surrogateescape")):
    if n % 20 == 0:  # sessions of 20 texts: what one learns, the next ones lose
        secrets = SessionSecrets()
    print(repr(secrets.redact(line)))
    print(repr(secrets.redact_value({"password": line.strip(), "args": [line]})))
    # the stateless gate and the final check every request and written draft passes
    print(repr((redact(line), redact_value({"token": line.strip()}), leak_kinds(line))))
"""

# Edge pieces around the keyword rules, the non-ASCII characters the hint search treats
# apart, and secret shapes: joined at random into the texts both builds redact.
_PIECES = ["password", "pass", "token", "key", "secret", "api_key", "auth", "=", ": ", " is ",
           " set to ", '"', "'", "`", "\\", "\u2192", "\u00e9", "\u212a", "\u0130", "\ud83d",
           "\U0001f511", "\n", "machine h login u password ", "://u:", "@host", "Bearer ",
           "-p ", "--password ", "ghp_", "sk-ant-api03-", "AKIA", "xoxb-", "M", ".", "_-",
           "Zq8vL2mWx4pR7tYu9aB3", "0123456789abcdef0123456789abcdef", " "]


@pytest.fixture(scope="module")
def compiled_site(built_wheel: BuiltWheel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with its redaction modules compiled, unpacked: a folder for ``PYTHONPATH``."""
    if built_wheel.not_compiled:
        pytest.skip(f"cannot compile here: {built_wheel.not_compiled}")
    # The build had all it needs: a wheel without the modules is a broken build, not a skip.
    listed = re.findall(r'"pipeline/privacy/(\w+)\.py"', (REPO / "setup.py").read_text())
    assert sorted(n.split("/")[-1].split(".")[0] for n in built_wheel.compiled) == sorted(listed)
    assert len(listed) >= 8, built_wheel.log
    site = tmp_path_factory.mktemp("compiled") / "site"
    with zipfile.ZipFile(built_wheel.path) as zf:
        zf.extractall(site)
    return site


def _texts(path: Path) -> Path:
    rng = random.Random(5)
    lines = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 14))).replace("\n", " ")
             for _ in range(3000)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def _dump(pythonpath: Path, texts: Path, folders: list[Path], cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _DUMP, str(texts), *map(str, folders)],
        capture_output=True, text=True, cwd=cwd, errors="surrogateescape",
        env={**os.environ, "PYTHONPATH": str(pythonpath)})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.slow
def test_compiled_build_redacts_byte_for_byte_as_the_sources(
    compiled_site: Path, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "logs")
    folders = [tmp_path / "logs"]
    if TRAJECTORIES.is_dir():  # the real samples too, when ../shared is there
        folders += sorted(p for p in TRAJECTORIES.iterdir() if p.is_dir())
    texts = _texts(tmp_path / "texts.txt")
    elsewhere = tmp_path / "elsewhere"  # no source tree on the path by the working folder
    elsewhere.mkdir()
    compiled = _dump(compiled_site, texts, folders, elsewhere)
    sources = _dump(REPO, texts, folders, elsewhere)
    assert compiled[0].startswith(str(compiled_site)) and compiled[0].endswith(".so")
    assert sources[0] == str(REPO / "pipeline" / "privacy" / "memory.py")
    assert len(compiled) == len(sources) > 9000
    assert compiled[1:] == sources[1:]
    assert not any(corpus.leaks(line) for line in compiled[1:])


@pytest.mark.slow
def test_a_failed_compile_ships_the_sources_alone(
    built_wheel: BuiltWheel, tmp_path: Path
) -> None:
    """A compiler that fails on the modules' shared library only: a wheel with none of them
    compiled (the others without it would not import), a line saying so, and it redacts."""
    if built_wheel.not_compiled:
        pytest.skip(f"cannot compile here: {built_wheel.not_compiled}")
    # A copy of the sources: the repository's build/ holds the modules compiled for
    # ``built_wheel``, up to date, so no compiler would be called there.
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for folder in ("pipeline", "prompts"):
        shutil.copytree(REPO / folder, src / folder, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    real_cc = shutil.which("cc") or shutil.which("gcc")
    cc = tmp_path / "cc"
    cc.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in *__native*) exit 1;; esac; done\n'
                  f'exec {real_cc} "$@"\n')
    cc.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "wheel"), str(src)],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "ORF_USE_MYPYC": "1", "CC": str(cc)})
    assert done.returncode == 0, done.stderr
    assert "orf: the redaction modules could not be compiled" in done.stdout + done.stderr
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".so")]
        zf.extractall(tmp_path / "site")
    code = ("import importlib; from pipeline.privacy import redact;"
            "print(importlib.import_module('pipeline.privacy.memory').__file__);"
            "print(redact('password = \"Zq8vL2mWx4pR7tYu\"'))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path / "site")})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [str(tmp_path / "site/pipeline/privacy/memory.py"),
                                       'password = "[REDACTED:password]"']
