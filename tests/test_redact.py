from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from _secret_corpus import make_secrets, write_corpus

from pipeline.privacy import SessionSecrets, kinds, looks_random, redact, redact_value, scan
from pipeline.privacy.redact_file import redact_file
from pipeline.privacy.rules import PEM, PREFIXED

PLANTS = make_secrets()


def test_corpus_has_enough_kinds() -> None:
    assert len({p.kind for p in PLANTS}) >= 40
    assert set(p.kind for p in PLANTS) <= set(kinds())


@pytest.mark.parametrize("plant", PLANTS, ids=[p.kind for p in PLANTS])
def test_each_kind_is_found_and_removed(plant) -> None:  # type: ignore[no-untyped-def]
    counts: Counter[str] = Counter()
    out = redact(plant.line, counts)
    assert f"[REDACTED:{plant.kind}]" in out
    assert not [w for w in plant.pieces() if w in out]
    assert counts[plant.kind] >= 1


def test_text_around_a_secret_stays_readable() -> None:
    db = next(p for p in PLANTS if p.kind == "postgres-password")
    out = redact(f"psql failed: {db.line} (check the host)")
    assert out == ("psql failed: DATABASE_URL=postgres://app:[REDACTED:postgres-password]"
                   "@db:5432/app (check the host)")


def test_redaction_is_idempotent() -> None:
    text = "\n".join(p.line for p in PLANTS)
    once = redact(text)
    assert redact(once) == once


