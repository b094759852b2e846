"""orf analyze --html in real headless Chromium: summary, legend, folding, contents by waste."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
from _browser import Elements, dump_dom, screenshot
from _trends_helpers import day, session_log
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.report.html import FOLD_AT, ROW_STYLES

TRACEBACK = "Traceback (most recent call last):\n" + "".join(
    f'  File "/home/dev/shop/lib/mod{i}.py", line {i}, in f{i}\n' for i in range(30)) + \
    "ModuleNotFoundError: No module named 'requests'"
"""A long error output: each of its rows must be folded."""


def _logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    # File order differs from waste order on purpose: 1, 3 and 0 wasted steps.
    for name, fails, error in (("a-two", 2, "ModuleNotFoundError: No module named 'x'"),
                               ("b-four", 4, TRACEBACK), ("c-clean", 0, "")):
        (logs / f"{name}.jsonl").write_text(session_log(f"sess-{name}", day(1), fails,
                                                        error=error))
    return logs


def _analyze(*args: str) -> str:
    result = CliRunner().invoke(main, ["analyze", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_timeline_summary_links_legend_folding_and_contents(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    page = tmp_path / "timeline.html"
    _analyze(str(logs), "--html", str(page))
    docs = [orjson.loads(line) for line in _analyze(str(logs), "--json").splitlines()]
    by_waste = sorted(docs, key=lambda d: -d["wasted_steps_total"])
    assert [d["session_id"] for d in by_waste] == ["sess-b-four", "sess-a-two", "sess-c-clean"]
    text = page.read_text()
    assert "<script" not in text

    html = dump_dom(page)
    dom = Elements(html)
    # Contents: sessions ordered by waste, each link landing on its section.
    toc = re.search(r'<table class="toc">(.*?)</table>', html, re.S)
    assert toc is not None
    assert re.findall(r'<a href="#s\d+"[^>]*>(sess-[\w-]+)</a>', toc.group(1)) == \
        [d["session_id"] for d in by_waste]
    # Every link (contents, finding summaries, strip cells) points at an existing element.
    links = dom.all("a")
    assert links and all(a["data-target"] != "missing" for a in links)
    summary_links = [a for a in links if re.fullmatch(r"#s\d+-step\d+", a["href"])]
    assert {a["data-target"] for a in summary_links} == {"tr"}
    # The summary of the four-failure session: its finding, its exact costs, its steps.
    b_four = next(d for d in docs if d["session_id"] == "sess-b-four")
    [finding] = b_four["findings"]
    n = [d["session_id"] for d in docs].index("sess-b-four")
    section = re.search(rf'<section id="s{n}">(.*?)</section>', html, re.S)
    assert section is not None
    row = re.search(r'<table class="findings">.*?<tr><td>1</td>(.*?)</tr>', section.group(1),
                    re.S)
    assert row is not None
    cells = re.findall(r'<td class="n">([^<]*)</td>', row.group(1))
    assert cells == [str(finding["wasted_steps"]), f"{finding['wasted_tokens']:,}",
                     f"{finding['wasted_seconds']:,.0f}"]
    assert re.findall(r'href="#s\d+-step(\d+)"', row.group(1)) == \
        [str(i) for i in finding["steps"]]
    # Legend: one swatch per row style; long outputs folded (closed) with their size.
    assert section.group(1).count("<ul class=\"legend\">") == 1
    assert len(re.findall(r"<li><i style", section.group(1))) == len(ROW_STYLES)
    folded = re.findall(r"<details><summary><code>([^<]*)</code> … \(([\d,]+) characters\)",
                        section.group(1))
    assert len(TRACEBACK) > FOLD_AT
    shown = f"Exit code 1\n{TRACEBACK}"  # as the tool result holds it
    assert folded == [("Exit code 1", f"{len(shown):,}")] * 4
    assert "<details open" not in html
    # A strip chart per session, one drawn cell per step.
    strips = {a["id"]: a for a in dom.all("svg", **{"class": "chart"})}
    assert set(strips) == {f"s{i}-strip" for i in range(3)}
    for i, d in enumerate(docs):
        assert int(strips[f"s{i}-strip"]["data-shapes"]) == d["steps"]
        width, height = (int(v) for v in strips[f"s{i}-strip"]["data-box"].split("x"))
        assert width > 700 and height > 20
    shot = screenshot(page, Path(os.environ.get("ORF_SCREENSHOT_DIR", tmp_path))
                      / "timeline.png", height=1600)
    assert shot.stat().st_size > 10_000


def test_one_session_has_no_contents(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_text(session_log("sess-one", day(1), 3))
    page = tmp_path / "t.html"
    _analyze(str(log), "--html", str(page))
    text = page.read_text()
    assert 'id="contents"' not in text and text.count("<section ") == 1
    assert text.count('<table class="findings">') == 1
