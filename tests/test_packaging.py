"""The wheel carries the prompts, and an installed `orf` finds them from any folder."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, BuiltWheel


@pytest.mark.slow
def test_wheel_ships_prompts_and_finds_them(tmp_path: Path, built_wheel: BuiltWheel) -> None:
    wheel = built_wheel.path
    names = zipfile.ZipFile(wheel).namelist()
    prompts = sorted(p.name for p in (REPO / "prompts").iterdir() if p.suffix in {".md", ".json"})
    for name in prompts:
        assert f"pipeline/_prompts/{name}" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("from pipeline.prompts import prompts_dir, load_prompt;"
            "print(prompts_dir()); assert 'LOG' in load_prompt('draft.md')")
    done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True,
                          text=True, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(site / "pipeline" / "_prompts")
