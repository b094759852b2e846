"""The Gemini path sees the lesson: through the real SDK against the fake Gemini server."""

from __future__ import annotations

import json
from pathlib import Path

from _lesson_helpers import CWD, bash, claude_log, scan_log, tool
from _llm_helpers import (  # noqa: F401
    STORE,
    fake,
    fast_retry_waits,
    gemini_backend,
    gemini_settings,
    open_ledger,
)

from pipeline.config import Settings
from pipeline.stages.analysis import draft_session, judge_session
from pipeline.testing.fake_gemini import FakeGemini

OLD = "    total = sum(item.price for item in self.items)"
HELD = "        total = sum(item.price for item in self.items)"


def _failed_edit_session(tmp_path: Path) -> Path:
    edit = tool("Edit", {"file_path": f"{CWD}/app/cart.py", "old_string": OLD,
                         "new_string": OLD.replace("item.price", "item.price * item.qty")},
                f"String to replace not found in file.\nString: {OLD}", True)
    return claude_log(tmp_path / "edit.jsonl", "edde0000-0000-4000-8000-000000000001", [
        edit, edit, edit,
        tool("Read", {"file_path": f"{CWD}/app/cart.py"},
             f"     1→class Cart:\n     2→    def total(self):\n     3→{HELD}\n"),
        tool("Edit", {"file_path": f"{CWD}/app/cart.py", "old_string": HELD,
                      "new_string": HELD.replace("item.price", "item.price * item.qty")},
             f"The file {CWD}/app/cart.py has been updated successfully."),
        bash("pytest tests/test_cart.py", "4 passed in 0.30s"),
    ])


def test_draft_request_for_a_failed_edit_carries_the_error_and_the_edit_difference(
        fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    log = _failed_edit_session(tmp_path)
    res = scan_log(log)
    [sess] = [s for s in res.sessions if s.trajectory is not None]
    assert sess.trajectory is not None
    with open_ledger(tmp_path) as ledger:
        backend, settings = gemini_backend(fake, ledger), gemini_settings()
        verdict = judge_session(sess.trajectory, sess.findings, backend, settings)
        result = draft_session(sess.trajectory, sess.findings, verdict, backend, STORE,
                               settings)
    drafts = [json.loads(r.text) for r in fake.requests if r.path.endswith(":generateContent")
              and "drafts" in r.json["generationConfig"]["responseJsonSchema"]["properties"]]
    assert len(drafts) == 1
    prompt = drafts[0]["contents"][0]["parts"][0]["text"]
    # The full error text (both lines), not its first word or the harness wrapper.
    assert f"String to replace not found in file.\nString: {OLD}" in prompt
    assert "<tool_use_error>" not in prompt
    # The edit difference: what the agent tried to replace vs what the file held.
    assert (f"tried: {OLD}\nfile held: {HELD}\ndifference: indentation differs: the old text "
            "has 4 space(s), the file has 8 space(s)") in prompt
    assert "Error class: edit_not_found (a tool-usage rule of the agent harness)" in prompt
    assert "The attempt that worked (same target):\n<<<LOG\nedit app/cart.py\nLOG>>>" in prompt
    assert "Then passed:\n<<<LOG\npytest tests/test_cart.py\nLOG>>>" in prompt
    assert "/Users/" not in prompt
    # The reply built from that lesson passes validation and names the lesson's class.
    assert len(result.drafts) == 1 and result.failures == []
    assert result.drafts[0].provenance.wire()["lesson"]["class"] == "edit_not_found"


def test_a_generic_principle_or_a_path_without_commands_is_sent_back(
        fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    from pipeline.llm.backend import LLMReply
    from pipeline.stages.draft import lesson_findings, parse_draft_reply

    log = _failed_edit_session(tmp_path)
    res = scan_log(log)
    [sess] = [s for s in res.sessions if s.trajectory is not None]
    assert sess.trajectory is not None
    chosen, lessons, _ = lesson_findings(sess.trajectory, sess.findings, 3)
    backend = gemini_backend(fake, None)
    good = {"finding": 0, "title": "Re-read the file before retrying a rejected edit",
            "description": "Edit says String to replace not found in file.",
            "domain": "agent-tool-usage", "keywords": ["edit", "indentation", "claude-code"],
            "complexity": "low", "objective": "Apply an edit.", "trap": "The edit failed.",
            "insight": "An edit fails when its old text differs from the file, often only in "
                       "indentation; copy the lines from a fresh read.",
            "validated_path": "1. `read app/cart.py`\n2. `edit app/cart.py`",
            "checklist": ["`pytest tests/test_cart.py` passes"]}

    def reply(**changes: str) -> str | None:
        text = json.dumps({"drafts": [{**good, **changes}]})
        return parse_draft_reply(LLMReply(text=text), sess.trajectory, chosen, None,  # type: ignore[arg-type]
                                 backend, lessons, settings=Settings())[1]

    assert reply() is None
    generic = reply(insight="Re-running an unchanged command cannot produce a different "
                            "result; find out what must change before running it again.")
    assert generic is not None and "generic principle" in generic
    causeless = reply(insight="Work carefully and think before you act again.")
    assert causeless is not None and "names no cause" in causeless
    commandless = reply(validated_path="1. Read the file.\n2. Try again.")
    assert commandless is not None and "validated path has no command" in commandless
