"""Session memory learns only from strong evidence; secrets written in prose are found.

The cases of the outside check on unseen logs: a lint tool's name beside a masked token, the
word ``authorization``, a working-directory flag's path, a prompt segment; and the contexts
that let secrets through: a value an agent wrote in prose, a token an error named.
"""

from __future__ import annotations

import pytest

from pipeline.privacy import redact
from pipeline.privacy.memory import SessionSecrets
from pipeline.privacy.values import learnable

SECRET = "q7Vd2LmX9pR4tZ8wK3nB6yH1"  # generated-looking, 24 characters
HEX40 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"


@pytest.mark.parametrize("text", [
    f"`MONGO_URI` is set to `{SECRET}` in your environment; consider rotating it.",
    f"Your STRIPE_KEY was set to {SECRET} earlier.",
    f"error: authentication failed (last token tried: {HEX40})",
    f"api key used = {SECRET}",
])
def test_a_secret_written_in_prose_is_replaced(text: str) -> None:
    out = redact(text)
    assert SECRET not in out and HEX40 not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    "The lint step is set to golangci-lint run ./...",
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b: the token used: none",
    "cd app && git log --oneline",
])
def test_ordinary_text_near_the_same_words_is_kept(text: str) -> None:
    assert redact(text) == text


def test_a_name_beside_a_secret_word_is_never_learned() -> None:
    memory = SessionSecrets()
    memory.redact("GITHUB_TOKEN: *** golangci-lint token golangci-lint")
    assert "golangci-lint" not in memory
    assert memory.redact("[lint] $ golangci-lint run ./...") == "[lint] $ golangci-lint run ./..."
    memory.redact("Authorization: Bearer authorization_details_v2")
    assert memory.redact("see authorization_details and authorization-server-defined") == (
        "see authorization_details and authorization-server-defined")


def test_a_path_after_a_password_like_flag_is_no_secret() -> None:
    assert redact("codex --pwd '/home/dev/app' exec") == "codex --pwd '/home/dev/app' exec"
    assert "hunter2hunter2" not in redact("mysql --password hunter2hunter2 -e 'select 1'")


@pytest.mark.parametrize(("value", "kind", "shape", "want"), [
    ("golangci-lint", "secret-near-word", False, False),
    ("authorization", "bearer-token", False, False),
    ("hunter2hunter2", "credential-flag", False, True),  # a credential position
    ("/home/dev/app/.env", "credential-flag", False, False),
    ("Please enter the value shown in the box", "password-prompt", False, False),
    (SECRET, "secret-near-word", False, True),  # looks generated
    ("ghp_" + "a" * 36, "github-token", True, True),  # a key shape
    ("build_cache_dir", "secret-assignment", False, False),
])
def test_the_learning_rule(value: str, kind: str, shape: bool, want: bool) -> None:
    assert learnable(value, kind, shape) is want
