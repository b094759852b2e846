"""The fast redaction path finds exactly what the slow one finds.

Three ways to scan, one answer: the ``fast`` extra (hyperscan says which rules a text calls
for), the pure-Python hint search, and every rule run everywhere with no hint, gate or anchor
(``_FULL``). The hints, gates and anchors only skip work; these tests break if one skips a
rule or a position that holds a hit.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from _secret_corpus import make_secrets, write_corpus
from test_redact import FIXTURES_AND_CODE, ORDINARY

from pipeline.privacy import SessionSecrets, redact, scan
from pipeline.privacy.anchors import anchored, occurrences, search_from
from pipeline.privacy.hints import HintSearch

ENGINE = sys.modules["pipeline.privacy.redact"]
HAS_FAST = ENGINE._HINTS.db is not None

# Texts chosen to sit on the edges the shortcuts rely on: a keyword at the very start or
# end, ``api key`` spellings, non-ASCII text (the hint pass reads UTF-8 bytes), characters
# whose case folding reaches ASCII (Kelvin sign, dotted and dotless i, long s), a lone
# surrogate, JSON escapes before a token, and hints with nothing after them.
EDGES = [
    "key", "token: ", "password", "api_key = 'Zq8vL2mWx4pR7tYu'", "API KEY Zq8vL2mWx4pR7tYu9",
    "apikey: Zq8vL2mWx4pR7tYu9", "x-api-key: Zq8vL2mWx4pR7tYu9aB", "curl -u admin:Zq8vL2mWx4p",
    "curl\u00a0-u\u00a0admin:Zq8vL2mWx4p http://h", "--password=Zq8vL2mWx4p --token abc",
    "Ke\u0443: v", "\u212aey = \"Zq8vL2mWx4pR7tYu9\"", "pa\u017fsword = \"Zq8vL2mWx4pR7tYu9\"",
    "\u0130 token: Zq8vL2mWx4pR7tYu9", "\u0131nvalid token tried: Zq8vL2mWx4pR7tYu9aBcD",
    "caf\u00e9 password: Zq8vL2mWx4pR7tYu9 \u2192 ok", "emoji \U0001f511 secret=Zq8vL2mWx4pR7tYu9",
    "lone \ud83d surrogate token=Zq8vL2mWx4pR7tYu9", "line\\nghp_" + "a1B2c3D4" * 5,
    "x" * 70 + ".abcdef." + "y" * 30, "AC" + "0123456789abcdef" * 2,
    "SK" + "0123456789ABCDEF" * 2, "postgres://app:Zq8vL2mWx4p@db:5432/app",
    "https://user:p\u00e4ss\u00f6rd12@example.com/x",
    "machine api.example.com login me password s3cr3tZq8v",
    "MNO" + "a" * 22 + ".abcdef." + "b" * 30, "N" + "\u0661" * 23 + ".abcdef." + "c" * 27,
    # a non-ASCII digit between the dots: 6 characters, more bytes (hyperscan reads bytes)
    "N" + "a" * 23 + ".ab\u0661def." + "c" * 27,
    # one assignment per keyword the anchors start from
    "SESSION_SALT=Zq8vL2mWx4pR7tYu9aB", "DB_PWD=Zq8vL2mWx4p", "APP_CRED=Zq8vL2mWx4pR7tYu9aB",
    "x_auth = 'Zq8vL2mWx4pR7tYu9aB'", "client_secret: Zq8vL2mWx4pR7tYu9", "ghToken=Zq8vL2mWx4pR",
    "sshpass -p Zq8vL2mWx4p ssh me@h", "the signing key is `Zq8vL2mWx4pR7tYu9aB`",
    # the shapes hyperscan tests instead of a common word
    "docker login -u me -p Zq8vL2mWx4p reg.io", "mysql -uroot -pZq8vL2mWx4p db",
    "curl -H 'Authorization: Basic dXNlcjpaOHF2TDJtV3g0cA=='", "auth = BASIC\tdXNlcjpaOHF2",
    "machine h.example.com\n  login me\n  password Zq8vL2mWx4p",
    "Authorization: token Zq8vL2mWx4pR7tYu9", 'authorization\\": \\"digest Zq8vL2mWx4pR7tYu9',
    # the near-word gate: the character before and after the word, the 40-character window
    "KEY:Zq8vL2mWx4pR7tYu9aBcD", "(api key Zq8vL2mWx4pR7tYu9aBcD)", "api_key Zq8vL2mWx4pR7tYu9aBcD",
    "\u00e9token = 'Zq8vL2mWx4pR7tYu9aBcD'", "\u00e9 secret \u00e9 Zq8vL2mWx4pR7tYu9aBcD",
    "secret\u00e9Zq8vL2mWx4pR7tYu9aBcD", "auth\u00a0Zq8vL2mWx4pR7tYu9aBcD",
    "token\u2192 Zq8vL2mWx4pR7tYu9aBcD", "passphrase\t(`Zq8vL2mWx4pR7tYu9aBcD`)",
    "Authentication failed: Zq8vL2mWx4pR7tYu9aBcD", "credentials=Zq8vL2mWx4pR7tYu9aBcD",
    "token " + "ab " * 13 + "Zq8vL2mWx4pR7tYu9aBcD",  # 40 characters between: in the window
    "token " + "ab " * 14 + "Zq8vL2mWx4pR7tYu9aBcD",  # 43: out of it
    "token " + "\u00e9b " * 13 + "Zq8vL2mWx4pR7tYu9aBcD", "/token Zq8vL2mWx4pR7tYu9aBcD",
    "\u00e9secret (Zq8vL2mWx4pR7tYu9aBcD)", "secret\u00e9 Zq8vL2mWx4pR7tYu9aBcD",
    # context rules tried only where their first word is (``Context.starts``)
    "log\nEnter password: Zq8vL2mWx4p", "Enter passphrase: Zq8vL2mWx4p", "x\npassword: Zq8vL2mW",
    "[sudo] password for me: Zq8vL2mWx4p", "me@host's password: Zq8vL2mWx4p\n",
    "Enter passphrase for key '/home/me/.ssh/id': Zq8vL2mWx4p",
    "Password for 'https://me@github.com': Zq8vL2mWx4p",
    '{"auths": {"r.io": {"auth": "dXNlcjpaOHF2TDJtV3g0cA=="}}}',
    '{\\"auth\\": \\"dXNlcjpaOHF2TDJtV3g0cA==\\"}', '"IdentityToken": "Zq8vL2mWx4pR7tYu9aB"',
    '\\"registrytoken\\": \\"Zq8vL2mWx4pR7tYu9aB\\"',
    # credential flags: the secret word after ``-`` or ``_``, then ``=`` or a blank
    "run --db-password=Zq8vL2mWx4p", "x --API_KEY Zq8vL2mWx4pR", "--client-secret\tZq8vL2mWx4p",
    "--my_app-auth-token=Zq8vL2mWx4p", "x--password=Zq8vL2mWx4p", "--password-stdin Zq8vL2mWx4p",
    "--passphrase 'Zq8vL2mWx4p'", "--credentials=Zq8vL2mWx4p", "---password=Zq8vL2mWx4p",
    "--db_password=Zq8vL2mWx4p",
]


def _texts(tmp_path: Path) -> list[str]:
    corpus = write_corpus(tmp_path)
    texts = [f.read_text() for f in corpus.files] + [p.line for p in corpus.plants]
    texts += [p.line for p in make_secrets()] + ORDINARY + FIXTURES_AND_CODE + EDGES
    # Each plant inside prose, code and a file view, so its rule is found mid-text too.
    texts += [f"Note: {p.line} was set.\n   12\u2192    {p.line}\n" for p in corpus.plants]
    return texts


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ENGINE._HINTS, "db", None)


def test_every_rule_everywhere_finds_what_the_shortcuts_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _texts(tmp_path)
    fast = [scan(t) for t in texts]
    assert sum(len(h) for h in fast) > 200
    monkeypatch.setattr(ENGINE, "_FULL", True)
    assert [scan(t) for t in texts] == fast


def test_slow_path_gives_byte_identical_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``fast`` extra changes speed only: the pure-Python hint search redacts the same."""
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    texts = _texts(tmp_path)
    fast = [redact(t) for t in texts]
    _slow(monkeypatch)
    assert [redact(t) for t in texts] == fast
    assert sum(t.count("[REDACTED:") for t in fast) > 200


