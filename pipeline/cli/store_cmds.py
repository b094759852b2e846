"""Commands: store_cmds (to be filled in)."""
