"""Commands: formats_cmd (to be filled in)."""
