"""Paths are compared relative to the session's logged cwd, so tools and shell agree."""

from __future__ import annotations

from _detect_helpers import edit, read, sh, traj

from pipeline.detect import detect_all
from pipeline.detect.actions import analyze


def _session(*steps):  # type: ignore[no-untyped-def]
    t = traj(*steps)
    t.extra["cwd"] = "/Users/dev/proj"
    return t


def test_absolute_tool_path_and_relative_shell_path_are_one_file() -> None:
    t = _session(
        read("/Users/dev/proj/pkg/a.go", "package a\nfunc A() {}"),
        sh("sed -i 's/A/B/' pkg/a.go", ""),
        read("/Users/dev/proj/pkg/a.go", "package a\nfunc B() {}"),
    )
    infos = analyze(t)
    assert infos[0].paths == infos[2].paths == ("pkg/a.go",)
    assert "pkg/a.go" in infos[1].writes
    # The sed changed the file in between: the second read is not a wasted re-read.
    assert not [f for f in detect_all(t) if f.kind == "reread"]


def test_without_the_change_the_reread_is_still_found() -> None:
    t = _session(
        read("/Users/dev/proj/pkg/a.go", "package a\nfunc A() {}"),
        sh("ls pkg", "a.go"),
        read("/Users/dev/proj/pkg/a.go", "package a\nfunc A() {}"),
    )
    assert [f.kind for f in detect_all(t)] == ["reread"]


def test_no_cwd_keeps_absolute_paths() -> None:
    t = traj(read("/Users/dev/proj/pkg/a.go", "x"), edit("pkg/a.go", "x", "y"))
    infos = analyze(t)
    assert infos[0].paths == ("/Users/dev/proj/pkg/a.go",)
