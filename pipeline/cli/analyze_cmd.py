"""Commands: analyze_cmd (to be filled in)."""
