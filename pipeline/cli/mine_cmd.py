"""Commands: mine_cmd (to be filled in)."""
