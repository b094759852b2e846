from __future__ import annotations

import json
from pathlib import Path

from _secret_corpus import write_corpus
from click.testing import CliRunner

from pipeline.cli import main


def test_redact_keeps_format_and_removes_secrets(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "logs")
    runner = CliRunner()
    for f in corpus.files:
        result = runner.invoke(main, ["redact", str(f)])
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert corpus.leaks(out) == [], f.name
        assert "[REDACTED:" in out
        if f.suffix == ".jsonl":
            rows = [json.loads(line) for line in out.splitlines()]
            assert len(rows) == len(f.read_text().splitlines())
        elif f.name.endswith(".traj.json"):
            assert json.loads(out)["trajectory_format"] == "mini-swe-agent-1"
        else:  # a Gemini CLI record (an object), an OpenHands trajectory (a list)
            assert type(json.loads(out)) is type(json.loads(f.read_text()))
        assert f"{f}: " in result.stderr and "placeholder(s) (" in result.stderr


def test_unchanged_lines_keep_their_bytes(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"a": 1,  "b": "plain"}\n{"c":"DB_PASSWORD=s3cr3t-Pass"}\nnot json\n')
    result = CliRunner().invoke(main, ["redact", str(f)])
    assert result.stdout == ('{"a": 1,  "b": "plain"}\n{"c":"DB_PASSWORD=[REDACTED:password]"}\n'
                             "not json\n")
    assert result.stderr == f"{f}: 1 placeholder(s) (password: 1)\n"


def test_output_file_and_quiet(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("export PASSWORD=hunter2hunter2\nall good\n")
    out = tmp_path / "out.txt"
    result = CliRunner().invoke(main, ["redact", str(f), "-o", str(out), "--quiet"])
    assert result.exit_code == 0
    assert result.stdout == "" and result.stderr == ""
    assert out.read_text() == "export PASSWORD=[REDACTED:password]\nall good\n"


def test_refuses_to_overwrite_input(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x\n")
    result = CliRunner().invoke(main, ["redact", str(f), "-o", str(f)])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {f}: refusing to overwrite the input - choose another "
                             "--output\n")


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["redact", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
