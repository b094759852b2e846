from __future__ import annotations

from _mine_helpers import make_draft

from pipeline.stages.dedupe import Known, dedupe, draft_signature, similarity


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
    out = dedupe([make_draft("b2:other")], [_known()])
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
    from pipeline.llm.backend import get_backend
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
