"""`orf mcp` as a subprocess, driven by the mcp SDK's stdio client: same text as the verbs."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from _agents_helpers import ORF_SCRIPT, build_store, run_cli

mcp_client = pytest.importorskip("mcp.client.stdio", reason="needs the mcp SDK ([agents])")
from mcp import Client  # noqa: E402

TOOLS = {"list_categories", "get_frontmatter", "read_experience", "search_experiences",
         "learn_sessions"}
"""The read-only tools; ``submit_drafts`` writes what the verifier accepts."""


def drive(store: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], list[Any]]:
    params = mcp_client.StdioServerParameters(
        command=str(ORF_SCRIPT), args=["mcp", "--store", str(store)], env=dict(os.environ))

    async def session() -> tuple[dict[str, Any], list[Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            tools = {t.name: t for t in listed.tools}
            results = [await client.call_tool(name, args) for name, args in calls]
            return tools, results

    return anyio.run(session)


def text(result: Any) -> str:
    assert [c.type for c in result.content] == ["text"]
    return str(result.content[0].text)


def check_store(store: Path) -> None:
    categories = [line.split("- id: ")[1] for line in run_cli(
        "list-categories", "--store", store)[1].splitlines() if line.startswith("- id: ")]
    category = categories[0]
    frontmatter = run_cli("get-frontmatter", "--category", category, "--store", store)[1]
    exp_id = next(line.split("- id: ")[1] for line in frontmatter.splitlines()
                  if line.startswith("- id: "))
    title = next(line.split("title: ", 1)[1] for line in frontmatter.splitlines()
                 if line.startswith("  title: "))
    tools, results = drive(store, [
        ("list_categories", {}),
        ("get_frontmatter", {"category": category}),
        ("read_experience", {"id": exp_id}),
        ("search_experiences", {"query": title, "limit": 2}),
        ("read_experience", {"id": "EXP-1"}),
        ("get_frontmatter", {"category": "no-such-category"}),
    ])
    assert set(tools) == TOOLS | {"submit_drafts"}
    assert all(tools[t].annotations.read_only_hint for t in TOOLS)
    assert not tools["submit_drafts"].annotations.read_only_hint
    assert set(tools["search_experiences"].input_schema["properties"]) == {"query", "limit"}
    listed, front, read, found, bad_id, bad_category = results
    assert text(listed) == run_cli("list-categories", "--store", store)[1]
    assert text(front) == frontmatter
    assert text(read) == run_cli("read-experience", "--id", exp_id, "--store", store)[1]
    searched = run_cli("search", title, "--limit", "2", "--store", store)[1]
    assert text(found) == searched
    assert searched.startswith(f"results:\n- id: {exp_id}\n")
    assert not any(r.is_error for r in (listed, front, read, found))
    assert bad_id.is_error and "'EXP-1'" in text(bad_id)
    assert bad_category.is_error
    assert "category 'no-such-category' not found" in text(bad_category)


def test_mcp_on_a_store_built_here(tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    build_store(store)
    check_store(store)


def test_mcp_on_the_orf_reference_store(orf_reference: Path) -> None:
    check_store(orf_reference)


def test_mcp_needs_a_store(tmp_path: Path) -> None:
    code, _, err = run_cli("mcp", "--store", tmp_path / "none")
    assert code == 1
    assert err.startswith(f"Error: no ORF store at {tmp_path / 'none'}")


def test_mcp_without_the_sdk_says_what_to_install(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    store = tmp_path / "experiences"
    build_store(store)
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    code, _, err = run_cli("mcp", "--store", store)
    assert (code, err) == (1, "Error: orf mcp needs the mcp SDK: pip install "
                              "'orf-pipeline[agents]' (or pip install mcp)\n")


def test_mcp_learn_then_submit_writes_what_the_log_proves(tmp_path: Path) -> None:
    import json

    from test_skill import ALPHA, agent_drafts

    store = tmp_path / "experiences"
    build_store(store)
    wrong = agent_drafts()
    wrong[0]["drafts"][0]["evidence"]["fix_steps"] = [3]  # type: ignore[index]
    _, (learned, bad, good) = drive(store, [
        ("learn_sessions", {"path": str(ALPHA)}),
        ("submit_drafts", {"drafts_json": json.dumps(wrong)}),
        ("submit_drafts", {"drafts_json": json.dumps(agent_drafts())}),
    ])
    assert "#4 [bash] pytest -x tests/ => exit 1" in text(learned)
    assert "## How to hand back your drafts" in text(learned)
    assert text(bad) == ("rejected: Install the module pytest cannot import before running it "
                         "again: cited_steps: fix step #3 does not come after trap step #4")
    assert re.fullmatch(r"written EXP-\d{8}-\d{4}: Install the module pytest cannot import "
                        r"before running it again: related to EXP-20260502-0001", text(good))
