"""Do signatures hold across sessions? Same trap in another session, repository, path layout,
repeat count or log format -> same signature; different traps -> different signatures.

Writes real-shaped Claude Code and ATIF logs for six traps, each in three repository layouts,
two to four repeats and both formats, parses them with the real adapters, runs the detectors,
and reports for pairs of sessions with the same trap the share whose main signature matches,
and for pairs with different traps the share that collide.

Usage:
    python bench/signatures.py
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

from pipeline.config import DetectSettings
from pipeline.detect import detect_all
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source

Call = tuple[str, dict[str, Any], str, bool]
LAYOUTS = [("/home/alice/shop", "alice"), ("/srv/ci/build/7f3a/repo", "ci"),
           ("/Users/bob/work/shop-v2", "bob")]
REPEATS = (2, 3, 4)


def _bash(cmd: str, out: str, failed: bool) -> Call:
    return ("Bash", {"command": cmd}, out, failed)


def trap_calls(trap: str, root: str, n: int) -> list[Call]:
    """The calls of one session that falls into ``trap`` ``n`` times in repo ``root``."""
    table: dict[str, list[Call]] = {
        "pytest-missing-module": [_bash(f"cd {root} && pytest -x tests/",
                                        "E   ModuleNotFoundError: No module named 'requests'",
                                        True)] * n
        + [_bash("pip install requests", "Successfully installed requests-2.32.3", False),
           _bash(f"cd {root} && pytest -x tests/", "12 passed in 0.8s", False)],
        "npm-build-rerun": [_bash("npm run build", "src/app.ts(3,7): error TS2304: Cannot "
                                  "find name 'fetchUser'.", True)] * n
        + [("Edit", {"file_path": f"{root}/src/app.ts", "old_string": "fetchUser(",
                     "new_string": "loadUser("}, "The file has been updated.", False),
           _bash("npm run build", "built in 2.1s", False)],
        "reread-config": [("Read", {"file_path": f"{root}/src/shop/config.py"},
                           "1\tDEBUG = False\n2\tPORT = 8080\n", False)] * (n + 1),
        "edit-revert": [("Edit", {"file_path": f"{root}/src/shop/cart.py",
                                  "old_string": a, "new_string": b},
                         "The file has been updated.", False)
                        for a, b in [("total = 0", "total = 0.0"), ("total = 0.0", "total = 0")]
                        * n],
        "failed-edit-retry": [("Edit", {"file_path": f"{root}/src/shop/views.py",
                                        "old_string": "def index(request):\n    return",
                                        "new_string": "def index(request):\n    log()"},
                               "<tool_use_error>String to replace not found in file."
                               "</tool_use_error>", True)] * (n + 1),
        "grep-variants": [_bash(c, "src/shop/cart.py:12: # TODO: rounding", False)
                          for c in ['grep -rn "TODO" .', "grep -rn TODO ./", "grep -rn 'TODO' .",
                                    'grep -rn "TODO" ./'][: n + 1]],
    }
    return table[trap]


def claude_log(calls: list[Call], cwd: str, sid: str) -> str:
    """A Claude Code session file."""
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.1.30", "gitBranch": "main"}
    lines: list[dict[str, Any]] = [{**base, "type": "user", "uuid": f"{sid}-u0",
                                    "timestamp": "2026-03-04T10:00:00.000Z",
                                    "message": {"role": "user", "content": "Fix it."}}]
    for k, (name, args, out, failed) in enumerate(calls):
        ts = f"2026-03-04T10:{k + 1:02d}:00.000Z"
        tid = f"toolu_{sid}_{k}"
        lines.append({**base, "type": "assistant", "uuid": f"{sid}-a{k}", "timestamp": ts,
                      "message": {"model": "claude-sonnet-4-5", "id": f"msg_{sid}_{k}",
                                  "role": "assistant", "content": [
                                      {"type": "tool_use", "id": tid, "name": name,
                                       "input": args}],
                                  "usage": {"input_tokens": 900, "output_tokens": 30}}})
        content = f"Exit code 1\n{out}" if failed and name == "Bash" else out
        lines.append({**base, "type": "user", "uuid": f"{sid}-u{k + 1}", "timestamp": ts,
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": tid, "content": content,
                           "is_error": failed}]}})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


_ATIF_TOOLS = {"Bash": "bash", "Read": "read_file", "Edit": "str_replace"}


def atif_log(calls: list[Call], cwd: str, sid: str) -> str:
    """The same calls as an ATIF-v1.5 trajectory (another harness's tool names)."""
    steps: list[dict[str, Any]] = [{"step_id": 1, "timestamp": "2026-03-04T10:00:00Z",
                                    "source": "user", "message": "Fix it."}]
    for k, (name, args, out, failed) in enumerate(calls):
        arguments = dict(args)
        if name == "Read":
            arguments = {"path": args["file_path"]}
        elif name == "Edit":
            arguments = {"path": args["file_path"], "old_str": args["old_string"],
                         "new_str": args["new_string"]}
        cid = f"call_{k}"
        steps.append({"step_id": k + 2, "timestamp": f"2026-03-04T10:{k + 1:02d}:00Z",
                      "source": "agent", "model_name": "anthropic/claude-sonnet-4-5",
                      "message": f"step {k}",
                      "tool_calls": [{"tool_call_id": cid, "function_name": _ATIF_TOOLS[name],
                                      "arguments": arguments}],
                      "observation": {"results": [{"source_call_id": cid, "content": out,
                                                   "extra": {"exit_code": int(failed)}}]},
                      "metrics": {"prompt_tokens": 900, "completion_tokens": 30}})
    return json.dumps({"schema_version": "ATIF-v1.5", "session_id": sid,
                       "agent": {"name": "terminus-2", "version": "2.0.0",
                                 "model_name": "anthropic/claude-sonnet-4-5", "cwd": cwd},
                       "steps": steps})


def main() -> None:
    traps = ["pytest-missing-module", "npm-build-rerun", "reread-config", "edit-revert",
             "failed-edit-retry", "grep-variants"]
    sessions: list[tuple[str, str, str | None]] = []  # (trap, format, main signature)
    settings = DetectSettings()
    with tempfile.TemporaryDirectory() as tmp:
        for trap, (root, who), n, fmt in itertools.product(traps, LAYOUTS, REPEATS,
                                                           ("claude-code", "atif")):
            sid = f"{trap}-{who}-{n}-{fmt}"
            path = Path(tmp) / (f"{sid}.jsonl" if fmt == "claude-code" else f"{sid}.json")
            calls = trap_calls(trap, root, n)
            path.write_text(claude_log(calls, root, sid) if fmt == "claude-code"
                            else atif_log(calls, root, sid))
            found = [t for src in discover([path], issues=[])
                     for t in parse_source(src, ParseContext())]
            findings = [f for t in found for f in detect_all(t, settings)]
            top = max(findings, key=lambda f: f.wasted_steps).signature if findings else None
            sessions.append((trap, fmt, top))
    missed = [s for s in sessions if s[2] is None]
    print(f"sessions: {len(sessions)} ({len(traps)} traps x {len(LAYOUTS)} layouts x "
          f"{len(REPEATS)} repeat counts x 2 formats); no finding in {len(missed)}")
    for label, keep in (("same format", lambda a, b: a[1] == b[1]),
                        ("across formats", lambda a, b: a[1] != b[1]),
                        ("all", lambda a, b: True)):
        same = diff = same_ok = diff_ok = 0
        for a, b in itertools.combinations(sessions, 2):
            if not keep(a, b) or a[2] is None or b[2] is None:
                continue
            if a[0] == b[0]:
                same += 1
                same_ok += a[2] == b[2]
            else:
                diff += 1
                diff_ok += a[2] != b[2]
        print(f"{label:>15}: same trap -> same signature {same_ok}/{same} "
              f"({100 * same_ok / max(1, same):.1f}%); different traps -> different "
              f"signature {diff_ok}/{diff} ({100 * diff_ok / max(1, diff):.1f}%)")
    for trap in traps:
        sigs = {s[2] for s in sessions if s[0] == trap}
        by_fmt = {f: len({s[2] for s in sessions if s[0] == trap and s[1] == f})
                  for f in ("claude-code", "atif")}
        print(f"  {trap:<22} distinct signatures: {len(sigs)} (claude-code {by_fmt['claude-code']},"
              f" atif {by_fmt['atif']})")


if __name__ == "__main__":
    main()