def test_real_samples_redact_the_same_on_both_paths(
    shared_trajectories: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line of every sample (at most its first 256 KB): both paths give the same text."""
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    lines = []
    for path in sorted(p for p in shared_trajectories.rglob("*") if p.is_file()):
        head = path.read_bytes()[:256_000].decode("utf-8", "replace")
        lines += head.splitlines()
    assert lines
    fast = [scan(t) for t in lines]
    _slow(monkeypatch)
    assert [scan(t) for t in lines] == fast


def test_hints_of_both_engines_agree_on_words() -> None:
    """Plain words are found exactly: as ``in text.lower()`` finds them."""
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    search = HintSearch(["pass", "token", "key", "cred"], [])
    for text in ["Pass the TOKEN", "no hint here", "\u212aey pass", "caf\u00e9 CRED k-ey",
                 "lone \ud83d pass", "pa\u017fs \u0130 key"]:
        found = search.find(text)[0]
        # The pure-Python engine stands in for a gate it cannot test by reporting it.
        assert found - search.gates == search.search(text.lower()) - search.gates, text


def test_words_of_gated_rules_are_reported_only_with_a_gate() -> None:
    """The keywords are no hint alone: hyperscan reports them all with a gate, or none."""
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    search = HintSearch(["pass", "key", "bearer"], [], with_gates=["pass", "key"])
    assert search.find("the KEY")[0] == frozenset()
    assert search.find("bearer only")[0] == {"bearer"}
    assert {"~assign", "pass", "key"} <= search.find("the key: Zq8vL2mWx4p")[0]
    assert search.search("the key") - search.gates == {"key"}  # the other engine is exact


def test_session_memory_gives_the_same_text_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _texts(tmp_path)
    memory = SessionSecrets()
    fast = [memory.redact(t) for t in texts]
    _slow(monkeypatch)
    memory = SessionSecrets()
    assert [memory.redact(t) for t in texts] == fast


def test_anchored_matches_are_finditer_matches() -> None:
    import re

    pattern = re.compile(r"(?:key|token)\s*=\s*(\w+)")
    text = "key=a token = bb keytoken=c xkey= d key"
    starts = occurrences(text, ("key", "token"))
    assert starts == [0, 6, 17, 20, 29, 36]
    assert [m.span() for m in anchored(pattern, text, starts)] == [
        m.span() for m in pattern.finditer(text)]
    m = search_from(pattern, text, starts, 7)
    assert m is not None and m.group(1) == "c"
    assert search_from(pattern, text, starts, 37) is None


def test_threads_scan_at_once() -> None:
    """The Gemini client screens requests from several threads: each has its own scratch."""
    import threading

    text = 'cfg password = "Zq8vL2mWx4pR7tYu9" and ' * 300
    want = scan(text)
    assert len(want) == 300
    results: list[object] = []

    def work() -> None:
        try:
            results.extend(scan(text) == want for _ in range(15))
        except Exception as exc:  # noqa: BLE001 - the failure to report is any error
            results.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 90


def test_start_offsets_are_the_offsets_str_find_gives() -> None:
    """One hyperscan pass gives every offset of each pattern, overlapping ones too."""
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    words = ("pass", "key", "ss")
    search = HintSearch(["pass"], [], tuple((i, re.escape(w), len(w))
                                             for i, w in enumerate(words)))
    for text in ["Pass the KEY, passpass keykey", "no anchor here", "sss pASSs key",
                 "key" * 5, ""]:
        got = search.starts(text)
        assert got == [occurrences(text.lower(), (w,)) for w in words], text
    # Offsets of a non-ASCII text are not its bytes': without them the caller finds them.
    assert search.starts("caf\u00e9 key") is None
    for text in ["caf\u00e9 KEY pass \U0001f511key", "\u00e9" * 9 + "sss", "lone \ud83d pass",
                 "\u2192key\u2192", "\u00e9\u00e9"]:
        got = search.starts(text, text.encode("utf-8", "surrogatepass"))
        assert got == [occurrences(text.lower(), (w,)) for w in words], text


# Pieces of text around the keywords: what may follow one (separators, quotes, word
# characters, ``/``, a non-ASCII letter or symbol, the end of the text) and what may come before.
_PIECES = ["password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "key_base",
           "key", "keys", "auth", "author", "authToken", "cred", "credential", "credentials",
           "salt", "api", "api-key", "api key", "apikey", "API_KEY", "Token", "PASSWORD", " ",
           "\t", ":", "=", " = ", "=>", " is ", " set to ", '"', "'", "`", "\\", "**", "/", "_",
           "-", "x", "9", "\u00e9", "\u2192", "\u00c9", "\n", ".", "(", "[", "Zq8vL2mWx4pR7tYu9aB"]


@pytest.mark.parametrize("seed", range(4))
def test_keyword_rules_can_start_only_where_hyperscan_says(seed: int) -> None:
    """Every offset where ``_ASSIGN`` or ``_NEAR_WORD`` matches is among the start offsets.

    The rules are tried only there, so one missing offset would be a secret missed. Checked
    by trying each regex at every offset of random texts made of the edge pieces.
    """
    if not HAS_FAST:
        pytest.skip("the fast extra (hyperscan) is not installed")
    from pipeline.privacy.contexts import _NEAR_WORD

    rng = __import__("random").Random(seed)
    for _ in range(400):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))
        data = text.encode("utf-8", "surrogatepass")
        low = ENGINE.lowered(text, data)
        assign_at, near_at = ENGINE._HINTS.starts(text, data)
        for i in range(len(low)):
            if ENGINE._ASSIGN.pattern.match(low, i):
                assert i in assign_at, (text, i)
            if _NEAR_WORD.match(low, i):
                assert i in near_at, (text, i)


def _atoms(tree: object) -> list[str]:
    """Every one-character test of a parsed pattern, as a regex of its own."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python 3.10
        import sre_parse  # type: ignore[no-redef,unused-ignore]
    c = sre_parse
    category = {c.CATEGORY_WORD: r"\w", c.CATEGORY_NOT_WORD: r"\W", c.CATEGORY_SPACE: r"\s",
                c.CATEGORY_NOT_SPACE: r"\S", c.CATEGORY_DIGIT: r"\d",
                c.CATEGORY_NOT_DIGIT: r"\D"}
    out: list[str] = []

    def item(op: object, av: object) -> str:
        if op is c.LITERAL:
            return re.escape(chr(av))  # type: ignore[arg-type]
        if op is c.RANGE:
            return f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}"  # type: ignore[index]
        if op is c.CATEGORY:
            return category[av]
        raise AssertionError(f"unexpected class item {op}")

    def walk(seq: object) -> None:
        for op, av in seq:  # type: ignore[attr-defined]
            if op in (c.LITERAL, c.NOT_LITERAL):
                out.append(("[^%s]" if op is c.NOT_LITERAL else "[%s]") % re.escape(chr(av)))
            elif op is c.IN:
                neg = av and av[0][0] is c.NEGATE
                body = "".join(item(o, a) for o, a in (av[1:] if neg else av))
                out.append(f"[{'^' if neg else ''}{body}]")
            elif op is c.ANY:
                out.append(".")
            elif op is c.AT:
                out.append(r"\w")  # word boundaries test \w on each side; ^ and $ test \n
                out.append(r"\n")
            elif op is c.SUBPATTERN:
                walk(av[-1])
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                walk(av[2])
            elif op is c.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                walk(av[1])
            else:
                raise AssertionError(f"unexpected pattern op {op}")

    walk(sre_parse.parse(tree.pattern, tree.flags))  # type: ignore[attr-defined]
    return out


