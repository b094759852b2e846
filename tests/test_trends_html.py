"""orf trends --html opened in real headless Chromium: every chart draws, every link lands."""

from __future__ import annotations

import os
from pathlib import Path

from _browser import Elements, dump_dom, screenshot
from _trends_helpers import BATCH_2, orf, scenario

CHARTS = {"chart-weekly": 6 + 2, "chart-traps": 1, "chart-before-after": 2 + 2,
          "chart-agents": 1}
"""Shapes each chart draws: weekly has one column per week (1-6; week 3, with no session, is
a hairline), its axis and the playbook's dashed arrival line; one trap; before and after bars
of the one playbook and their legend keys; one agent/model."""


def test_trends_page_renders_every_chart_and_links_to_existing_rows(tmp_path: Path) -> None:
    store, ledger = scenario(tmp_path, BATCH_2)
    page = tmp_path / "trends.html"
    orf("trends", "--store", str(store), "--ledger", str(ledger), "--html", str(page))
    text = page.read_text()
    assert "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")  # nothing to fetch at view time
    exp_id = next(store.glob("*/EXP-*.md")).stem

    dom = Elements(dump_dom(page))
    charts = {a["id"]: a for a in dom.all("svg", **{"class": "chart"})}
    assert set(charts) == set(CHARTS)
    for name, attrs in charts.items():
        width, height = (int(v) for v in attrs["data-box"].split("x"))
        assert width > 100 and height > 20, (name, attrs["data-box"])
        assert int(attrs["data-shapes"]) == CHARTS[name], name
    markers = dom.all("line", **{"class": "marker"})
    assert len(markers) == 1

    links = dom.all("a")
    assert [a["href"] for a in links][:1] == [f"#pb-{exp_id}"]
    assert len(links) == 2  # the playbook and its trap
    assert {a["data-target"] for a in links} == {"tr"}
    assert {a["href"][1:] for a in links} <= dom.ids()
    shot = screenshot(page, Path(os.environ.get("ORF_SCREENSHOT_DIR", tmp_path))
                      / "trends.png")
    assert shot.stat().st_size > 10_000
