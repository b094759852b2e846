"""Domain exceptions. Only the CLI turns these into click exceptions and exit codes."""

from __future__ import annotations


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
