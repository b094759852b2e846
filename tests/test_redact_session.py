"""Redaction at the source: every parsed step is free of planted secrets, cut or whole.

The corpus plants each secret kind and each context in Claude Code, Codex, mini-swe-agent,
Gemini CLI and OpenHands logs; parsing goes through discovery and the real adapters, so these
tests see exactly what every later stage (detectors, prompts, reports, the store) sees.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from _secret_corpus import Corpus, make_context_secrets, make_memory_secrets, write_corpus

from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.formats.steps import set_output, text_step, tool_step
from pipeline.model import Trajectory
from pipeline.privacy import SessionSecrets, redact


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return write_corpus(tmp_path_factory.mktemp("logs"))


def _parsed(corpus: Corpus) -> list[Trajectory]:
    root = corpus.files[0].parent.parent
    issues: list = []
    out = []
    for src in discover([root], issues=issues):
        out.extend(parse_source(src, ParseContext()))
    assert [i for i in issues if i.fatal] == []
    return out


def _dump(traj: Trajectory) -> str:
    return json.dumps(asdict(traj), default=str, ensure_ascii=False)


def test_every_format_of_the_corpus_is_parsed(corpus: Corpus) -> None:
    formats = sorted(t.source.format for t in _parsed(corpus))
    assert formats == ["claude-code", "codex", "gemini-cli", "mini-swe-agent", "openhands"]


def test_parsed_sessions_hold_no_planted_secret_nor_fragment(corpus: Corpus) -> None:
    trajs = _parsed(corpus)
    claude = next(t for t in trajs if t.source.format == "claude-code")
    assert len(claude.subagents) == 1  # the sub-agent's bare mentions are checked too
    for traj in trajs:
        text = _dump(traj)
        assert corpus.leaks(text) == [], traj.source.format
        assert text.count("[REDACTED:") >= 10, traj.source.format


def test_each_context_is_redacted_in_every_agent_format(corpus: Corpus) -> None:
    """Every context line was planted in the four formats; each yields its own placeholder."""
    ctxs = make_context_secrets(7 + 4)
    by_format = {t.source.format: _dump(t) for t in _parsed(corpus)}
    for fmt in ("claude-code", "codex", "gemini-cli", "openhands"):
        kinds = {p.kind for p in ctxs}
        missing = [k for k in kinds if f"[REDACTED:{k}]" not in by_format[fmt]]
        assert missing == [], fmt


def test_a_secret_learned_late_is_replaced_in_earlier_steps_and_sub_agents(
    corpus: Corpus,
) -> None:
    memory = make_memory_secrets(7 + 6)
    claude = next(t for t in _parsed(corpus) if t.source.format == "claude-code")
    # The task mentions the password bare, before the env dump that makes it a secret.
    assert claude.task is not None and "Deploy the app with [REDACTED:password] on" in claude.task
    assert claude.steps[0].output.startswith("Deploy the app with [REDACTED:password] on the")
    sub = claude.subagents[0]
    texts = [s.output for s in sub.steps]
    assert texts == ["Check the release: the token ends in [REDACTED:secret-assignment].",
                     "Use [REDACTED:password] again."]
    assert memory[1].secret[-14:] not in _dump(claude)


def test_redaction_happens_before_the_output_cut() -> None:
    key = "sk-" + "ant-api03-" + "Q7" * 40 + "x9"
    ctx = ParseContext(output_max_chars=400)
    # No whitespace to cut at: the head ends 180 characters in, inside the key.
    body = "x" * 100 + f'"ANTHROPIC_API_KEY":"{key}",' + "y" * 2000
    step = tool_step(0, "c0", "Bash", {"command": "env"}, body, ctx, exit_code=0)
    assert step.output.startswith("x" * 100 + '"ANTHROPIC_API_KEY":"[REDACTED:anthropic-api-key]')
    assert "Q7Q7Q7Q7Q7Q7" not in step.output and "Q7x9" not in step.output
    assert step.output_len == len(body)


def test_error_line_is_taken_from_redacted_text() -> None:
    ctx = ParseContext()
    value = "6fe45a8b9c0d1e2f3a4b5c6d7e8f9a0b-us21"
    line = "Error: rejected " + "o" * 270 + f" MAILCHIMP_API_KEY='{value}'"
    step = tool_step(0, "c0", "Bash", {"command": "./deploy.sh"}, "", ctx)
    set_output(step, line + "\nexit 1", ctx, exit_code=1)
    assert step.error_signature is not None
    assert "6fe45a8b9c0d" not in step.error_signature
    assert "6fe45a8b9c0d" not in step.output


def test_args_and_text_are_redacted_and_remembered() -> None:
    ctx = ParseContext()
    pw = "Zr8pQ2xv!Lm4"
    step = tool_step(0, "c0", "Bash", {"command": f"sshpass -p '{pw}' ssh h"}, "", ctx,
                     text=f"I will log in with sshpass -p {pw}")
    assert step.args == {"command": "sshpass -p '[REDACTED:password]' ssh h"}
    assert pw not in step.action_key and pw not in step.text
    later = text_step(1, "m1", "message", f"The login {pw} worked.", ctx)
    assert later.output == "The login [REDACTED:password] worked."


def test_memory_replaces_fragments_but_not_unrelated_text() -> None:
    mem = SessionSecrets()
    token = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    assert mem.redact(f"RELEASE_TOKEN={token}") == "RELEASE_TOKEN=[REDACTED:secret-assignment]"
    assert mem.apply(f"tail {token[-13:]} end") == "tail [REDACTED:secret-assignment] end"
    assert mem.apply(f"head {token[:12]}") == "head [REDACTED:secret-assignment]"
    assert mem.apply(f"short {token[5:16]} piece") == f"short {token[5:16]} piece"  # 11 chars
    assert mem.apply("nothing to see") == "nothing to see"


def test_stateless_redact_stays_idempotent_on_the_corpus(corpus: Corpus) -> None:
    for f in corpus.files:
        once = redact(f.read_text())
        assert redact(once) == once, f.name


def test_memory_learns_nothing_from_placeholders_or_short_values() -> None:
    mem = SessionSecrets()
    mem.redact("DB_PASSWORD=abc12")  # too short to be replaced everywhere
    mem.redact("api_key: [REDACTED:high-entropy-secret]")
    assert len(mem) == 0


def test_corpus_files_cover_every_planted_value(corpus: Corpus) -> None:
    raw = "".join(f.read_text() for f in corpus.files)
    raw += "".join(p.read_text() for p in corpus.files[0].with_suffix("").rglob("*.jsonl"))
    missing = [p.kind for p in corpus.plants
               if p.secret not in raw and json.dumps(p.secret)[1:-1] not in raw]
    assert missing == []


def test_parsed_texts_keep_their_meaning(corpus: Corpus) -> None:
    """Placeholders never swallow the text after the value."""
    claude = next(t for t in _parsed(corpus) if t.source.format == "claude-code")
    commands = [s.args.get("command") for s in claude.steps if s.kind == "tool"]
    outputs = [s.output for s in claude.steps if s.kind == "tool"]
    assert ("mysqldump --host db.internal --user app --password [REDACTED:credential-flag] "
            "shop > dump.sql") in outputs
    assert "sshpass -p '[REDACTED:password]' ssh deploy@10.0.0.5 'systemctl restart app'" in (
        commands)


def test_paths_are_unchanged(tmp_path: Path) -> None:
    ctx = ParseContext()
    out = text_step(0, "m0", "message", "see /home/dev/app/src/secret_key_store.py:42", ctx)
    assert out.output == "see /home/dev/app/src/secret_key_store.py:42"
