"""What a step printed, as the agent saw it.

The harness's header removed, clipped or withheld views, failures reported only in the text,
and a masked fingerprint to compare outputs.
"""

from __future__ import annotations

import re

from ..hashing import content_hash
from ..model import Step
from .info import CODEX_SHOWN
from .masks import NUMBERS

_SHOWN_LINES = re.compile(r"\s*Total output lines: (\d+)")


WS = re.compile(r"\s+")


CLIPPED = re.compile(
    r"response clipped|too large|too long|Showing first|file is large|elided|output_head"
)


# The harness withheld the whole output (mini-swe-agent): the agent saw nothing of the file.
WITHHELD = re.compile(r"^\s*<warning>\s*The output of your last command was too long")


# A call cancelled because a parallel sibling failed, or by the user: not the agent's retry.
CANCELLED = re.compile(r"Sibling tool call errored|interrupted by user|[Cc]ancelled by")


# Observations that report a failed action even when the log has no error flag.
FAILED_OUTPUT = re.compile(
    r"^\s*(ERROR:|\[Your proposed edit has introduced new syntax error|\[No exact match found|"
    r"No replacement was performed|Your edit was not applied|Traceback \(most recent call last\))"
)


# Codex's apply_patch refusing a patch whose context is not in the file (as a tool, or called
# through the shell behind the exec header, exit code 0): nothing was written.
PATCH_REFUSED = re.compile(r"^\s*(apply_patch verification failed|Failed to find expected "
                            r"lines|Invalid patch)")


def _mask(text: str) -> str:
    return NUMBERS.sub("#", WS.sub(" ", text)).strip()


def fingerprint(text: str, masked: bool = True) -> str | None:
    """Hash of an output to compare (None when empty); numbers and ids masked unless not."""
    # Test and script output differ run to run in timings and addresses, hence the mask; a
    # file or listing that differs in one number has really changed.
    if not text.strip():
        return None
    return content_hash(_mask(text) if masked else WS.sub(" ", text).strip(), 8)


# Codex exec output opens with a header of its own (chunk id, wall time, exit status, token
# count, then "Output:"), different on every call: it is not what the command printed.
_CODEX_HEADER = re.compile(
    r"\A(?:Chunk ID: \w+\n)?(?:Exit code: -?\d+\n)?Wall time: [^\n]*\n"
    r"(?:Process (?:exited with code -?\d+|running with session ID \d+)\n)?"
    r"(?:Original token count: \d+\n)?(?:Total output lines: \d+\n)?Output:\n")


REDACTED = re.compile(r"\s*\[REDACTED_\w+ len=(\d+) sha=[0-9a-f]+\]\s*$")


# Line numbers a viewer puts in front of each line (`nl -ba`, `cat -n`, Claude's Read `1→`):
# the same lines of a file shown with or without them are the same text.
GUTTER = re.compile(r"^ *\d+(?:\t|→)", re.M)


# Older Codex cut an exec output to the model at 10 KiB or 256 lines, keeping head and tail.
_OMITTED = re.compile(r"\[\.\.\. omitted \d+ of (\d+) lines \.\.\.\]")


ADAPTER_CUT = re.compile(r"\n\.\.\.\[\d+ chars truncated\]\.\.\.\n")


HEAD_LINES = 12


"""Whole lines of a view cut by our adapter that stand for its text in the fingerprint (few
enough to fit in the head it keeps, even numbered and long)."""


CODEX_MAX_CHARS = 10_000


"""Full output size from which older Codex showed the model only head and tail (10 KiB)."""


def body_of(output: str) -> str:
    """What the command printed: the output without the harness's exec header (Codex)."""
    m = _CODEX_HEADER.match(output)
    return output[m.end():] if m else output


def codex_clipped(step: Step, head: str, body: str) -> bool:
    """Codex showed the model only the head and tail of this output, not its middle."""
    total = _SHOWN_LINES.match(head) or _SHOWN_LINES.match(body[:80])
    if total and int(total.group(1)) > CODEX_SHOWN:
        return True
    if _OMITTED.search(body):
        return True
    # The argv shell of older Codex: its marker may sit in the middle our adapter cut away.
    argv = isinstance(step.args, dict) and isinstance(step.args.get("command"), list)
    return argv and step.output_len >= CODEX_MAX_CHARS
