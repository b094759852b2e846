"""``orf trends --html``: one self-contained page (inline SVG charts, inline CSS, no script).

Charts: wasted steps per week with each playbook's arrival marked, top traps by cost,
before/after hit rate per playbook, and waste per agent and model. A summary at the top links
to each playbook's and trap's row in the tables below.
"""

from __future__ import annotations

import datetime
from typing import Any

from ..trends.compute import TrendsReport
from .svg import CHART_CSS, Marker, columns, esc, hbars

WIDTH = 1200
"""Drawn width of every chart: the page's content width (charts scale down with a narrower
window, never up past it)."""

_CSS = CHART_CSS + """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;padding:0 24px;max-width:1200px;
color:#222}
h1{font-size:22px} h2{margin-top:1.8em;border-bottom:1px solid #ccc;font-size:17px}
table{border-collapse:collapse;width:100%;font-size:13px}
td,th{padding:3px 6px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right} tr:target{background:#fff4d6}
.st{font-size:11px;padding:1px 6px;border-radius:3px;color:#fff}
.helping{background:#2e7d32} .still-recurring{background:#c62828} .stale{background:#6d6d6d}
.no-data{background:#9e9e9e}
.too-new{background:#bdbdbd} code{font-size:12px} ul.sum li{margin:2px 0}
"""


def _week_of(iso: str | None) -> datetime.date | None:
    if not iso:
        return None
    day = datetime.date.fromisoformat(iso[:10])
    return day - datetime.timedelta(days=day.weekday())


def _anchor(prefix: str, key: str) -> str:
    return prefix + "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


def _weekly_chart(report: TrendsReport) -> str:
    labels = [w["week"] for w in report.weekly]
    index = {datetime.date.fromisoformat(w): i for i, w in enumerate(labels)}
    markers = []
    for pb in report.playbooks:
        week = _week_of(pb["entered_at"])
        if week is None or not index:
            continue
        if week in index:
            day = datetime.date.fromisoformat(pb["entered_at"][:10])
            pos = index[week] + day.weekday() / 7
        else:  # before or after the window: pin it to the edge
            pos = 0.0 if week < min(index) else float(len(labels))
        markers.append(Marker(pos, f"{pb['id']} ({pb['entered_at'][:10]})"))
    return columns("Wasted steps per week (dashed: a playbook entered the store)",
                   labels, [w["wasted_steps"] for w in report.weekly], markers=markers,
                   width=WIDTH, chart_id="chart-weekly")


def _summary(report: TrendsReport) -> str:
    items = [f'<li><a href="#{_anchor("pb-", pb["id"])}">{esc(pb["id"])}</a> '
             f'<span class="st {esc(pb["status"])}">{esc(pb["status"])}</span> '
             f'{esc(pb["title"])}</li>' for pb in report.playbooks]
    items += [f'<li><a href="#{_anchor("trap-", t["signature"])}">trap '
              f'{esc(t["kind"])} <code>{esc(t["signature"][:14])}</code></a>: '
              f'{t["wasted_tokens"]:,} tokens in {t["hits"]} sessions'
              f'{"" if t["playbook"] else " (no playbook)"}</li>'
              for t in report.traps[:5]]
    return f'<ul class="sum">{"".join(items)}</ul>' if items else "<p>No sessions yet.</p>"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value}"


def _rate_or_none(side: dict[str, Any]) -> float | None:
    """Hits per 100 sessions; None (no bar, a note) when there was no session on that side."""
    return None if not side["sessions"] else float(side["rate_per_100"] or 0)


def _playbook_table(report: TrendsReport) -> str:
    rows = []
    for pb in report.playbooks:
        b, a = pb["before"], pb["after"]
        rows.append(
            f'<tr id="{_anchor("pb-", pb["id"])}"><td>{esc(pb["id"])}<br>{esc(pb["title"])}</td>'
            f'<td><span class="st {esc(pb["status"])}">{esc(pb["status"])}</span></td>'
            f'<td>{esc((pb["entered_at"] or "-")[:10])}</td>'
            f'<td class="n">{b["hits"]}/{b["sessions"]} ({_rate(b["rate_per_100"])})</td>'
            f'<td class="n">{a["hits"]}/{a["sessions"]} ({_rate(a["rate_per_100"])})</td>'
            f'<td class="n">{b["wasted_steps"]} → {a["wasted_steps"]}</td></tr>')
    return ('<table><tr><th>playbook</th><th>status</th><th>entered</th>'
            '<th class="n">hits before (per 100)</th><th class="n">hits after (per 100)</th>'
            '<th class="n">wasted steps</th></tr>' + "".join(rows) + "</table>")


def _trap_table(report: TrendsReport) -> str:
    rows = [f'<tr id="{_anchor("trap-", t["signature"])}"><td><code>{esc(t["signature"])}'
            f'</code></td><td>{esc(t["kind"])}</td><td class="n">{t["hits"]}</td>'
            f'<td class="n">{t["wasted_steps"]}</td><td class="n">{t["wasted_tokens"]:,}</td>'
            f'<td>{esc((t["first_seen"] or "")[:10])} … {esc((t["last_seen"] or "")[:10])}</td>'
            f'<td>{esc(t["playbook"] or "none")}</td></tr>' for t in report.traps]
    return ('<table><tr><th>signature</th><th>kind</th><th class="n">sessions</th>'
            '<th class="n">wasted steps</th><th class="n">wasted tokens</th><th>seen</th>'
            '<th>playbook</th></tr>' + "".join(rows) + "</table>")


def render_trends_html(report: TrendsReport) -> str:
    """The whole page as one string."""
    data = report.to_json()
    window = f'{(data["window"]["from"] or "-")[:10]} to {(data["window"]["to"] or "-")[:10]}'
    traps = hbars("Top traps by wasted tokens",
                  [(f'{t["kind"]} {t["signature"][3:11]} → {t["playbook"] or "no playbook"}',
                    [t["wasted_tokens"]]) for t in report.traps[:10]],
                  series=["wasted tokens"], width=WIDTH, chart_id="chart-traps")
    before_after = hbars("Sessions hitting the trap per 100, before and after each playbook",
                         [(f'{pb["id"]} ({pb["status"]})', [_rate_or_none(pb["before"]),
                                                             _rate_or_none(pb["after"])])
                          for pb in report.playbooks],
                         series=["before", "after"], width=WIDTH, chart_id="chart-before-after",
                         empty=["no sessions before", "no sessions yet"])
    agents = hbars("Wasted steps per agent and model (sessions with a trap / all)",
                   [(f'{g["agent"]} / {g["model"] or "?"}: {g["with_trap"]}/{g["sessions"]}',
                     [g["wasted_steps"]]) for g in report.by_agent_model],
                   series=["wasted steps"], width=WIDTH, chart_id="chart-agents")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>orf trends</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<h1>Did the playbooks help?</h1><p>{data['sessions']} sessions, {esc(window)}. "
        "A playbook is <b>helping</b> when the share of its agents' sessions that hit its trap "
        "fell by half or more after it entered the store; <b>stale</b> when its trap stopped "
        "appearing (or its programs left the logs) while sessions kept coming.</p>"
        f'<h2 id="summary">Summary</h2>{_summary(report)}'
        f"<h2>Waste over time</h2>{_weekly_chart(report)}"
        f"<h2>Top traps</h2>{traps}"
        f"<h2>Before and after</h2>{before_after}"
        f"<h2>By agent and model</h2>{agents}"
        f'<h2 id="playbooks">Playbooks</h2>{_playbook_table(report)}'
        f'<h2 id="traps">Traps</h2>{_trap_table(report)}'
        "</body></html>\n")
