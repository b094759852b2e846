"""Crash-safe file writes and the store lock.

A reader never sees a half-written file: bytes go to a temp file in the same folder, are
fsynced, then renamed over the target with ``os.replace`` (atomic on POSIX and Windows).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock
from filelock import Timeout as _FileLockTimeout

from .errors import LockTimeout


def lock_path(store: Path) -> Path:
    """The store's lock file: ``<parent>/.orf/<store name>.lock``, beside the default ledger.

    Kept out of the store itself so that the store holds only ORF files and `orf pr` or a
    plain ``git add experiences/`` never commits it.
    """
    resolved = store.resolve()
    return resolved.parent / ".orf" / f"{resolved.name}.lock"


_LOCKS: dict[str, FileLock] = {}


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + os.replace)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with _naming(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            # mkstemp makes the file 0600: a replaced file keeps its mode, a new one gets
            # what the user's umask gives any new file (a page or playbook others read).
            os.chmod(tmp, _mode_for(path))
            os.replace(tmp, path)
        except BaseException:
            # A full disk or a kill mid-write leaves the target as it was, and no temp file.
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _fsync_dir(path.parent)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_UMASK


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Give an ``OSError`` raised without a file name (write, fsync) the path it was about."""
    try:
        yield
    except OSError as exc:
        if exc.filename or isinstance(exc, TimeoutError):  # filelock's Timeout is one
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def _fsync_dir(folder: Path) -> None:
    # The rename itself must survive power loss: fsync the directory entry (POSIX only).
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def remove_stale_temps(folder: Path) -> int:
    """Delete temp files left by a killed writer (``.<name>.*.tmp``); return how many."""
    count = 0
    if not folder.is_dir():
        return 0
    for tmp in folder.rglob(".*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            count += 1
    return count


@contextlib.contextmanager
def store_lock(store: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the store's lock file; raise ``LockTimeout`` after ``timeout`` seconds."""
    path = lock_path(store)
    with _naming(path):
        store.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
    # One FileLock object per lock file and process: FileLock is reentrant per thread, so a
    # run holding the lock (orf mine around dedupe+write) can call Store methods that lock too.
    key = str(path)
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS.setdefault(key, FileLock(key))
    try:
        with _naming(path):
            lock.acquire(timeout=timeout)
    except _FileLockTimeout as exc:
        raise LockTimeout(
            f"another orf process holds the lock on {store} (waited {timeout:g}s); "
            "try again when it finishes, or raise --lock-timeout"
        ) from exc
    try:
        yield
    finally:
        lock.release()
