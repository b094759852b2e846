"""`orf skill install` and `orf context`: ORF's skill structure, and every command works."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml
from _agents_helpers import build_store, run_cli

from pipeline.agents.skill import CONTEXT_FILES

# The structure of ORF's reference manage-experience/SKILL.md (agentskills.io frontmatter,
# then the two phases under these exact headings), and orf's own third: learning from logs.
ORF_PHASES = ["## Phase 1: Progressive Discovery & Retrieval",
              "## Phase 2: Recording New Experiences",
              "## Phase 3: Learning from past sessions"]
ALPHA = Path(__file__).resolve().parent.parent / "fixtures" / "mine" / "alpha-session.jsonl"
PLACEHOLDERS = {
    "<task or error text>": "ModuleNotFoundError: No module named 'requests'",
    "<the error or trap>": "String to replace not found in file",
    "EXP-<YYYYMMDD>-<NNNN>": "EXP-20260502-0002",
    "<domain-id>": "agent-loops",
    "<keyword>": "edit",
    "<log file or folder>": str(ALPHA),
    "<that file>": "drafts.json",
}


def agent_drafts() -> list[dict[str, object]]:
    """What an agent following Phase 3 writes for the alpha session's digest."""
    return [{"session": str(ALPHA), "session_id": "a1f0c2d4-0000-4000-8000-000000000001",
             "drafts": [{
                 "title": "Install the module pytest cannot import before running it again",
                 "description": "When pytest stops with ModuleNotFoundError: No module named "
                                "'requests'.",
                 "domain": "python-testing", "keywords": ["pytest", "pip", "import"],
                 "scope": "general", "objective": "Make the test suite pass.",
                 "trap": "pytest -x tests/ failed four times with the same import error.",
                 "insight": "The package was not installed; rerunning cannot change that.",
                 "validated_path": "1. `pip install requests`\n2. `pytest -x tests/`",
                 "checklist": ["`pytest -x tests/` passes"],
                 "evidence": {"trap_steps": [1, 2, 3, 4], "fix_steps": [5, 6],
                              "error": "ModuleNotFoundError: No module named 'requests'"}}]}]


def commands(markdown: str) -> list[str]:
    """Every `orf ...` command of a Markdown text: inline code spans and fenced blocks."""
    found = []
    # re.split with a group: even items are prose, odd items the fenced blocks, in order.
    for number, part in enumerate(re.split(r"```\n(.*?)```", markdown, flags=re.S)):
        if number % 2:
            found.append(part.replace("\\\n", " "))
        else:
            found += re.findall(r"`(orf [^`]+)`", re.sub(r"\n +", " ", part))
    return [c.strip() for c in found if c.strip().startswith("orf ")]


def fill(command: str) -> list[str]:
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    command = re.sub(r"<[^<>]+>", "Some text", command)
    return shlex.split(command)[1:]


def test_skill_has_orf_structure_and_every_command_runs(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "experiences"
    build_store(store)
    code, out, err = run_cli("skill", "install", "--target", tmp_path / "skills",
                             "--store", str(store))
    path = tmp_path / "skills" / "manage-experience" / "SKILL.md"
    assert (code, out, err) == (0, f"Wrote {path}\n", "")
    text = path.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["name"] == "manage-experience" == path.parent.name
    assert 0 < len(meta["description"]) <= 1024
    assert meta["metadata"]["spec_format"] == "ORF-0.2"
    headings = [line for line in body.splitlines() if line.startswith("## ")]
    assert headings == ORF_PHASES
    found = commands(text)
    verbs = [c.split()[1] for c in found]
    assert verbs == ["search", "list-categories", "get-frontmatter", "read-experience",
                     "search", "create-experience", "validate", "learn", "submit"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "drafts.json").write_text(json.dumps(agent_drafts()))
    for command in found:
        assert f"--store {store}" in command or command.startswith("orf learn ")
        code, out, err = run_cli(*fill(command))
        assert code == 0, (command, out, err)
    assert sorted(p.name for p in (tmp_path / ".orf" / "learn").iterdir()) == [
        "001-a1f0c2d4-0000-4000-8000-000000000001.md"]
    # the Phase 2 playbook and the one Phase 3 handed back, verified against its log
    assert run_cli("validate", store)[1].startswith(f"OK: {store} is valid (5 experiences")


def test_skill_without_store_uses_the_default_and_refuses_foreign_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    build_store(tmp_path / "experiences")
    assert run_cli("skill", "install")[0] == 0
    text = (tmp_path / ".claude/skills/manage-experience/SKILL.md").read_text(encoding="utf-8")
    assert "--store" not in text
    (tmp_path / "drafts.json").write_text(json.dumps(agent_drafts()))
    for command in commands(text):
        assert run_cli(*fill(command))[0] == 0, command
    assert run_cli("skill", "install")[0] == 0  # our own file: replaced quietly
    foreign = tmp_path / "t" / "manage-experience" / "SKILL.md"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("---\nname: manage-experience\n---\nmine\n", encoding="utf-8")
    code, _, err = run_cli("skill", "install", "--target", tmp_path / "t")
    assert (code, err) == (1, f"Error: {foreign} exists and was not written by orf; "
                              "use --force to replace it\n")
    assert run_cli("skill", "install", "--target", tmp_path / "t", "--force")[0] == 0


@pytest.mark.parametrize("client", sorted(CONTEXT_FILES))
def test_context_block_points_to_the_store_and_its_commands_run(
        client: str, tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    made = build_store(store)
    code, out, _ = run_cli("context", "--for", client, "--store", str(store))
    assert code == 0
    assert out.startswith(f"## Experience store (ORF playbooks)\n\n`{store}` holds reviewed")
    assert len(out.splitlines()) < 20
    for exp in made.values():  # points to the store, never pastes it
        assert exp.title not in out and exp.insight not in out
    found = commands(out)
    verbs = [c.split()[1] for c in found]
    assert verbs[:4] == ["search", "read-experience", "list-categories", "get-frontmatter"]
    assert verbs[-1] == "create-experience"
    assert "mcp" in verbs
    for command in found:
        args = fill(command)
        if args[0] in ("mcp", "create-experience"):  # a server, and a write shown with --help
            args.append("--help")
        elif args[0] == "hook":
            args += ["--project", str(tmp_path), "--store", str(store)]
        assert run_cli(*args)[0] == 0, command