ORDINARY = [
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f Merge branch 'main'",
    "git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "request id 123e4567-e89b-12d3-a456-426614174000 done",
    "/home/dev/app/src/pipeline/llm/redact_file.py:42: in redact_file",
    "C:\\Users\\dev\\AppData\\Local\\Temp\\pytest-of-dev\\pytest-12\\test_x0",
    'integrity "sha512-9Vxx3HmxqO5Ugpk3MmSgXlZ5Tn1GXCHfYd3a0YQlxJ0S0nUqRC1HqmPMdhuUCp3R+2E9CpXA=="',
    "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    'hash = "sha256:9b1dff6a0a3c1e8e5c4f6a8b7d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1"',
    "max_tokens = 4096",
    "tokens_in: 12345, tokens_out: 678",
    "token = get_token(user)",
    "password = os.environ['DB_PASSWORD']",
    "DB_PASSWORD=${DB_PASSWORD}",
    "api_key: <your-api-key>",
    "SECRET_KEY = settings.SECRET_KEY",
    "primary_key = 'id'",
    "The token limit was reached; the key point is to retry.",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "https://github.com/psf/requests/blob/main/src/requests/sessions.py#L123",
    "postgres://app@db:5432/app",
    "Authorization: Bearer $TOKEN",
    '"signature":"EvkBCkYIBxgCKkBsomeopaquesignatureblob1234567890abcdef"',
    "npm install skip-ci@1.0.0 && pytest -k test_sk_parse",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_survives(text: str) -> None:
    assert redact(text) == text


def test_redact_value_keeps_shape_and_uses_key_names() -> None:
    pw = "Zq8#vL2mWx4p"
    gh = next(p for p in PLANTS if p.kind == "github-token").secret
    doc = {"db": {"password": pw, "port": 5432}, "log": [f"pushed with {gh}", None, 3.5],
           "name": "svc", "fixture": {"password": "testpass"}}
    counts: Counter[str] = Counter()
    out = redact_value(doc, counts)
    assert out == {"db": {"password": "[REDACTED:password]", "port": 5432},
                   "log": ["pushed with [REDACTED:github-token]", None, 3.5], "name": "svc",
                   "fixture": {"password": "testpass"}}
    assert counts == Counter({"password": 1, "github-token": 1})


def test_private_key_inside_json_string_escapes() -> None:
    key = next(p for p in PLANTS if p.kind == "private-key")
    raw = json.dumps({"private_key": key.secret + "\n", "type": "service_account"})
    out = redact(raw)
    assert "[REDACTED:private-key]" in out
    assert not [w for w in key.pieces() if w in out]
    assert json.loads(out)["type"] == "service_account"


def test_truncated_private_key_is_still_removed() -> None:
    key = next(p for p in PLANTS if p.kind == "openssh-private-key")
    cut = key.secret[: len(key.secret) // 2]
    out = redact("output:\n" + cut)
    assert out == "output:\n[REDACTED:openssh-private-key]"


def test_token_after_json_newline_escape() -> None:
    gh = next(p for p in PLANTS if p.kind == "github-token").secret
    assert "[REDACTED:github-token]" in redact('"line one\\n' + gh + '"')


def test_looks_random() -> None:
    rng = random.Random(1)
    assert looks_random("".join(rng.choice("abcdefXYZ0123456789") for _ in range(32)))
    assert not looks_random("thisisaverylongwordwithoutdigits")
    assert not looks_random("/usr/local/lib/python3.12/site-packages")


def test_hits_do_not_overlap() -> None:
    text = "\n".join(p.line for p in PLANTS)
    hits = scan(text)
    assert all(a.end <= b.start for a, b in zip(hits, hits[1:], strict=False))


def test_corpus_files_redact_clean(tmp_path: Path) -> None:
    """``orf redact`` copies: the whole session's secrets, bare mentions included, are gone."""
    corpus = write_corpus(tmp_path)
    for f in corpus.files:
        out = "".join(redact_file(f))
        assert corpus.leaks(out) == [], f.name


def test_sub_agent_file_redacts_clean_with_its_parents_memory(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path)
    parent = corpus.files[0]
    sub = next(parent.with_suffix("").rglob("*.jsonl"))
    memory = SessionSecrets()
    assert corpus.leaks("".join(redact_file(parent, secrets=memory))) == []
    assert corpus.leaks("".join(redact_file(sub, secrets=memory))) == []


def test_real_samples_keep_hashes_uuids_and_paths(shared_trajectories: Path) -> None:
    """The false-positive check: ordinary log text from public sessions stays as it is.

    The samples are public sessions: a token with a known shape there may be a published
    example key, but any other placeholder (a name, a flag, a nearby word) redacts code, a
    test fixture or a placeholder URL that a lesson needs. Expected from the samples: none.
    """
    shape_kinds = {r.kind for r in (*PREFIXED, *PEM)}
    files = sorted(p for p in shared_trajectories.rglob("*") if p.is_file())
    assert files
    false_positives = []
    for path in files:
        text = path.read_text("utf-8", "replace")
        for hit in scan(text):
            value = text[hit.start:hit.end]
            # nothing redacted may be a plain hex hash, a UUID or a path
            assert not all(c in "0123456789abcdef-" for c in value), (path, value)
            assert "/" not in value or value.count("/") < 3, (path, value)
            if hit.kind not in shape_kinds:
                false_positives.append((path.name, hit.kind, value[:40]))
    assert false_positives == []


FIXTURES_AND_CODE = [
    "  password: string",
    "  privateKey: Uint8Array;",
    "    password: str = Field(title='Password')",
    "    encryptedRootFolderKey: testEncryptedRootFolderKey,",
    "  const queryKey = queryOptions?.queryKey ?? getHealthCheckKey();",
    "   215\tif password:\n   216\t    user = authenticate(request, password=password)",
    "User.objects.create_user(username='testclient', password='password')",
    'self.client.login(username="super", password="secret")',
    "DATABASE_URL: postgresql://user:password@localhost/dbname",
    "- DATABASE_URL=postgresql://${POSTGRES_USER:-postgres}:${POSTGRES_PASSWORD:-postgres}@db/app",
    "refresh_token=oauth2_access_token",
    "const TEE_WORKER_SECRET = 'test-secret-token';",
    "- **PASS**: All checks green",
    "--password PASSWORD   the account password",
    "docker login --password-stdin < token.txt",
    "max_tokens: 8192, output_tokens: 412, cache_key: 9f86d081884c7d659a2feaa0c55ad015",
    '"output_tokens": 3, "id": "resp_0b797f8ef05bdf9701699435fc669081a0a38bc86fb43347a3"',
    "publicKey: 02f3f15963099624c1b6d0e3c1ce4e0a35f7f2a1d0b8e9c3a4b5c6d7e8f9a0b1c2",
]


@pytest.mark.parametrize("text", FIXTURES_AND_CODE)
def test_code_types_fixtures_and_placeholder_urls_survive(text: str) -> None:
    assert redact(text) == text


# Placeholders, names and paths that read like secrets to a loose check.
NOT_SECRETS = [
    'export GH_TOKEN="github_pat_xxxx"',  # a token's prefix, its tail left out
    "PLAUSIBLE_API_KEY=plb_xxx make run",
    "ANTHROPIC_API_KEY=sk-ant-... claude",
    'assert req.headers["Authorization"] == "Bearer MY-ACCESS-TOKEN"',  # a slot in capitals
    "Restored cache from key 'node-cache-Linux-x64-npm-3f9a2c41d0b7e6a5c4d3e2f1a0b9c8d7e6f5a4b3'",
    "- vault: API key setup (file: r7/kv-op-beta/SKILL.md)",  # a relative file path
    "  --token                      Use the token from the keychain",  # a help-text column
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_placeholders_cache_keys_paths_and_help_columns_survive(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("POSTHOG_API_KEY=phc_Zx81kQv0pL3mN7rT2wYb entire help",
     "POSTHOG_API_KEY=[REDACTED:secret-assignment] entire help"),
    ('"Authorization": "Bearer Zx81kQv0pL3mN7rT2wYbQ4"',
     '"Authorization": "Bearer [REDACTED:bearer-token]"'),
    ("mysql --password  Zx81kQv0pL3mN7rT2wYb", "mysql --password  [REDACTED:credential-flag]"),
    ("restore failed for key 'Zx81kQv0pL3mN7rT2wYbQ4x9'",
     "restore failed for key '[REDACTED:secret-near-word]'"),
    ("invalid token (Zx81kQv0/pL3mN7rT2wYb+Q4x9)", "invalid token ([REDACTED:secret-near-word])"),
    # The name run into the value is kept; the value alone goes.
    ("token rejected: SESSION=Zx81kQv0pL3mN7rT2wYbQ4",
     "token rejected: SESSION=[REDACTED:secret-near-word]"),
    ("auth failed: STRIPE_KEY=sk_live_Zx81kQv0pL3mN7rT2wYb",
     "auth failed: STRIPE_KEY=[REDACTED:stripe-secret-key]"),
])
def test_real_looking_values_in_the_same_places_still_go(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_placeholder_is_never_learned() -> None:
    memory = SessionSecrets()
    for value in ("github_pat_xxxx", "plb_xxxxxxxx", "sk-ant-...", "MY-ACCESS-TOKEN"):
        memory.learn(value, "secret-assignment")
        assert value not in memory
    memory.learn("phc_Zx81kQv0pL3mN7rT2wYb", "secret-assignment")
    assert "phc_Zx81kQv0pL3mN7rT2wYb" in memory


def test_placeholders_never_swallow_text_after_the_value() -> None:
    text = 'cfg = {"password": "Zq8#vL2mWx4p", "host": "db"}\\n    retry()'
    assert redact(text) == 'cfg = {"password": "[REDACTED:password]", "host": "db"}\\n    retry()'
    assert redact("DB_PASSWORD=Zq8vL2mWx4p\\nNEXT=1") == "DB_PASSWORD=[REDACTED:password]\\nNEXT=1"


@pytest.mark.parametrize("text", [
    # The quoted value after ``secret:`` is prose, not a secret: rejected, it must not hide the
    # assignment inside it (found by a review: it hid a SWE-agent task's password).
    'secret: "example of the setup, then DB_PASSWORD="Zq8vL2mWx4pKt7Rb9Nc3" in the env" ok',
    "auth: 'see DB_PASSWORD=Zq8vL2mWx4pKt7Rb9Nc3 below' ok",
])
def test_a_rejected_assignment_does_not_hide_one_inside_it(text: str) -> None:
    out = redact(text)
    assert "Zq8vL2mWx4pKt7Rb9Nc3" not in out
    assert "[REDACTED:" in out
