"""Predictable edges: one clear line, the right exit code, nothing hangs (issue 14).

Every case asserts the exact line a user reads and the exit code, with ``ORF_RAISE_ERRORS``
unset (the autouse fixture below), and that no traceback reaches the output.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _mine_helpers import claude_session, interrupt_mine
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.formats import ADAPTER_MODULES
from pipeline.orf import Store, validate_store

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "fixtures" / "mine"
SESSIONS = ["alpha-session.jsonl", "beta-session.jsonl"]
POSIX = pytest.mark.skipif(os.name != "posix", reason="FIFOs, devices and signals are POSIX")


@pytest.fixture(autouse=True)
def _no_debug_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORF_RAISE_ERRORS", raising=False)
    for name in [k for k in os.environ if k.startswith("ORF_")]:
        monkeypatch.delenv(name)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("ORF_", "GEMINI", "GOOGLE"))}


def _logs(tmp_path: Path, names: list[str] = SESSIONS) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(FIX / name, logs / name)
    return logs


def _store(path: Path) -> Path:
    Store(path).init()
    return path


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    out, err = result.stdout, result.stderr
    assert "Traceback" not in out + err
    return result.exit_code, out, err


def _orf(*args: str | Path, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], env=_env(),
                          capture_output=True, text=True, timeout=timeout, **kw)  # type: ignore
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


# ---- a store that does not exist is refused; only `orf init` creates one ----

def _missing_store_commands(logs: Path) -> dict[str, list[str]]:
    return {
        "mine": ["mine", str(logs), "--backend", "heuristic"],
        "review": ["review"],
        "pr": ["pr"],
        "list-categories": ["list-categories"],
        "get-frontmatter": ["get-frontmatter", "--category", "agent-loops"],
        "read-experience": ["read-experience", "--id", "EXP-20261130-0001"],
        "create-experience": ["create-experience", "--domain", "agent-loops", "--title", "T",
                              "--description", "D", "--keywords", "k", "--objective", "o",
                              "--trap", "t", "--insight", "i", "--validated-path", "v"],
        "validate": ["validate"],
        "analyze": ["analyze", str(logs), "--draft", "--backend", "heuristic"],
    }


@pytest.mark.parametrize("command", list(_missing_store_commands(Path("x"))))
def test_missing_store_is_refused_with_the_init_hint(tmp_path: Path, command: str) -> None:
    logs = _logs(tmp_path)
    typo = tmp_path / "typo" / "experiencs"
    code, out, err = run(*_missing_store_commands(logs)[command], "--store", typo)
    assert code == 1 and out == ""
    assert err == (f"Error: no ORF store at {typo} (INDEX.md not found); "
                   f"create one with `orf init --store {typo}`\n")
    assert not (tmp_path / "typo").exists()  # nothing created, not even the parent


def test_only_init_creates_a_store_and_init_takes_a_path(tmp_path: Path) -> None:
    new = tmp_path / "a" / "experiences"
    assert run("init", new) == (0, f"Created empty store at {new}\n", "")
    assert validate_store(new) == []
    code, out, _ = run("mine", _logs(tmp_path), "--store", new, "--backend", "heuristic",
                       "--ledger", tmp_path / "l.db", "--quiet")
    assert code == 0, out
    assert len(Store(new).experiences()) == 1


def test_readme_main_job_command_keeps_working(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"cp -r experiences /tmp/orf-demo/ && \.venv/bin/orf (mine [^\n`]+)", readme)
    assert m, "the README's main-job command changed: update this test"
    demo = tmp_path / "orf-demo"
    demo.mkdir()
    shutil.copytree(REPO / "experiences", demo / "experiences")
    args = m.group(1).replace("/tmp/orf-demo", str(demo)).split()
    proc = _orf(*args, "--jobs", "1", cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("orf mine - ")
    assert validate_store(demo / "experiences") == []


# ---- OS errors on the store, ledger, lock or output: one line, exit 1 ----

def _unshare_ro(folder: Path, *args: str | Path) -> subprocess.CompletedProcess:
    """Run ``orf ARGS`` with ``folder`` bind-mounted read-only (a real EROFS)."""
    script = (f'mount --bind "{folder}" "{folder}" && '
              f'mount -o remount,bind,ro "{folder}" || exit 99; '
              f'exec "{sys.executable}" -m pipeline ' + " ".join(f'"{a}"' for a in args))
    try:
        proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=_env(),
                              capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        pytest.skip("unshare is not installed")
    if proc.returncode == 99 or "unshare:" in proc.stderr:
        pytest.skip("cannot make a read-only mount here (needs user namespaces)")
    return proc


READ_ONLY_HINT = "read-only file system; use a writable --store/--ledger, or remount it read-write"


@POSIX
def test_read_only_store_is_one_line_on_every_command(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    ro = tmp_path / "ro"
    store = _store(ro / "experiences")
    before = sorted(p.relative_to(ro) for p in ro.rglob("*"))
    create = _missing_store_commands(logs)["create-experience"]
    cases = [
        (["mine", logs, "--store", store, "--backend", "heuristic"], store),
        ([*create, "--store", store], ro / ".orf" / "experiences.lock"),
        (["init", ro / "other"], ro / "other"),
    ]
    for args, where in cases:
        proc = _unshare_ro(ro, *args)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.splitlines()[-1] == f"Error: {where}: {READ_ONLY_HINT}"
    assert sorted(p.relative_to(ro) for p in ro.rglob("*")) == before  # nothing written


def test_full_disk_while_writing_a_playbook_leaves_nothing_half_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.fsutil as fsutil

    store = _store(tmp_path / "experiences")
    index = (store / "INDEX.md").read_text()

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")  # no file name, as write() does

    monkeypatch.setattr(fsutil.os, "fsync", full)
    create = _missing_store_commands(tmp_path)["create-experience"]
    code, out, err = run(*create, "--store", store)
    assert code == 1 and out == ""
    assert re.fullmatch(rf"Error: {re.escape(str(store))}/agent-loops/EXP-\d{{8}}-0001\.md: "
                        r"no space left on device; free some space and run again\n", err), err
    assert (store / "INDEX.md").read_text() == index
    assert sorted(p.name for p in store.rglob("*")) == ["INDEX.md", "agent-loops"]


def test_permission_denied_on_the_ledger_is_one_line(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "experiences")
    ledger_dir = tmp_path / "state"
    real_mkdir = Path.mkdir

    def denied(self: Path, *a: object, **k: object) -> None:
        if self == ledger_dir:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        real_mkdir(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", denied)
    code, out, err = run("mine", _logs(tmp_path), "--store", store, "--ledger",
                         ledger_dir / "ledger.db", "--backend", "heuristic", "--quiet")
    assert code == 1 and out == ""
    assert err == (f"Error: cannot open the ledger: {ledger_dir}: permission denied; "
                   "fix its permissions or use another path\n")


def test_ledger_failing_mid_run_is_one_line(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from pipeline.ledger import Ledger

    def full(*_a: object, **_k: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Ledger, "record_source", full)
    store = _store(tmp_path / "experiences")
    code, out, err = run("mine", _logs(tmp_path), "--store", store, "--backend", "heuristic",
                         "--ledger", tmp_path / "l.db", "--quiet")
    assert code == 1 and out == ""
    assert err == ("Error: the ledger database failed: database or disk is full (check that "
                   "the ledger and its folder are writable and the disk is not full, or point "
                   "--ledger elsewhere)\n")


def test_unwritable_output_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run("redact", FIX / SESSIONS[0], "-o", blocker / "out.jsonl")
    assert code == 1
    assert err.splitlines()[-1] == (f"Error: {blocker}: file exists; "
                                    "a file is in the way of a folder: fix the path")
    assert blocker.read_text() == "x"


# ---- discovery: stat before open; specials skipped with one line each ----

@POSIX
def test_fifo_socket_device_and_symlink_loops_are_skipped_never_read(tmp_path: Path) -> None:
    logs = _logs(tmp_path, SESSIONS[:1])
    os.mkfifo(logs / "pipe.jsonl")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(logs / "agent.sock"))
    (logs / "zero.jsonl").symlink_to("/dev/zero")
    (logs / "loop-a.jsonl").symlink_to(logs / "loop-b.jsonl")
    (logs / "loop-b.jsonl").symlink_to(logs / "loop-a.jsonl")
    (logs / "up").symlink_to(logs)  # a folder loop: never followed
    try:
        proc = _orf("analyze", logs, "--json", timeout=60)
    finally:
        sock.close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"skipped: {logs / 'agent.sock'}: socket, not read",
        f"skipped: {logs / 'loop-a.jsonl'}: symlink loop, not followed",
        f"skipped: {logs / 'loop-b.jsonl'}: symlink loop, not followed",
        f"skipped: {logs / 'pipe.jsonl'}: named pipe (FIFO), not read",
        f"skipped: {logs / 'zero.jsonl'}: character device, not read",
    ]
    assert len(proc.stdout.splitlines()) == 1


@POSIX
def test_a_fifo_named_on_the_command_line_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    proc = _orf("analyze", fifo, timeout=30)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"skipped: {fifo}: named pipe (FIFO), not read",
        f"Error: no agent session logs found in {fifo}",
    ]


# ---- sniffing needs positive evidence; non-logs are skipped, not failed ----

def _folder_with_non_logs(tmp_path: Path) -> Path:
    logs = _logs(tmp_path)
    (logs / "README.md").write_text('# Logs\nKeys: "sessionId", "uuid", "type":"user"\n')
    (logs / "alpha-session.report.json").write_text('{"resolved": false, "tests": []}')
    (logs / "runs.csv").write_text("session,steps\nalpha,12\n")
    return logs


def test_non_log_files_are_one_summary_line_and_listed_with_v(tmp_path: Path) -> None:
    logs = _folder_with_non_logs(tmp_path)
    code, out, err = run("analyze", logs, "--json")
    assert code == 0
    assert err == "skipped 3 file(s): not a session log (-v lists them)\n"
    assert len(out.splitlines()) == 2
    code, _, err = run("analyze", logs, "--json", "-v")
    assert code == 0
    assert err.splitlines() == [f"skipped: {logs / n}: not a session log" for n in
                                ("README.md", "alpha-session.report.json", "runs.csv")]


def test_mine_counts_non_logs_as_skipped_and_a_rerun_agrees(tmp_path: Path) -> None:
    logs = _folder_with_non_logs(tmp_path)
    store = _store(tmp_path / "experiences")
    args = ["mine", logs, "--store", store, "--backend", "heuristic", "--quiet"]
    for _ in range(2):  # first run and rerun: the same exit code
        code, out, _ = run(*args, "--json")
        doc = json.loads(out)
        assert code == 0 and doc["exit_code"] == 0
        assert doc["sessions"]["failed"] == 0 and doc["issues"] == []
        assert len(doc["skipped"]) == 3
    code, out, _ = run(*args)
    assert "  skipped 3 file(s): not a session log (-v lists them)" in out.splitlines()


def test_forced_wrong_format_is_one_line_per_file_on_mine(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    store = _store(tmp_path / "experiences")
    code, out, _ = run("mine", logs, "--store", store, "--format", "codex", "--backend",
                       "heuristic", "--quiet", "--json")
    doc = json.loads(out)
    assert code == 1  # every input failed: nothing done
    assert len(doc["issues"]) == len(SESSIONS)
    # The codex reader ignores record types it does not know: no line-by-line warnings.
    assert doc["issues"] == [f"{logs / name}: not a codex log: nothing in it reads as codex; "
                             "drop --format to detect the format" for name in SESSIONS]


# ---- exit codes: the same situation gives the same code on every command ----

@pytest.mark.parametrize("command", ["analyze", "mine"])
def test_unknown_format_is_a_usage_error_everywhere(tmp_path: Path, command: str) -> None:
    store = _store(tmp_path / "experiences")
    extra = ["--store", str(store)] if command == "mine" else []
    code, _, err = run(command, _logs(tmp_path), "--format", "nosuch", *extra)
    assert code == 2
    assert err.splitlines()[-1] == (f"Error: Invalid value for --format: unknown format "
                                    f"'nosuch'; choose from: {', '.join(ADAPTER_MODULES)}")


@pytest.mark.parametrize("command", ["analyze", "mine"])
def test_empty_folder_is_nothing_to_do_everywhere(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    store = _store(tmp_path / "experiences")
    extra = ["--store", str(store), "--quiet"] if command == "mine" else []
    code, _, err = run(command, empty, *extra)
    assert code == 1
    assert err.splitlines()[-1] == f"Error: no agent session logs found in {empty}"


def test_exit_codes_are_documented_once_and_agree(tmp_path: Path) -> None:
    from pipeline.cli.app import EXIT_CODES_HELP

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d+) \| ([^|]+) \|$", readme, re.MULTILINE))
    assert set(table) == {"0", "1", "2", "3", "130"}
    for code in table:
        assert re.search(rf"^\s+{code}\s+\S", EXIT_CODES_HELP, re.MULTILINE), code


# ---- Ctrl-C cancels the worker pool at once ----

@POSIX
@pytest.mark.slow
def test_sigint_during_mine_jobs_2_exits_130_promptly_and_resumes(
        tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    count = 300
    for i in range(count):
        sid = f"c0ffee00-0000-4000-8000-{i:012d}"
        (logs / f"s{i:03d}.jsonl").write_text(claude_session(sid, 2 + i % 3,
                                                             cwd=f"/home/dev/p{i % 7}"))
    store = _store(tmp_path / "experiences")
    # The pool is busy: interrupt it mid-scan.
    code, elapsed, rest = interrupt_mine(logs, store, _env(),
                                         lambda line: line.startswith("orf: scanned"))
    assert code == 130, rest
    # A hang guard, not a speed figure: without the handler the pool waits for its workers
    # (many seconds); a loaded shared machine can take just over a second to exit cleanly.
    assert elapsed < 5.0, f"exit took {elapsed:.2f}s after SIGINT"
    assert rest.splitlines()[-1] == ("Interrupted: nothing half-written; the next "
                                     "`orf mine` resumes the work.")
    assert "Traceback" not in rest
    assert validate_store(store) == [] and not list(store.rglob(".*.tmp"))
    cmd = [sys.executable, "-m", "pipeline", "mine", str(logs), "--store", str(store),
           "--backend", "heuristic", "--jobs", "2"]
    again = subprocess.run([*cmd, "--json", "--quiet"], env=_env(), capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["sessions"]["seen"] == count and doc["sessions"]["failed"] == 0
    assert doc["sessions"]["new"] + doc["sessions"]["unchanged"] == count


# ---- the ledger's processed-session state is per store ----

def test_two_stores_beside_each_other_are_independent(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    a, b = _store(tmp_path / "a"), _store(tmp_path / "b")  # one default ledger: .orf/
    docs = []
    for store in (a, b):
        code, out, _ = run("mine", logs, "--store", store, "--backend", "heuristic", "--quiet",
                           "--json")
        assert code == 0
        docs.append(json.loads(out))
    assert (tmp_path / ".orf" / "ledger.db").is_file()
    assert docs[0]["findings"] == docs[1]["findings"] > 0
    assert docs[1]["sessions"]["new"] == len(SESSIONS)
    titles = [sorted(e.title for e in Store(s).experiences()) for s in (a, b)]
    assert titles[0] == titles[1] and titles[0]


# ---- orf config: every value and where it comes from ----

def test_config_shows_each_value_and_its_source(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.orf]\nconcurrency = 7\n[tool.orf.detect]\nwarn_repeats = 4\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORF_MODEL", "gemini-2.5-pro")
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    code, out, _ = run("config")
    assert code == 0
    values = {ln.split()[0]: ln for ln in out.splitlines() if ln and not ln.startswith(" ")}
    pyproject = tmp_path / "pyproject.toml"
    assert values["model"].split(None, 1)[1] == "gemini-2.5-pro  (env ORF_MODEL)"
    assert values["concurrency"].split(None, 1)[1] == f"7  (pyproject ({pyproject}))"
    assert values["detect.warn_repeats"].split(None, 1)[1] == f"4  (pyproject ({pyproject}))"
    ledger = tmp_path / ".orf" / "ledger.db"
    assert values["ledger"].split(None, 1)[1] == (
        f"{ledger}  (default: <store>/../.orf/ledger.db)")
    assert values["backend"].split(None, 1)[1] == (
        "heuristic  (default: gemini when GEMINI_API_KEY/GOOGLE_API_KEY is set, else heuristic)")
    assert values["store"].split(None, 1)[1] == "experiences  (default)"
    assert "None" not in out
    code, out, _ = run("config", "--json")
    doc = json.loads(out)
    assert doc["sources"]["model"] == "env ORF_MODEL" and doc["ledger"] == str(ledger)


# ---- the README's test command shows pytest's summary line ----

def test_readme_test_command_prints_the_summary_line(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"&& \.venv/bin/pytest([^\n`]*)\n", readme)
    assert m, "the README's test command changed: update this test"
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    # The repository's own pytest settings (addopts included) with the README's flags.
    proc = subprocess.run([sys.executable, "-m", "pytest", *m.group(1).split(), "-c",
                           str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-p", "no:cacheprovider", str(tmp_path / "test_one.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^1 passed in [\d.]+s$", proc.stdout, re.MULTILINE), proc.stdout
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert f".venv/bin/pytest{m.group(1)} -p no:cacheprovider" in ci


# ---- a hostile-input corpus through `orf analyze` and `orf mine` ----

def _claude(sid: str, n: int, **extra: object) -> list[dict]:
    base = {"sessionId": sid, "isSidechain": False, "cwd": "/w", "version": "2.1.0",
            "timestamp": "2026-01-01T00:00:00Z"}
    recs = [{**base, "type": "user", "uuid": f"{sid}-u", "message": {
        "role": "user", "content": "run the tests"}}]
    for i in range(n):
        recs.append({**base, "type": "assistant", "uuid": f"{sid}-a{i}", "message": {
            "id": f"m{i}", "role": "assistant", "model": "claude-x", "content": [
                {"type": "tool_use", "id": f"t{i}", "name": "Bash",
                 "input": {"command": "pytest -x"}}], **extra}})
        recs.append({**base, "type": "user", "uuid": f"{sid}-r{i}", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                         "content": "Exit code 1\nFAILED", "is_error": True}]}})
    return recs


def _jsonl(recs: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def hostile_corpus(root: Path) -> dict[str, str]:
    """Write the corpus; return file name -> the line (regex) that must name it."""
    root.mkdir()
    expect: dict[str, str] = {}
    os.mkfifo(root / "fifo.jsonl")
    expect["fifo.jsonl"] = r"fifo\.jsonl: named pipe \(FIFO\), not read"
    (root / "device.jsonl").symlink_to("/dev/zero")
    expect["device.jsonl"] = r"device\.jsonl: character device, not read"
    (root / "loop.jsonl").symlink_to(root / "loop.jsonl")
    expect["loop.jsonl"] = r"loop\.jsonl: symlink loop, not followed"
    # 60 MB on one line, inside a record an adapter claims: read, cut, never a hang.
    big = _claude("big", 1)
    big[0]["message"]["content"] = "x" * (60 * 1024 * 1024)
    (root / "big-line.jsonl").write_bytes(_jsonl(big))
    deep = _jsonl(_claude("deep", 1)) + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n"
    (root / "deep.jsonl").write_bytes(deep)
    expect["deep.jsonl"] = r"deep\.jsonl:4: JSON nested deeper than orjson's limit"
    (root / "utf8.jsonl").write_bytes(_jsonl(_claude("utf8", 1)) + b'{"x": "\xff\xfe"}\n')
    expect["utf8.jsonl"] = r"utf8\.jsonl:4: invalid UTF-8 at byte \d+"
    (root / "session.jsonl.gz").write_bytes(gzip.compress(_jsonl(_claude("gz", 1))))
    expect["session.jsonl.gz"] = (r"session\.jsonl\.gz: not a session log \(file is "
                                  r"gzip-compressed; decompress it first\)")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 64)
    expect["blob.bin"] = r"blob\.bin: not a session log \(binary file \(NUL bytes\)"
    (root / "truncated.json").write_text('{"sessionId": "t", "projectHash": "p", "messages": '
                                         '[{"id": "1", "type": "user", "content": "hi"')
    expect["truncated.json"] = r"truncated\.json:1: invalid JSON: unexpected end of data"
    huge = _claude("huge", 1)
    huge[1]["message"]["usage"] = {"input_tokens": 1e400, "output_tokens": -5}
    (root / "huge-numbers.jsonl").write_bytes(_jsonl(huge).replace(b"Infinity", b"1e400"))
    wrong = _claude("wrong", 2)
    wrong[1]["message"]["content"] = 42
    wrong[2]["message"] = ["not", "an", "object"]
    wrong[3]["timestamp"] = {"not": "a string"}
    (root / "wrong-types.jsonl").write_bytes(_jsonl(wrong) + b"[1, 2, 3]\n")
    expect["wrong-types.jsonl"] = r"wrong-types\.jsonl:6: expected a JSON object; skipped"
    return expect


@POSIX
@pytest.mark.slow
def test_hostile_corpus_through_analyze_and_mine(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    expect = hostile_corpus(corpus)
    readable = {"big-line.jsonl", "deep.jsonl", "utf8.jsonl", "huge-numbers.jsonl",
                "wrong-types.jsonl"}
    analyze = _orf("analyze", corpus, "--json", "-v", timeout=300)
    mine = _orf("mine", corpus, "--store", _store(tmp_path / "experiences"), "--backend",
                "heuristic", "--jobs", "2", "--json", "-v", "--quiet", timeout=300)
    doc = json.loads(mine.stdout)
    for name, proc in (("analyze", analyze), ("mine", mine)):
        assert proc.returncode == 3, (name, proc.stderr)  # partial: the rest was done
        text = proc.stderr + "\n".join(doc["issues"] + doc["skipped"]) if name == "mine" \
            else proc.stderr
        for file, pattern in expect.items():
            assert re.search(str(corpus / "X").replace("X", "") + pattern, text), (name, file)
    sessions = {Path(json.loads(line)["path"]).name for line in analyze.stdout.splitlines()}
    assert sessions == readable
    assert doc["sessions"]["failed"] == 1  # truncated.json: claimed and unreadable
    assert doc["sessions"]["new"] == len(readable)
    big = next(json.loads(line) for line in analyze.stdout.splitlines()
               if json.loads(line)["path"].endswith("big-line.jsonl"))
    assert len(big["task"]) < 10_000  # the 60 MB line was cut, not carried along
