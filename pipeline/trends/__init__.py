"""``orf trends``: recurrence of traps before and after their playbooks, from the ledger."""

from __future__ import annotations

from .compute import SCHEMA, TrendRules, TrendsReport, compute_trends
from .playbooks import PlaybookInfo, playbook_infos

__all__ = ["SCHEMA", "PlaybookInfo", "TrendRules", "TrendsReport", "compute_trends",
           "playbook_infos"]
