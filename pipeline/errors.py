"""Domain exceptions. Only the CLI turns these into click exceptions and exit codes."""

from __future__ import annotations

import errno


class OrfError(Exception):
    """Base class for errors the CLI reports without a traceback."""


class StoreError(OrfError):
    """The ORF store is missing, malformed or cannot be written."""


class InvalidIdentifier(StoreError):
    """A domain or experience id is malformed or tries to escape the store."""


class LedgerError(OrfError):
    """The ledger database cannot be opened or is not an orf ledger."""


class LockTimeout(OrfError):
    """Another process held the store lock past the timeout."""


class UnknownFormat(OrfError):
    """No adapter recognised the file (or the forced ``--format`` does not exist)."""


class ParseFailure(OrfError):
    """A log could not be read at all (binary, empty, compressed, ...)."""


class ConfigError(OrfError):
    """A setting is invalid (bad key in [tool.orf], bad env value)."""


class BackendError(OrfError):
    """The LLM backend failed in a way retries did not fix."""


class MissingApiKey(BackendError):
    """The gemini backend was asked for but no key is set."""


# errno -> what to do about it (the message already names the path and what failed).
_OS_HINTS: dict[int, str] = {
    errno.EROFS: "use a writable --store/--ledger, or remount it read-write",
    errno.EACCES: "fix its permissions or use another path",
    errno.EPERM: "fix its permissions or use another path",
    errno.ENOSPC: "free some space and run again",
    errno.EDQUOT: "free some space and run again",
    errno.ENOENT: "create the missing folder or fix the path",
    errno.ENOTDIR: "a part of the path is a file: fix the path",
    errno.EISDIR: "a file was expected here: fix the path",
    errno.EEXIST: "a file is in the way of a folder: fix the path",
    errno.ELOOP: "fix the symbolic link",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.EMFILE: "raise `ulimit -n` or lower --jobs",
}


def os_error_line(exc: OSError) -> str:
    """One line for an OS error: the path, what failed, and what to do next."""
    what = (exc.strerror or str(exc) or type(exc).__name__).rstrip(".")
    what = what[:1].lower() + what[1:]
    hint = _OS_HINTS.get(exc.errno or 0, "check the path and run again")
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{what}; {hint}"
