"""Commands: redact_cmd (to be filled in)."""
