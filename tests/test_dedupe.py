from __future__ import annotations

from _mine_helpers import make_draft

from pipeline.config import Settings
from pipeline.model import Draft
from pipeline.stages.dedupe import (
    Known,
    dedupe,
    draft_signature,
    normalized_title,
    similarity,
)


def _known(exp_id: str = "EXP-20260101-0001", **kw: object) -> Known:
    d = make_draft()
    base = dict(title=d.title, description=d.description, trap=d.trap, insight=d.insight)
    base.update(kw)  # type: ignore[arg-type]
    return Known(id=exp_id, **base)  # type: ignore[arg-type]


def test_similarity_orders_near_duplicates_above_unrelated_text() -> None:
    a = "pytest fails with ModuleNotFoundError because requests is not installed"
    b = "pytest keeps failing with ModuleNotFoundError: requests not installed in venv"
    c = "git rebase conflict in the lockfile resolved by regenerating it"
    assert similarity(a, a) > 0.99
    assert similarity(a, b) > similarity(a, c)
    assert similarity(a, c) < 0.2


def test_signature_match_is_duplicate_even_with_different_text() -> None:
    known = [_known(signatures=frozenset({"b2:same"}), title="x", description="y",
                    trap="z", insight="w")]
    out = dedupe([make_draft("b2:same")], known)
    assert (out[0].outcome, out[0].target, out[0].reason) == (
        "duplicate", "EXP-20260101-0001", "signature")


def test_same_text_new_signature_is_duplicate_by_text() -> None:
    out = dedupe([make_draft("b2:other")], [_known(title="Install the missing test "
                                                          "dependencies, then rerun pytest")])
    assert out[0].outcome == "duplicate"
    assert out[0].target == "EXP-20260101-0001"
    assert out[0].reason.startswith("text ")


def test_unrelated_draft_is_new() -> None:
    other = _known(title="Resolve lockfile conflicts by regenerating",
                   description="Use when a rebase conflicts in package-lock.json.",
                   trap="Editing the lockfile by hand three times.",
                   insight="Generated files are regenerated, not merged.")
    out = dedupe([make_draft("b2:new")], [other])
    assert out[0].outcome == "new"
    assert out[0].target is None


def test_within_run_second_lookalike_duplicates_the_first() -> None:
    drafts = [make_draft("b2:a"), make_draft("b2:a", title="Install missing deps first")]
    out = dedupe(drafts, [])
    assert out[0].outcome == "new"
    assert (out[1].outcome, out[1].run_index, out[1].target) == ("duplicate", 0, None)


def test_uncertain_band_goes_to_the_backend_hook() -> None:
    partial = make_draft("b2:p", title="Install requests before running the fetcher tests",
                         insight="Check the environment before retrying a command.")
    known = [_known()]
    score = dedupe([partial], known)[0].score
    assert 0.3 < score < 0.95
    lo, hi = score - 0.1, score + 0.1

    class Judge:
        calls: list[str] = []

        def decide_duplicate(self, draft: object, k: Known) -> str:
            self.calls.append(k.id)
            return "duplicate"

    judge = Judge()
    out = dedupe([partial], known, duplicate=hi, related=lo, judge=judge)
    assert judge.calls == ["EXP-20260101-0001"]
    assert (out[0].outcome, out[0].reason.endswith("llm")) == ("duplicate", True)
    # Without the hook the uncertain band is "related" (written, linked).
    out = dedupe([partial], known, duplicate=hi, related=lo, judge=object())
    assert (out[0].outcome, out[0].target) == ("related", "EXP-20260101-0001")


def test_draft_signature_falls_back_to_title_hash() -> None:
    d = make_draft(provenance={})
    assert draft_signature(d).startswith("b2:")
    assert draft_signature(d) == draft_signature(make_draft(provenance={}))


def test_gemini_backend_settles_the_uncertain_band_through_the_fake_server() -> None:
    from google import genai
    from google.genai import types

    from pipeline.config import load_settings
    from pipeline.llm.registry import get_backend
    from pipeline.stages.dedupe import LlmDuplicateJudge, duplicate_judge
    from pipeline.testing.fake_gemini import FakeGemini, text_reply

    partial = make_draft("b2:p", title="Install requests before running the fetcher tests",
                         insight="Check the environment before retrying a command.")
    known = [_known()]
    score = dedupe([partial], known)[0].score
    with FakeGemini() as server:
        server.enqueue(text_reply('{"decision": "duplicate", "reason": "same lesson"}'))
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        backend = get_backend(load_settings({"backend": "gemini"}), None, client=client)
        judge = duplicate_judge(backend)
        assert isinstance(judge, LlmDuplicateJudge)
        out = dedupe([partial], known, duplicate=score + 0.1, related=score - 0.1, judge=judge)
        assert server.count(":generateContent") == 1
        assert "Playbook B (EXP-20260101-0001" in server.requests[-1].text
    assert (out[0].outcome, out[0].target) == ("duplicate", "EXP-20260101-0001")
    assert duplicate_judge(get_backend(load_settings({"backend": "heuristic"}))) is None


