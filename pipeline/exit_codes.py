"""The process exit codes of every ``orf`` command (``orf mine`` computes its own from the run)."""

EXIT_OK = 0
"""Everything asked for was done."""
EXIT_ERROR = 1
"""Nothing or too little done (the message is on stderr)."""
EXIT_USAGE = 2
"""Bad option or argument (click's own code)."""
EXIT_PARTIAL = 3
"""Some inputs or calls failed, the rest was done."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: nothing half-written, the next run resumes."""
