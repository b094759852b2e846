"""Lessons end to end on real-shaped logs: one test per error class and per delta kind.

Each case is a Claude Code (or SWE-agent) session written the way the harness writes it,
mined offline like ``orf mine --backend heuristic``; the test pins the exact title, the error
line the trap quotes and the commands of the validated path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _lesson_helpers import Call, bash, claude_log, mined_drafts, say, swe_agent_log, tool

from pipeline.stages.quality import quality_problems

F = f"{'/Users/dana/src/shop'}"  # the logged cwd: absolute paths under it become relative


def _fails(call: Call, times: int = 3) -> list[Call]:
    return [call] * times


CASES: dict[str, dict[str, Any]] = {
    "missing_program+install": {
        "calls": [
            bash("tsc --noEmit -p .", "(eval):1: command not found: tsc", True, 127),
            bash(
                "npx tsc --noEmit -p .",
                "This is not the tsc command you are looking for\n"
                "To get access to the TypeScript compiler, tsc, from the command line either:"
                "\n- Use npm install typescript to first add TypeScript to your project",
                True,
            ),
            *_fails(
                bash(
                    "./node_modules/.bin/tsc --noEmit -p .",
                    "(eval):1: no such file or directory: ./node_modules/.bin/tsc",
                    True,
                    127,
                ),
                2,
            ),
            bash("ls node_modules/.bin/", "ls: node_modules/.bin/: No such file or directory"),
            bash("bun install", "bun install v1.3.9\n+ typescript@5.9.3\n988 packages installed"),
            bash("./node_modules/.bin/tsc --noEmit -p .", ""),
        ],
        "title": "Install the project's dependencies when `tsc` is not found, instead of trying "
        "other launchers",
        "error": "(eval):1: no such file or directory: ./node_modules/.bin/tsc",
        "path": [
            "1. Look before changing anything: `ls node_modules/.bin/` (here it printed "
            "`ls: node_modules/.bin/: No such file or directory`).",
            "2. Install what is missing: `bun install`.",
            "3. `./node_modules/.bin/tsc --noEmit -p .` succeeds.",
        ],
    },
    "missing_module+chained_install": {
        "calls": [
            *_fails(
                bash(
                    "pytest -x tests/",
                    "ImportError while importing test module "
                    "'tests/test_api.py'.\nE   ModuleNotFoundError: No module named "
                    "'requests'\n=========== 1 error in 0.21s ===========",
                    True,
                )
            ),
            bash(
                "pip install requests && pytest -x tests/",
                "Successfully installed requests-2.32.3\n3 passed in 0.41s",
            ),
        ],
        "title": ("Install `requests` into the environment the command runs in, then rerun it"),
        "error": "E   ModuleNotFoundError: No module named 'requests'",
        "path": [
            "1. Install what is missing: `pip install requests`.",
            "2. `pip install requests && pytest -x tests/` succeeds.",
        ],
    },
    "wrong_path+cwd": {
        "calls": [
            *_fails(
                bash(
                    "npm run build",
                    "npm error code ENOENT\nnpm error syscall open\n"
                    "npm error path /Users/dana/src/shop/package.json\nnpm error enoent "
                    "Could not read package.json: Error: ENOENT: no such file or "
                    "directory, open '/Users/dana/src/shop/package.json'",
                    True,
                    254,
                )
            ),
            bash("ls", "README.md\nweb\napi"),
            bash("cd web && npm run build", "> web@1.0.0 build\n> vite build\n✓ built in 1.2s"),
        ],
        "title": ("Run the command from the directory that holds the project it reads"),
        "error": (
            "npm error enoent Could not read package.json: Error: ENOENT: no such file or "
            "directory, open 'package.json'"
        ),
        "path": [
            "1. Change to the right directory: `cd web`.",
            "2. `cd web && npm run build` succeeds.",
        ],
    },
    "version_mismatch+flag": {
        "calls": [
            *_fails(
                bash(
                    "pytest --timeout 30 tests/",
                    "ERROR: usage: pytest [options] "
                    "[file_or_dir] [file_or_dir] [...]\npytest: error: unrecognized "
                    "arguments: --timeout\n  inifile: pyproject.toml",
                    True,
                    4,
                )
            ),
            bash("pytest --help | grep -i timeout", "  --durations=N  show N slowest"),
            bash("pytest tests/", "12 passed in 1.10s"),
        ],
        "title": ("Drop the option the installed `pytest` does not know"),
        "error": "pytest: error: unrecognized arguments: --timeout",
        "path": [
            "1. Change the command: `pytest --timeout 30 tests/` -> `pytest tests/`; it succeeds."
        ],
    },
    "lock_held+rm": {
        "calls": [
            *_fails(
                bash(
                    "git commit -m 'Add checkout flow'",
                    "fatal: Unable to create "
                    "'/Users/dana/src/shop/.git/index.lock': File exists.\n\nAnother git "
                    "process seems to be running in this repository, e.g.\nan editor "
                    "opened by 'git commit'. Please make sure all processes\nare "
                    "terminated then try again.",
                    True,
                    128,
                )
            ),
            bash("pgrep -l git", ""),
            bash("rm -f .git/index.lock", ""),
            bash(
                "git commit -m 'Add checkout flow'",
                "[main 4f2a9c1] Add checkout flow\n 3 files changed, 120 insertions(+)",
            ),
        ],
        "title": ("Remove a stale `.git/index.lock` only after checking no git process runs"),
        "error": "fatal: Unable to create '.git/index.lock': File exists.",
        "path": [
            "1. Stop or clear what holds the resource: `rm -f .git/index.lock`.",
            "2. `git commit -m 'Add checkout flow'` succeeds.",
        ],
    },
    "edit_not_found+edit_target": {
        "calls": [
            tool(
                "Read",
                {"file_path": f"{F}/app/cart.py"},
                "     1→class Cart:\n     2→    def total(self):\n     3→        return "
                "sum(i.price for i in self.items)\n",
            ),
            *_fails(
                tool(
                    "Edit",
                    {
                        "file_path": f"{F}/app/cart.py",
                        "old_string": "    return sum(i.price for i in self.items)",
                        "new_string": "    return sum(i.price * i.qty for i in self.items)",
                    },
                    "String to replace not found in file.\nString:     return "
                    "sum(i.price for i in self.items)",
                    True,
                )
            ),
            tool(
                "Read",
                {"file_path": f"{F}/app/cart.py", "offset": 1, "limit": 5},
                "     1→class Cart:\n     2→    def total(self):\n     3→        return "
                "sum(i.price for i in self.items)\n",
            ),
            tool(
                "Edit",
                {
                    "file_path": f"{F}/app/cart.py",
                    "old_string": "        return sum(i.price for i in self.items)",
                    "new_string": "        return sum(i.price * i.qty for i in self.items)",
                },
                f"The file {F}/app/cart.py has been updated successfully.",
            ),
            bash("pytest tests/test_cart.py", "4 passed in 0.30s"),
        ],
        "title": (
            "Copy the old text's indentation from the file, tab for tab, before retrying the edit"
        ),
        "error": "String to replace not found in file.",
        "path": [
            "1. Read the file: `read app/cart.py`.",
            "2. `edit app/cart.py` succeeds.",
            "3. `pytest tests/test_cart.py` passes.",
        ],
    },
    "not_read_first+reread": {
        "calls": [
            *_fails(
                tool(
                    "Write",
                    {"file_path": f"{F}/app/settings.py", "content": "DEBUG = False\n"},
                    "File has not been read yet. Read it first before writing to it.",
                    True,
                ),
                2,
            ),
            tool(
                "Read",
                {"file_path": f"{F}/app/settings.py"},
                "     1→DEBUG = True\n     2→SECRET_KEY_ENV = 'SHOP_KEY'\n",
            ),
            tool(
                "Write",
                {
                    "file_path": f"{F}/app/settings.py",
                    "content": "DEBUG = False\nSECRET_KEY_ENV = 'SHOP_KEY'\n",
                },
                f"The file {F}/app/settings.py has been updated.",
            ),
        ],
        "title": ("Read the existing file, then write"),
        "error": "File has not been read yet. Read it first before writing to it.",
        "path": [
            "1. Read the file: `read app/settings.py`.",
            "2. `write app/settings.py` succeeds.",
        ],
    },
    "user_refused+ask": {
        "calls": [
            *_fails(
                tool(
                    "Edit",
                    {
                        "file_path": f"{F}/migrations/0007_drop_sku.py",
                        "old_string": "operations = [",
                        "new_string": "operations = []  # dropped",
                    },
                    "The user doesn't want to proceed with this tool use. The tool use "
                    "was rejected (eg. if it was a file edit, the new_string was NOT "
                    "written to the file). To tell you how to proceed, the user said:\n"
                    "keep the migration, add a nullable sku column instead",
                    True,
                ),
                2,
            ),
            say("Understood: I will keep the migration and add a nullable sku column instead."),
            tool(
                "Read",
                {"file_path": f"{F}/migrations/0007_drop_sku.py"},
                "     1→operations = [\n     2→    migrations.RemoveField('item', 'sku'),\n",
            ),
            tool(
                "Edit",
                {
                    "file_path": f"{F}/migrations/0007_drop_sku.py",
                    "old_string": "    migrations.RemoveField('item', 'sku'),",
                    "new_string": "    migrations.AlterField('item', 'sku', null=True),",
                },
                f"The file {F}/migrations/0007_drop_sku.py has been updated successfully.",
            ),
        ],
        "title": ("Stop and answer the user before editing the file again"),
        "error": (
            'The user rejected the call: "keep the migration, add a nullable sku column instead"'
        ),
        "path": [
            "1. Stop after the refusal and answer what the user said before acting again.",
            "2. Read the file: `read migrations/0007_drop_sku.py`.",
            "3. `edit migrations/0007_drop_sku.py` (`migrations.RemoveField('item', 'sku'),` "
            "-> `migrations.AlterField('item', 'sku', null=True),`) succeeds.",
        ],
    },
    "permission+chmod": {
        "calls": [
            *_fails(
                bash(
                    "./scripts/deploy.sh staging",
                    "(eval):1: permission denied: ./scripts/deploy.sh",
                    True,
                    126,
                )
            ),
            bash("chmod +x scripts/deploy.sh", ""),
            bash("./scripts/deploy.sh staging", "deployed build 812 to staging"),
        ],
        "title": ("Make the script executable with `chmod +x` when running it is denied"),
        "error": "(eval):1: permission denied: ./scripts/deploy.sh",
        "path": [
            "1. Fix the permission: `chmod +x scripts/deploy.sh`.",
            "2. `./scripts/deploy.sh staging` succeeds.",
        ],
    },
    "auth+login": {
        "calls": [
            *_fails(
                bash(
                    "gh pr create --fill",
                    "HTTP 401: Bad credentials "
                    "(https://api.github.com/graphql)\nTry authenticating with:  gh auth "
                    "login",
                    True,
                )
            ),
            bash("export GH_TOKEN=$(cat ~/.config/shop/token)", ""),
            bash("gh pr create --fill", "https://github.com/dana/shop/pull/42"),
        ],
        "title": ("Provide the credentials the command reads before retrying it"),
        "error": "HTTP 401: Bad credentials (https://api.github.com/graphql)",
        "path": [
            "1. Fix the configuration: `export GH_TOKEN=$(cat ~/.config/shop/token)`.",
            "2. `gh pr create --fill` succeeds.",
        ],
    },
    "network+proxy": {
        "calls": [
            *_fails(
                bash(
                    "pip download wheel -d vendor/",
                    "WARNING: Retrying (Retry(total=4))"
                    " after connection broken by 'NewConnectionError(': Failed to "
                    "establish a new connection: [Errno -3] Temporary failure in name "
                    "resolution')'",
                    True,
                )
            ),
            bash("export HTTPS_PROXY=http://proxy.internal:3128", ""),
            bash(
                "pip download wheel -d vendor/",
                "Saved ./vendor/wheel-0.45.1-py3-none-any.whl\nSuccessfully downloaded wheel",
            ),
        ],
        "title": ("Set the proxy this network requires before retrying the download"),
        "error": (
            "WARNING: Retrying (Retry(total=4)) after connection broken by "
            "'NewConnectionError(': Failed to establish a new connection: [Errno -3] Temporary "
            "failure in name resolution')'"
        ),
        "path": [
            "1. Fix the configuration: `export HTTPS_PROXY=http://proxy.internal:3128`.",
            "2. `pip download wheel -d vendor/` succeeds.",
        ],
    },
    "timeout+flag": {
        "calls": [
            *_fails(
                bash("npm test -- --watchAll=false", "Command timed out after 2m 0.0s", True, 124)
            ),
            bash(
                "npm test -- --watchAll=false --testPathIgnorePatterns=e2e",
                "Tests: 48 passed, 48 total",
            ),
        ],
        "title": (
            "Leave out the part that hangs (`--testPathIgnorePatterns=e2e`) instead of raising "
            "the timeout"
        ),
        "error": "Command timed out after 2m 0.0s",
        "path": [
            (
                "1. Change the command: `npm test -- --watchAll=false` -> `npm test -- "
                "--watchAll=false --testPathIgnorePatterns=e2e`; it succeeds."
            )
        ],
    },
    "port_in_use+kill": {
        "calls": [
            *_fails(
                bash(
                    "npm run dev",
                    "Error: listen EADDRINUSE: address already in use "
                    ":::3000\n    at Server.setupListenHandle [as _listen2] "
                    "(node:net:1817:16)",
                    True,
                )
            ),
            bash("lsof -ti :3000 | xargs kill", ""),
            bash("npm run dev", "ready - started server on 0.0.0.0:3000"),
        ],
        "title": ("Stop the process that still holds the port before restarting the server"),
        "error": "Error: listen EADDRINUSE: address already in use :::3000",
        "path": [
            "1. Stop or clear what holds the resource: `lsof -ti :3000 | xargs kill`.",
            "2. `npm run dev` succeeds.",
        ],
    },
    "assertion+edit": {
        "calls": [
            *_fails(
                bash(
                    "pytest tests/test_price.py",
                    "    def test_discount():\n>       "
                    "assert price(100, 0.1) == 90\nE       assert 110.0 == 90\n"
                    "FAILED tests/test_price.py::test_discount - assert 110.0 == 90\n"
                    "1 failed in 0.05s",
                    True,
                )
            ),
            tool(
                "Edit",
                {
                    "file_path": f"{F}/app/price.py",
                    "old_string": "p * (1 + d)",
                    "new_string": "p * (1 - d)",
                },
                f"The file {F}/app/price.py has been updated successfully.",
            ),
            bash("pytest tests/test_price.py", "1 passed in 0.04s"),
        ],
        "title": ("Change the code the failing assertion names, then rerun the same test"),
        "error": "E       assert 110.0 == 90",
        "path": [
            "1. Change the code: `edit app/price.py`: `p * (1 + d)` -> `p * (1 - d)`.",
            "2. `pytest tests/test_price.py` succeeds.",
        ],
    },
    "invalid_args": {
        "calls": [
            *_fails(
                tool(
                    "Edit",
                    {"file_path": f"{F}/app/cart.py", "old_string": "x = 1"},
                    "InputValidationError: Edit failed due to the following issue:\nThe "
                    "required parameter `new_string` is missing",
                    True,
                ),
                2,
            ),
            tool(
                "Edit",
                {"file_path": f"{F}/app/cart.py", "old_string": "x = 1", "new_string": "x = 2"},
                f"The file {F}/app/cart.py has been updated successfully.",
            ),
        ],
        "title": ("Send the `new_string` parameter the harness names as required"),
        "error": "InputValidationError: Edit failed due to the following issue:",
        "path": ["1. Resend `edit app/cart.py` with `new_string` added; it succeeds."],
    },
    "syntax_error+range (swe-agent)": {
        "swe": [
            (
                "open pkg/core.py 40",
                "[File: /pkg__pkg/pkg/core.py (80 lines total)]\n40:    "
                "raise ValueError(\n41:        'bad value'\n42:    )",
            ),
            *[
                (
                    "edit 40:41\n    raise TypeError(\n        'bad type'\n    )\nend_of_edit",
                    "Your proposed edit has introduced new syntax error(s). Please understand the "
                    "fixes and retry your edit commmand.\n\nERRORS:\n- E999 SyntaxError: unmatched "
                    "')'\n\nThis is how your edit would have looked if applied\n-------------\n"
                    "[File: /pkg__pkg/pkg/core.py (81 lines total)]\n40:    raise TypeError(\n"
                    "41:        'bad type'\n42:    )\n43:    )\n-------------\n\nYour changes have "
                    "NOT been applied. Please fix your edit command and try again.\nDO NOT re-run "
                    "the same failed edit command. Running it again will lead to the same error.",
                )
            ]
            * 2,
            (
                "edit 40:42\n    raise TypeError(\n        'bad type'\n    )\nend_of_edit",
                "[File: /pkg__pkg/pkg/core.py (80 lines total)]\n40:    raise TypeError(\n41:   "
                "     'bad type'\n42:    )\nFile updated. Please review the changes.",
            ),
            ("python -m pytest tests/test_core.py", "5 passed in 0.2s"),
        ],
        "title": (
            "Widen the edit range to the last line your text replaces, or the old closing line "
            "stays below it"
        ),
        "error": "E999 SyntaxError: unmatched ')'",
        "path": [
            "1. Change the command: `edit 40:41` -> `edit 40:42`; it succeeds.",
            "2. `python -m pytest tests/test_core.py` passes.",
        ],
    },
}


def _case(tmp_path: Path, name: str) -> tuple[list[Any], list[str]]:
    spec = CASES[name]
    if "swe" in spec:
        log = swe_agent_log(tmp_path / "case.traj", spec["swe"])
        return mined_drafts(log, "swe-agent")
    log = claude_log(tmp_path / "case.jsonl", "c0ffee00-0000-4000-8000-000000000001", spec["calls"])
    return mined_drafts(log)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lesson_case(tmp_path: Path, name: str) -> None:
    spec = CASES[name]
    drafts, notes = _case(tmp_path, name)
    assert len(drafts) == 1, notes
    made = drafts[0]
    assert made.title == spec["title"]
    fence = made.trap.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert fence.splitlines()[0] == spec["error"]
    assert made.validated_path.splitlines() == spec["path"]
    assert quality_problems(made) == []
    assert "/Users/" not in made.model_dump_json(exclude={"provenance"})