# ---- the title rule and the pinned thresholds ----

_READ_INSIGHT = ("The harness refuses to write a file it has not seen (or that changed since it "
                 "was read): this error means the file exists with content you have not looked "
                 "at. Read it, compare it with what you meant to write, then write or edit.")
_READ_TRAP = ("`edit packages/db/package.json` failed with:\n\n```text\nFile has not been "
              "read yet. Read it first before writing to it.\n```\n\nRetrying without "
              "changing the cause cost 1 wasted step, {tokens} tokens.")
_READ_DESC = ("Trigger when `edit` fails with `File has not been read yet. Read it first before "
              "writing to it.` (file not read before writing) on `packages/db/package.json`.")


def _lesson_draft(sig: str, title: str, trap: str, insight: str = _READ_INSIGHT,
                  description: str = _READ_DESC) -> Draft:
    return make_draft(sig, title=title, description=description, trap=trap, insight=insight)


def _as_known(draft: Draft, exp_id: str = "EXP-20260101-0009") -> Known:
    return Known(id=exp_id, title=draft.title, description=draft.description,
                 trap=draft.trap, insight=draft.insight)


def test_same_normalized_title_is_a_duplicate_whatever_the_text() -> None:
    known = [_known(title="`File has not been read yet`: read the existing file, then write")]
    other = make_draft("b2:fresh", title="File has NOT been read yet: Read the existing "
                                         "file, then write.",
                       trap="Something else entirely.", insight="Unrelated words here.")
    out = dedupe([other], known)
    assert (out[0].outcome, out[0].target, out[0].reason) == (
        "duplicate", "EXP-20260101-0001", "title")
    assert normalized_title("`A`: b, C.") == normalized_title("a b c")


def test_two_drafts_of_one_run_never_share_a_normalized_title() -> None:
    first = make_draft("b2:one", title="Read the file first")
    second = make_draft("b2:two", title="read the FILE first!", trap="x", insight="y",
                        description="z")
    out = dedupe([first, second], [])
    assert [d.outcome for d in out] == ["new", "duplicate"]
    assert (out[1].run_index, out[1].reason) == (0, "title")


def test_default_thresholds_on_near_duplicate_related_and_distinct_pairs() -> None:
    """Pins ``dedupe_duplicate`` / ``dedupe_related``: moving either past these real-shaped
    pairs (say duplicate 0.80 -> 0.97) fails here."""
    settings = Settings()
    base = _lesson_draft("b2:k", "Read the existing file before writing it",
                         _READ_TRAP.format(tokens="53,185"))
    # The same lesson from another session: other title words, other cost.
    near = _lesson_draft("b2:n", "Look at a file the harness says was not read yet before "
                                 "you write it", _READ_TRAP.format(tokens="12,003"))
    # Same harness rule, another symptom and file: the situation is shared, not the lesson.
    related = _lesson_draft(
        "b2:r", "Read the file again when Write says it was modified since it was read",
        "`write src/app.ts` failed with:\n\n```text\nFile has been modified since read, "
        "either by the user or by a linter.\n```\n\nA formatter rewrote it in between.",
        description="Trigger when `write` fails with `File has been modified since read` "
                    "(file not read before writing) on `src/app.ts`.")
    distinct = _lesson_draft(
        "b2:d", "Install the missing program instead of trying other launchers",
        "3 attempts failed, the last one `./node_modules/.bin/tsc --noEmit`, with:\n\n"
        "```text\ntsc: command not found\n```",
        insight="Command not found means the program is not installed where the shell looks; "
                "install it once, then rerun the command that failed.",
        description="Trigger when `tsc` fails with `tsc: command not found` (missing program).")
    known = [_as_known(base)]
    scores = {}
    for name, draft in (("near", near), ("related", related), ("distinct", distinct)):
        out = dedupe([draft], known, duplicate=settings.dedupe_duplicate,
                     related=settings.dedupe_related)[0]
        scores[name] = (out.outcome, round(out.score, 2))
    assert scores["near"][0] == "duplicate" and 0.80 <= scores["near"][1] < 0.97
    assert scores["related"][0] == "related" and 0.45 <= scores["related"][1] < 0.80
    assert scores["distinct"][0] == "new" and scores["distinct"][1] < 0.45
