"""How fast Ctrl-C stops `orf mine --jobs N`, and what the next run costs.

Writes SESSIONS small Claude Code sessions, starts `orf mine --jobs JOBS`, sends SIGINT in each
phase (discovery done, the pool busy scanning, the scan done, drafting, writing, written: the
pause hook holds the run there), and prints the time from the signal to the exit (and the exit
code), then the time of the run that resumes. Prints figures only.

    python bench/interrupt.py [SESSIONS] [JOBS] [ROUNDS]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _mine_helpers import claude_session  # noqa: E402

from pipeline.orf import Store  # noqa: E402


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("ORF_", "GEMINI", "GOOGLE"))}


PHASES = ("sources", "scan", "scanned", "drafting", "writing", "written")
"""Where SIGINT is sent: a pause point of ``stages/pause.py``, or ``scan`` (the pool busy)."""


def one_round(root: Path, sessions: int, jobs: int,
              phase: str = "scan") -> tuple[float, int, float, int]:
    """(seconds from SIGINT to exit, its code, seconds of the resuming run, its code)."""
    logs = root / "logs"
    logs.mkdir()
    for i in range(sessions):
        sid = f"c0ffee00-0000-4000-8000-{i:012d}"
        (logs / f"s{i:04d}.jsonl").write_text(claude_session(sid, 2 + i % 3,
                                                             cwd=f"/home/dev/p{i % 7}"))
    store = root / "experiences"
    Store(store).init()
    cmd = [sys.executable, "-m", "pipeline", "mine", str(logs), "--store", str(store),
           "--backend", "heuristic", "--jobs", str(jobs)]
    env = _env() if phase == "scan" else {**_env(), "ORF_TEST_PAUSE_AT": phase}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    marker = "orf: scanned" if phase == "scan" else f"orf: paused at {phase}"
    for line in proc.stderr:
        if line.startswith(marker):
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait()
    stopped = time.monotonic() - sent
    start = time.monotonic()
    again = subprocess.run([*cmd, "--quiet"], env=_env(), capture_output=True, text=True)
    return stopped, code, time.monotonic() - start, again.returncode


def main() -> None:
    """Run the rounds and print one line each, then the worst stop time."""
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for phase in PHASES:
        stops = []
        for r in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                stopped, code, rerun, rcode = one_round(Path(tmp), sessions, jobs, phase)
            stops.append(stopped)
            print(f"{phase} round {r + 1}: SIGINT -> exit {code} in {stopped:.3f}s; "
                  f"resuming run exit {rcode} in {rerun:.2f}s")
        print(f"{phase}: {sessions} sessions, --jobs {jobs}: worst stop {max(stops):.3f}s, "
              f"median {sorted(stops)[len(stops) // 2]:.3f}s")


if __name__ == "__main__":
    main()
