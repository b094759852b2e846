"""Open a page in real headless Chromium and read back what its layout engine measured.

The pages under test hold no script; the test adds one (to a copy) that records, on each
``svg.chart``, the bounding box of its drawn content and the number of shapes with a non-empty
box, and on each element the id of its target. ``--dump-dom`` then returns the DOM after
layout, so the assertions are about what the browser drew, not about the HTML text.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_PROBE = """<script>
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.getBBox();
  let shapes = 0;
  for (const el of svg.querySelectorAll('rect,line,path,circle,polyline')) {
    const b = el.getBoundingClientRect();
    if (b.width > 0 || b.height > 0) shapes++;
  }
  svg.setAttribute('data-box', Math.round(box.width) + 'x' + Math.round(box.height));
  svg.setAttribute('data-shapes', shapes);
}
for (const a of document.querySelectorAll('a[href^="#"]')) {
  const target = document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));
  a.setAttribute('data-target', target ? target.tagName.toLowerCase() : 'missing');
}
document.body.setAttribute('data-probed', 'yes');
</script>"""


def browser() -> str:
    """The headless browser's path, or skip the test saying how to get one."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on PATH (install it with `apt-get install chromium`; "
                ".ci/run does this as root)")


def _run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-dev-shm-usage", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def dump_dom(page: Path) -> str:
    """The DOM of ``page`` (a copy with the probe script) after Chromium laid it out."""
    probed = page.with_name(page.stem + ".probe.html")
    text = page.read_text(encoding="utf-8")
    probed.write_text(text.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    proc = _run(["--virtual-time-budget=5000", "--dump-dom", probed.as_uri()])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'data-probed="yes"' in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


_MEASURE = """<script>
const out = {};
for (const [name, sel] of Object.entries(%s)) {
  out[name] = [...document.querySelectorAll(sel)].map(el => {
    const b = el.getBoundingClientRect();
    return {text: el.innerText ?? el.textContent, l: b.left, t: b.top, r: b.right,
            b: b.bottom, id: el.id, cls: el.getAttribute('class') || '',
            fill: el.getAttribute('fill') || '', open: el.open === true};
  });
}
const pre = document.createElement('pre');
pre.id = 'orf-measure';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def measure(page: Path, selectors: dict[str, str], width: int = 1400,
            height: int = 1000) -> dict[str, list[dict[str, Any]]]:
    """Boxes (``l t r b`` in CSS pixels) and rendered text of the elements each CSS selector
    matches, as Chromium laid out ``page`` in a ``width`` x ``height`` window.

    ``text`` is ``innerText`` (what a reader sees: a closed ``<details>`` shows its summary
    only), or ``textContent`` for SVG elements.
    """
    probed = page.with_name(page.stem + ".measure.html")
    script = _MEASURE % json.dumps(selectors)
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"),
                      encoding="utf-8")
    proc = _run([f"--window-size={width},{height}", "--virtual-time-budget=5000",
                 "--dump-dom", probed.as_uri()])
    assert proc.returncode == 0, proc.stderr[-2000:]
    start = proc.stdout.find('<pre id="orf-measure">')
    assert start >= 0, proc.stderr[-2000:]
    body = proc.stdout[start + len('<pre id="orf-measure">'):]
    found: dict[str, list[dict[str, Any]]] = json.loads(html.unescape(body[:body.find("</pre>")]))
    return found


def overlaps(a: dict[str, Any], b: dict[str, Any], slack: float = 0.5) -> bool:
    """True when two measured boxes intersect (by more than ``slack`` pixels each way)."""
    return (a["l"] + slack < b["r"] and b["l"] + slack < a["r"]
            and a["t"] + slack < b["b"] and b["t"] + slack < a["b"])


def screenshot(page: Path, out: Path, width: int = 1000, height: int = 2200) -> Path:
    """A PNG of ``page`` as Chromium draws it."""
    proc = _run([f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()])
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return out


class Elements(HTMLParser):
    """Every start tag of a document as ``(tag, attrs)``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def all(self, tag: str, **match: str) -> list[dict[str, Any]]:
        """Attributes of each ``tag`` whose attributes include ``match``."""
        return [a for t, a in self.tags if t == tag
                and all(a.get(k.replace("_", "-")) == v for k, v in match.items())]

    def ids(self) -> set[str]:
        """Every id in the document."""
        return {a["id"] for _t, a in self.tags if a.get("id")}
