"""``SessionSecrets.redact_values``: the shortcuts that skip work find what the full walk finds.

A session's step extras (many small dicts) are first dumped as JSON and searched in C
(``redact.quiet_json``); a call's arguments and text are walked, each string searched once.
Whatever the path, every planted secret goes, and objects with none come back as they were.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest

from pipeline.privacy import SessionSecrets, memory
from pipeline.privacy.hints import hyperscan

redact = importlib.import_module("pipeline.privacy.redact")  # the module, not the function

KEY = "sk-ant-api03-" + "Q7vLm2Xp9RtZ4wYb8NcK1dHf6JsG3uEa5oPi0qTl" + "-AbCdEfGh"
# "Aladdin:open sesame": the basic-auth context rule knows it; its hint (``basic`` then a blank
# then base64) is one the JSON escape of the tab would hide from a search of the dump.
BASIC_AFTER_TAB = "printf 'Basic\tQWxhZGRpbjpvcGVuIHNlc2FtZQ==' > header.txt"


Extras = list[dict[str, object]]


def _extras(n: int = 6) -> Extras:
    return [{"raw_tool": "Bash", "caller": f"c{i}", "duration": i * 1.5, "ok": True}
            for i in range(n)]


def _redacted(objs: Extras) -> list[object]:
    return SessionSecrets().redact_values(list(objs))


def test_quiet_extras_come_back_as_they_were() -> None:
    objs = _extras()
    out = _redacted(objs)
    assert out == objs
    assert all(a is b for a, b in zip(out, objs, strict=True))


@pytest.mark.parametrize("plant", [
    lambda objs: objs[3].update(note=f"using {KEY} now"),  # a key shape in a value
    lambda objs: objs[5].update(api_token="Zx81kQv0pL3mN7rT2wYb"),  # a secret-like key
    lambda objs: objs[1].update(cmd=BASIC_AFTER_TAB),  # a hint an escape would split
    lambda objs: objs[2].update(nested={"deep": [{"v": f"x\n{KEY}"}]}),  # nested, escaped
])
def test_a_secret_in_any_extra_is_redacted(plant: Callable[[Extras], None]) -> None:
    objs = _extras()
    plant(objs)
    text = repr(_redacted(objs))
    assert "[REDACTED:" in text
    assert KEY not in text and "Zx81kQv0pL3mN7rT2wYb" not in text
    assert "QWxhZGRpbjpvcGVuIHNlc2FtZQ" not in text


def test_the_dump_search_agrees_with_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same output with the JSON shortcut as with every object walked."""
    cases = []
    for extra in ({"note": f"k {KEY}"}, {"password": "hunter2hunter2x9"}, {"cmd": BASIC_AFTER_TAB},
                  {"x": 1}, {"path": "/tmp/a", "n": None}):
        objs = _extras()
        objs[4].update(extra)
        cases.append(objs)
    fast = [_redacted(objs) for objs in cases]
    monkeypatch.setattr(memory, "_MANY", 10**9)  # never dumped: always walked
    assert [_redacted(objs) for objs in cases] == fast


@pytest.mark.skipif(hyperscan is None, reason="the dump is searched with the fast extra only")
def test_quiet_json_says_quiet_only_when_it_can_prove_it() -> None:
    assert redact.quiet_json(_extras())
    assert not redact.quiet_json([{"api_key": "x"}])  # a hint in a key
    assert not redact.quiet_json([{"cmd": "a\nb"}])  # an escape: walked instead
    assert not redact.quiet_json([{1: "a"}])  # not a JSON object: walked instead
    assert not redact.quiet_json([{"n": 2**70}])
    assert not redact.quiet_json([{"s": "lone \ud800 surrogate"}])
    deep: dict[str, object] = {"v": "x"}
    for _ in range(300):  # deeper than orjson writes
        deep = {"d": deep}
    assert not redact.quiet_json([deep])


def test_without_hyperscan_nothing_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact._HINTS, "db", None)
    assert not redact.quiet_json(_extras())
    objs = _extras()
    objs[1].update(cmd=BASIC_AFTER_TAB)
    assert "QWxhZGRpbjpvcGVuIHNlc2FtZQ" not in repr(_redacted(objs))


def _secret_like_names() -> list[str]:
    """Names in the spellings code and configs use, made of secret words and others."""
    words = ["password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "key",
             "api", "access", "private", "auth", "credential", "credentials", "client",
             "session", "db", "signing", "master", "encryption", "base", "ssh", "pg"]
    names = set()
    for a in words:
        for b in words:
            for joined in (f"{a}_{b}", f"{a}-{b}", f"{a}.{b}", a + b.capitalize(), a + b):
                names.update({joined, joined.upper(), joined.capitalize()})
    return sorted(names)


def test_every_secret_like_key_holds_a_name_word() -> None:
    """A dump of extras is quiet only with no ``_NAME_WORDS`` word in it: that must mean no
    key is one whose value is checked as an assignment."""
    secret_like = [n for n in _secret_like_names() if redact._secret_name(n)]
    assert len(secret_like) > 1000
    assert [n for n in secret_like
            if not any(w in n.lower() for w in redact._NAME_WORDS)] == []
    for name in secret_like[::50]:
        assert not redact.quiet_json([{"v": "x"}] * 3 + [{name: "hunter2hunter2"}]), name


def test_a_value_under_a_secret_like_key_goes_when_the_rest_is_quiet() -> None:
    value = "Zx81kQv0pL3mN7rT2wYb"  # no hint in it: only its key says it is a secret
    for name in ("password", "DB_PASSWORD", "clientSecret", "api_key", "AUTH_TOKEN"):
        args = {"command": "ls -la", name: value, "cwd": "/work"}
        out = SessionSecrets().redact_values([args, "Listing the files."])
        assert value not in repr(out), name
        assert out[0]["command"] == "ls -la" and out[1] == "Listing the files."
        single = SessionSecrets().redact_value({name: value})
        assert value not in repr(single), name


GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
PASSWORD = "P@ssw0rd!2024xyz"


def test_a_password_next_to_a_token_under_a_secret_like_key_goes_with_it() -> None:
    """A shape found inside the value no longer keeps the rest: what is left is checked too."""
    value = f"{GHP} {PASSWORD}"
    assert PASSWORD not in repr(redact.redact_value({"DB_PASSWORD": value}))
    memory = SessionSecrets()
    assert PASSWORD not in repr(memory.redact_value({"DB_PASSWORD": value}))
    assert PASSWORD not in memory.redact(f"login with {PASSWORD} now")  # learned, whole
    # What is left beside the shape is no secret: it stays readable.
    assert redact.redact_value({"token": f"Bearer {GHP}"}) == {
        "token": "Bearer [REDACTED:github-token]"}
