"""What a first-week user saw wrong on the two HTML pages, measured in real headless Chromium.

Timeline (``orf analyze --html``): rows cite steps as ``#index`` and show a message once, the
action column reads as an action (the arguments folded), the step strip spans the content,
the meta line says nothing twice. Trends (``orf trends --html``): axis and arrival labels do
not overlap, an "after" with no session says so, the page uses a wide window.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from _browser import measure, overlaps
from _trends_helpers import git, init_repo, orf

from pipeline.report.svg import CHART_CSS, Marker, columns

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
CLAUDE = FIXTURES / "claude-code" / "-home-dev-shop" / "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl"


def _no_two_overlap(boxes: list[dict[str, Any]]) -> None:
    for a, b in itertools.combinations(boxes, 2):
        assert not overlaps(a, b), (a, b)


def _timeline(tmp_path: Path, log: Path) -> Path:
    page = tmp_path / f"{log.stem[:12]}.html"
    orf("analyze", str(log), "--html", str(page))
    return page


ROWS = {"rows": "table.steps tr[id]", "heads": "table.steps th",
        "cells": "table.steps tr[id] td", "args": "table.steps tr[id] details",
        "strip": "svg.chart[id$='-strip']", "strip_cells": "svg.chart[id$='-strip'] rect",
        "steps": "table.steps", "meta": "section > p:nth-of-type(2)"}


def _column(m: dict[str, list[dict[str, Any]]], name: str) -> list[dict[str, Any]]:
    """The cells of one column of the steps table, by its header."""
    heads = [h["text"].strip() for h in m["heads"]]
    return m["cells"][heads.index(name)::len(heads)]


def test_codex_rows_cite_the_step_index_and_show_a_message_once(tmp_path: Path) -> None:
    docs = orjson.loads(orf("analyze", str(CODEX), "--json"))
    m = measure(_timeline(tmp_path, CODEX), ROWS)
    assert len(m["rows"]) == docs["steps"] == 9
    # Each row's first cell is its index as orf cites it; the log's own id is no column.
    assert [c["text"].strip() for c in _column(m, "#")] == [f"#{i}" for i in range(9)]
    for row in m["rows"]:
        assert "fixtures/" not in row["text"] and CODEX.stem not in row["text"], row["text"]
    # Message rows (the agent's notes) show their text once, not as action and output both.
    for n, said in ((4, "RawValue needs the raw_value feature; enabling it."),
                    (8, "cargo build passes after enabling serde_json's raw_value feature.")):
        assert m["rows"][n]["text"].count(said) == 1, m["rows"][n]["text"]


def test_action_column_reads_as_an_action_with_arguments_on_demand(tmp_path: Path) -> None:
    m = measure(_timeline(tmp_path, CODEX), ROWS)
    shown = [a["text"] for a in _column(m, "action")]
    for text in shown:  # what a reader sees, closed <details> folded
        assert not text.lstrip().startswith("{") and '{"' not in text, text
    # A shell call reads as its command, an edit as its file, other tools as key=value.
    last_line = [t.strip().splitlines() for t in shown]
    assert [lines[-2] if "arguments" in lines[-1] else lines[-1] for lines in last_line] == [
        "make the build pass: cargo build fails on a missing feature",
        "$ cargo build", "$ cargo build", "$ cargo build",
        "RawValue needs the raw_value feature; enabling it.", "edit Cargo.toml",
        "$ cargo build", "write_stdin: session_id=4242",
        "cargo build passes after enabling serde_json's raw_value feature."]
    # The full arguments are one click away, folded: in the page, not on the screen.
    folds = m["args"]
    assert len(folds) == 6 and not any(d["open"] for d in folds)
    page = (tmp_path / f"{CODEX.stem[:12]}.html").read_text()
    assert "workdir: /home/dev/api" in page and "*** Update File: Cargo.toml" in page
    assert not any("workdir" in text for text in shown)


@pytest.mark.parametrize("width", [1400, 900])
def test_step_strip_spans_the_content_width(tmp_path: Path, width: int) -> None:
    m = measure(_timeline(tmp_path, CODEX), ROWS, width=width)
    [strip], [table] = m["strip"], m["steps"]
    content = table["r"] - table["l"]
    assert content > width * 0.9
    assert strip["r"] - strip["l"] >= content - 1
    cells = m["strip_cells"]
    assert len(cells) == 9
    assert min(c["l"] for c in cells) <= table["l"] + 2
    assert max(c["r"] for c in cells) >= table["r"] - content * 0.02
    _no_two_overlap(cells)


@pytest.mark.parametrize("log", [CODEX, CLAUDE], ids=["codex", "claude-code"])
def test_meta_line_says_each_value_once(tmp_path: Path, log: Path) -> None:
    agent = "codex" if log == CODEX else "claude-code"
    metas = measure(_timeline(tmp_path, log), ROWS)["meta"]
    assert metas  # the Claude log holds a sub-agent too: a section each
    for meta in metas:
        items = [x.strip() for x in meta["text"].split("·")]
        assert len(items) == len(set(items)), items
        words = re.findall(r"[\w.-]+", items[0])
        assert len(words) == len(set(words)), items[0]  # not "claude-code claude-code" either
        assert [i for i in items if i.split()[0] == agent] == [items[0]], items


# --- trends ------------------------------------------------------------------------------

TRENDS = {"axis": "#chart-weekly text.ax", "marks": "#chart-weekly text.mk",
          "lines": "#chart-weekly line.marker", "bars": "#chart-weekly rect",
          "charts": "svg.chart", "heading": "h2", "ba_labels": "#chart-before-after text.lb",
          "ba_notes": "#chart-before-after text.empty", "ba_bars": "#chart-before-after rect"}


@pytest.fixture(scope="module")
def fixture_trends(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """``orf mine fixtures/`` into a fresh store, its playbooks committed today (after every
    fixture session), then ``orf trends --html``: a year of weeks, four arrivals at once."""
    tmp = tmp_path_factory.mktemp("trends")
    repo = tmp / "repo"
    init_repo(repo)
    store, ledger = repo / "experiences", tmp / "ledger.db"
    orf("init", "--store", str(store))
    orf("mine", str(FIXTURES), "--store", str(store), "--ledger", str(ledger),
        "--backend", "heuristic", "--json")
    git(repo, "add", "experiences")
    git(repo, "commit", "-q", "-m", "playbooks")
    page = tmp / "trends.html"
    orf("trends", "--store", str(store), "--ledger", str(ledger), "--html", str(page))
    doc = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger), "--json"))
    return page, doc


def test_week_axis_labels_do_not_overlap(fixture_trends: tuple[Path, dict[str, Any]]) -> None:
    page, doc = fixture_trends
    assert (doc["window"]["from"][:7], doc["window"]["to"][:7]) == ("2025-06", "2026-06")
    for width in (1400, 800):
        axis = measure(page, TRENDS, width=width)["axis"]
        dates = [a for a in axis if re.fullmatch(r"\d{4}-\d\d-\d\d", a["text"])]
        assert len(dates) >= 6, axis  # a year of weeks: every label would collide
        _no_two_overlap(axis)


def test_arrivals_on_one_date_do_not_print_over_each_other(
        fixture_trends: tuple[Path, dict[str, Any]]) -> None:
    page, doc = fixture_trends
    arrivals = {pb["entered_at"][:10] for pb in doc["playbooks"]}
    assert len(doc["playbooks"]) >= 4 and len(arrivals) == 1
    m = measure(page, TRENDS)
    assert len(m["marks"]) == len(doc["playbooks"])
    _no_two_overlap(m["marks"])
    assert len(m["lines"]) == 1  # one date, one dashed line
    columns_drawn = [b for b in m["bars"] if b["r"] - b["l"] > 2]
    for mark in m["marks"]:
        assert not any(overlaps(mark, bar) for bar in columns_drawn), mark


def test_after_without_sessions_says_so(fixture_trends: tuple[Path, dict[str, Any]]) -> None:
    page, doc = fixture_trends
    empty = [pb for pb in doc["playbooks"] if pb["after"]["sessions"] == 0]
    assert empty
    m = measure(page, TRENDS)
    notes = [n["text"] for n in m["ba_notes"]]
    assert notes.count("after: no sessions yet") == len(empty)
    # One drawn bar per side with data, plus the two legend keys: no empty hairline bars.
    with_data = sum(1 for pb in doc["playbooks"] for side in ("before", "after")
                    if pb[side]["sessions"])
    assert len(m["ba_bars"]) == with_data + 2
    assert all(b["r"] - b["l"] >= 1 for b in m["ba_bars"])
    labels = {lb["text"].split(" (")[0]: lb for lb in m["ba_labels"]}
    for pb, note in zip(empty, [n for n in m["ba_notes"] if "after" in n["text"]], strict=True):
        label = labels[pb["id"]]
        assert label["t"] - 14 < note["t"] < label["b"] + 14  # next to its playbook


def test_trends_page_uses_a_wide_window(fixture_trends: tuple[Path, dict[str, Any]]) -> None:
    page, _doc = fixture_trends
    m = measure(page, TRENDS, width=1400)
    content = max(h["r"] - h["l"] for h in m["heading"])
    assert 1100 <= content <= 1250
    for chart in m["charts"]:
        assert chart["r"] - chart["l"] >= content * 0.95, chart["id"]
        assert chart["r"] <= 1400
    # A narrow window still holds every chart (they scale down, never overflow).
    narrow = measure(page, TRENDS, width=700)
    assert all(c["r"] <= 700 for c in narrow["charts"])


def test_columns_stack_crowded_markers_without_overlap(tmp_path: Path) -> None:
    """Arrivals at one date, at nearby dates and past the window's end, on a long axis."""
    labels = [f"2026-{1 + i // 4:02d}-{1 + 7 * (i % 4):02d}" for i in range(48)]
    markers = [Marker(10.3, f"EXP-2026010{k}-0001 (2026-03-19)") for k in range(6)]
    markers += [Marker(10.6, "EXP-20260120-0002 (2026-03-21)"),
                Marker(11.0, "EXP-20260121-0003 (2026-03-23)"),
                Marker(48.0, "EXP-20261202-0004 (2026-12-02)"),
                Marker(48.0, "EXP-20261202-0005 (2026-12-02)")]
    svg = columns("crowded", labels, [float(i % 5) for i in range(48)], markers=markers,
                  width=1200, chart_id="c")
    page = tmp_path / "columns.html"
    page.write_text(f"<!doctype html><html><head><style>{CHART_CSS}</style></head>"
                    f"<body>{svg}</body></html>")
    m = measure(page, {"marks": "#c text.mk", "axis": "#c text.ax", "lines": "#c line.marker",
                       "bars": "#c rect", "svg": "#c"})
    _no_two_overlap(m["axis"])
    _no_two_overlap(m["marks"])
    assert len(m["lines"]) == 4
    # Six at one date: three named, the rest merged into one label (hover lists them).
    assert sum(1 for t in m["marks"] if "(2026-03-19)" in t["text"]) >= 3
    assert any(t["text"].endswith("+3 more playbooks") for t in m["marks"])
    [svg_box] = m["svg"]
    for mark in m["marks"]:
        assert svg_box["l"] <= mark["l"] and mark["r"] <= svg_box["r"] + 1, mark
        assert not any(overlaps(mark, b) for b in m["bars"] if b["r"] - b["l"] > 2), mark
        crossed = [ln for ln in m["lines"] if mark["l"] + 1 < ln["l"] < mark["r"] - 1
                   and ln["t"] < mark["b"] - 1]
        assert crossed == [], mark