def test_rules_read_an_ascii_lowered_text_as_the_lowered_text() -> None:
    """``hints.lowered``: where no character folds into ASCII, only ASCII needs lowering.

    Every pattern run on the lowered text, at every one-character test it makes, must treat
    each non-ASCII character and its lower case alike; the Python checks on the lowered text
    (the letter before a word, the rest of a word) test ASCII sets only.
    """
    from pipeline.privacy import contexts, hints

    patterns = [r.pattern for r in (*ENGINE.PEM, *ENGINE.PREFIXED, *ENGINE._HEADER_RULES,
                                    ENGINE._ASSIGN) if r.folded is not None]
    patterns += [c.pattern for c in ENGINE.CONTEXTS if c.fold] + [contexts._NEAR_WORD]
    assert len(patterns) > 10
    tests = sorted({a for p in patterns for a in _atoms(p)})
    compiled = [re.compile(a) for a in tests]
    fold = set(hints._ASCII_FOLDING)
    changed = [(chr(i), chr(i).lower()) for i in range(128, 0x110000)
               if chr(i).lower() != chr(i) and chr(i) not in fold]
    changed.append(("\u03a3", "\u03c2"))  # final sigma: lowered by context
    assert len(changed) > 1000
    for ch, low in changed:
        assert len(low) == 1 and not low.isascii(), ch
        for a, rx in zip(tests, compiled, strict=True):
            assert bool(rx.fullmatch(ch)) == bool(rx.fullmatch(low)), (a, ch, low)
    for chars in (contexts._BEFORE_WORD, contexts._WORD_CHARS):
        assert all(c.isascii() for c in chars)
    # and the function itself: the same length, ASCII lowered, the rest kept
    text = "Caf\u00c9 PASSWORD: \u00c4bc \ud83d TOKEN"
    got = hints.lowered(text, text.encode("utf-8", "surrogatepass"))
    assert got == "caf\u00c9 password: \u00c4bc \ud83d token"
    assert hints.lowered(text, None) == text.lower()


_TOK = "Zq8vL2mWx4pR7tYu9aBcD3eF"


@pytest.mark.parametrize(("text", "found"), [
    (f"the api token {_TOK}", True),
    ("the api token " + "aB3" * 200 + f" {_TOK}", False),  # a run too long to be a token
    ("the api token " + "aB3" * 170 + f" {_TOK}", False),  # a 510-character token: no secret
    ("the token" + " " * 40 + _TOK, True),  # the last place a token may start
    ("the token" + " " * 41 + _TOK, False),
    ("the token " + "a" * 5 + "-" + _TOK, True),
])
def test_a_token_near_a_secret_word_is_read_whole(text: str, found: bool) -> None:
    """The near-word rule searches only the window where a token may start, then reads the
    token it found to its end: the same verdict as a search of the whole line."""
    assert ("secret-near-word" in redact(text)) is found, text
