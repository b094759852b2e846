"""The ORF store verbs of the ``orf`` CLI: output, exit codes, exact error text, concurrency."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.orf import Store, validate_store

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "experiences"

CREATE_ARGS = [
    "create-experience", "--domain", "agent-loops", "--title", "Read the error first",
    "--description", "Trigger when a command failed.", "--keywords", "errors, reading,",
    "--complexity", "low", "--objective", "Fix a failing command.", "--trap", "Blind reruns.",
    "--insight", "Read before rerunning.", "--validated-path", "Read, change, rerun.",
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dest = tmp_path / "experiences"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".orf.lock"))
    return dest


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


STORE_COMMANDS = ["list-categories", "get-frontmatter", "read-experience", "create-experience",
                  "validate", "init"]


@pytest.mark.parametrize("command", STORE_COMMANDS)
def test_every_store_command_has_help_with_examples(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0
    assert "Examples:" in out and f"orf {command}" in out
    assert "--store" in out and "Exit codes:" in out


def test_list_categories_yaml_and_json(store: Path) -> None:
    code, out, _ = run("list-categories", "--store", store)
    assert code == 0
    assert out.startswith("categories:\n- id: agent-loops\n  name: Agent Loop Traps\n")
    code, out, _ = run("list-categories", "--store", store, "--json")
    assert code == 0
    assert json.loads(out)["categories"] == [c.to_dict() for c in Store(store).categories()]


def test_store_from_env(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORF_STORE", str(store))
    code, out, _ = run("list-categories", "--json")
    assert code == 0 and json.loads(out)["categories"][0]["id"] == "agent-loops"


def test_missing_store_error(tmp_path: Path) -> None:
    code, out, err = run("list-categories", "--store", tmp_path / "nope")
    assert code == 1 and out == ""
    assert err == (f"Error: no ORF store at {tmp_path / 'nope'} (INDEX.md not found); "
                   f"create one with `orf init --store {tmp_path / 'nope'}`\n")


def test_get_frontmatter(store: Path) -> None:
    code, out, _ = run("get-frontmatter", "--category", "agent-loops", "--store", store)
    assert code == 0
    rows = yaml.safe_load(out)["experiences"]
    assert [r["id"] for r in rows] == ["EXP-20261130-0001", "EXP-20261130-0002",
                                       "EXP-20261130-0003"]
    assert set(rows[0]) == {"id", "title", "description", "keywords", "file_path"}
    code, out, _ = run("get-frontmatter", "--category", "agent-loops", "--store", store, "--json")
    assert json.loads(out)["experiences"] == rows


def test_get_frontmatter_unknown_and_traversal(store: Path) -> None:
    code, _, err = run("get-frontmatter", "--category", "nothing-here", "--store", store)
    assert code == 1
    assert err == (f"Error: category 'nothing-here' not found in {store}; "
                   "see `orf list-categories`\n")
    code, _, err = run("get-frontmatter", "--category", "../etc", "--store", store)
    assert code == 1
    assert err == ("Error: invalid domain '../etc': use a lowercase slug of letters, digits "
                   "and '-' (1-64 characters, e.g. 'python-scripting')\n")


def test_read_experience(store: Path) -> None:
    path = store / "agent-loops" / "EXP-20261130-0002.md"
    code, out, _ = run("read-experience", "--id", "EXP-20261130-0002", "--store", store)
    assert code == 0 and out == path.read_text(encoding="utf-8")
    code, out, _ = run("read-experience", "--id", "EXP-20261130-0002", "--store", store, "--json")
    data = json.loads(out)
    assert data["id"] == "EXP-20261130-0002" and data["domain"] == "agent-loops"
    assert data["insight"].startswith("Before undoing or redoing an edit")
    assert len(data["checklist"]) == 3


@pytest.mark.parametrize("bad", ["../../../etc/passwd", "/etc/passwd", "EXP-1"])
def test_read_experience_refuses_traversal(store: Path, bad: str) -> None:
    code, out, err = run("read-experience", "--id", bad, "--store", store)
    assert code == 1 and out == ""
    assert err == (f"Error: invalid experience id {bad!r}: expected EXP-YYYYMMDD-NNNN, "
                   "e.g. EXP-20260720-0001\n")


def test_read_experience_not_found(store: Path) -> None:
    code, _, err = run("read-experience", "--id", "EXP-20200101-0001", "--store", store)
    assert code == 1
    assert err == f"Error: experience EXP-20200101-0001 not found in {store}\n"


def test_init_then_create_then_validate(tmp_path: Path) -> None:
    root = tmp_path / "new"
    code, out, _ = run("init", "--store", root)
    assert code == 0 and out == f"Created empty store at {root}\n"
    code, out, _ = run("init", "--store", root)
    assert code == 0 and out == f"Store already exists at {root} (nothing changed)\n"
    code, out, _ = run(*CREATE_ARGS, "--store", root, "--checklist-item", "one",
                       "--checklist-item", "two", "--domain-title", "Agent Loops")
    assert code == 0, out
    exp_id = out.split()[4]
    assert out == (f"Successfully created experience record {exp_id} at "
                   f"{root / 'agent-loops' / exp_id}.md\n")
    exp = Store(root).read_experience(exp_id)
    assert exp.keywords == ["errors", "reading"] and exp.checklist == ["one", "two"]
    assert Store(root).categories()[0].name == "Agent Loops"
    code, out, _ = run("validate", root)
    assert code == 0 and out == f"OK: {root} is valid (1 experiences, 1 categories)\n"


def test_create_json_and_default_checklist(store: Path) -> None:
    code, out, _ = run(*CREATE_ARGS, "--store", store, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["domain"] == "agent-loops" and Path(data["path"]).is_file()
    exp = Store(store).read_experience(data["id"])
    assert exp.checklist == ["Verify fix in target runtime environment."]


def test_create_errors(store: Path) -> None:
    args = [a if a != "agent-loops" else "../escape" for a in CREATE_ARGS]
    code, _, err = run(*args, "--store", store)
    assert code == 1
    assert err.startswith("Error: invalid domain '../escape': use a lowercase slug")
    assert not (store.parent / "escape").exists()
    code, _, err = run(*CREATE_ARGS, "--store", store, "--complexity", "huge")
    assert code == 2 and "'huge' is not one of 'low', 'medium', 'high'" in err
    code, _, err = run(*CREATE_ARGS, "--store", store, "--description", "x" * 1025)
    assert code == 1 and err == "Error: description is 1025 characters long (max 1024)\n"


def test_validate_reference_store(orf_reference: Path) -> None:
    code, out, err = run("validate", orf_reference)
    assert code == 0, out + err
    assert out == f"OK: {orf_reference} is valid (5 experiences, 2 categories)\n"


def test_validate_lists_problems_and_exits_1(store: Path) -> None:
    exp = store / "agent-loops" / "EXP-20261130-0001.md"
    text = exp.read_text(encoding="utf-8")
    exp.write_text(text.replace('complexity: "low"', 'complexity: "trivial"'), encoding="utf-8")
    (store / "agent-loops" / "EXP-20261130-0003.md").unlink()
    code, out, err = run("validate", "--store", store)
    assert code == 1
    index = store / "INDEX.md"
    assert out.splitlines() == [
        f"{index}:15: link 'agent-loops/EXP-20261130-0003.md' does not resolve to a file",
        f"{exp}:12: complexity 'trivial' must be one of low, medium, high",
    ]
    assert err == f"Error: 2 problem(s) in {store}\n"


def test_validate_repair(store: Path) -> None:
    index = store / "INDEX.md"
    lines = index.read_text(encoding="utf-8").splitlines(keepends=True)
    index.write_text("".join(line for line in lines if "EXP-20261130-0002" not in line),
                     encoding="utf-8")
    (store / "agent-loops" / ".EXP-x.md.abc.tmp").write_text("partial", encoding="utf-8")
    code, out, _ = run("validate", store)
    assert code == 1 and "not listed in INDEX.md" in out
    code, out, err = run("validate", store, "--repair")
    assert code == 0, out
    assert err == ("repair: removed 1 stale temp file(s)\n"
                   "repair: agent-loops/EXP-20261130-0002.md: added to INDEX.md\n")


def test_eight_concurrent_create_processes(tmp_path: Path) -> None:
    root = tmp_path / "experiences"
    Store(root).init()
    env = dict(os.environ, ORF_STORE=str(root))
    orf = [sys.executable, "-m", "pipeline"]
    procs = [
        subprocess.Popen([*orf, *CREATE_ARGS, "--title", f"Playbook number {n}", "--json"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(8)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, results
    ids = [json.loads(out)["id"] for out, _ in results]
    assert len(set(ids)) == 8
    assert sorted(int(i[-4:]) for i in ids) == list(range(1, 9))
    listed = [e.exp_id for e in Store(root).index_entries()]
    assert sorted(listed) == sorted(ids)
    assert validate_store(root) == []


def test_validate_reports_an_impossible_date_without_a_traceback(tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    shutil.copytree(Path(__file__).resolve().parent.parent / "experiences", store)
    exp = sorted(store.glob("*/EXP-*.md"))[0]
    text = exp.read_text().replace('created_at: "', "created_at: 2026-13-45\nx: \"", 1)
    exp.write_text(text)
    result = CliRunner().invoke(main, ["validate", str(store)])
    assert result.exit_code == 1
    assert f"{exp}:2: invalid YAML frontmatter: month must be in 1..12" in result.output
    assert "Traceback" not in result.output
