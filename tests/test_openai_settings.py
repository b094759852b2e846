"""The openai-compatible backend's settings: layered like every other one, shown by orf config.

Base URL and model are settings (env ``ORF_OPENAI_*``, ``[tool.orf]``); the key stays in the
variable ``openai_api_key_env`` names and ``orf config`` only says whether it is set.
``--model`` names the model of the backend in use.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from pipeline.cli import main
from pipeline.cli.app import settings_from
from pipeline.config import load_settings, setting_sources
from pipeline.testing.fake_openai import FakeOpenAI

SECRET = "sk-" + "orfsettingstest0123456789"


def test_pyproject_then_env_set_the_server(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.orf]\nopenai_base_url = "http://127.0.0.1:1/v1"\nopenai_model = "qwen3"\n',
        encoding="utf-8")
    from_file = load_settings(cwd=tmp_path, environ={})
    assert (from_file.openai_base_url, from_file.openai_model) == ("http://127.0.0.1:1/v1", "qwen3")
    env = {"ORF_OPENAI_MODEL": "llama3", "ORF_OPENAI_API_KEY_ENV": "MY_KEY"}
    layered = load_settings(cwd=tmp_path, environ=env)
    assert (layered.openai_base_url, layered.openai_model) == ("http://127.0.0.1:1/v1", "llama3")
    assert layered.openai_api_key_env == "MY_KEY"
    sources = setting_sources(cwd=tmp_path, environ=env)
    assert sources["openai_base_url"] == f"pyproject ({tmp_path / 'pyproject.toml'})"
    assert sources["openai_model"] == "env ORF_OPENAI_MODEL"


def test_the_key_comes_from_the_named_variable() -> None:
    pytest.importorskip("openai")
    from pipeline.llm.openai_compat import ServerConfig

    settings = load_settings({"openai_base_url": "http://127.0.0.1:1/v1", "openai_model": "m",
                              "openai_api_key_env": "TEAM_KEY"})
    assert ServerConfig.from_settings(settings, {"TEAM_KEY": f" {SECRET} "}).api_key == SECRET
    assert ServerConfig.from_settings(settings, {"ORF_OPENAI_API_KEY": SECRET}).api_key is None


def test_orf_config_says_whether_the_key_is_set_never_its_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORF_OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    unset = CliRunner().invoke(main, ["config"])
    assert unset.exit_code == 0, unset.output
    lines = unset.output.splitlines()
    [key_line] = [ln for ln in lines if ln.startswith("openai_api_key_env ")]
    assert key_line.split(None, 1)[1] == "ORF_OPENAI_API_KEY (not set)  (default)"
    [url_line] = [ln for ln in lines if ln.startswith("openai_base_url ")]
    assert url_line.split(None, 1)[1] == "http://127.0.0.1:1/v1  (env ORF_OPENAI_BASE_URL)"
    monkeypatch.setenv("ORF_OPENAI_API_KEY", SECRET)
    shown = CliRunner().invoke(main, ["config"])
    as_json = CliRunner().invoke(main, ["config", "--json"])
    assert "ORF_OPENAI_API_KEY (set)  (default)" in shown.output
    assert SECRET not in shown.output and SECRET not in as_json.output
    doc = orjson.loads(as_json.output)
    assert doc["openai_api_key_env"] == "ORF_OPENAI_API_KEY"
    assert doc["openai_api_key_set"] is True


def test_model_flag_names_the_model_of_the_backend_in_use() -> None:
    openai = settings_from(backend="openai-compatible", model="qwen3")
    assert (openai.openai_model, openai.model) == ("qwen3", "gemini-2.5-flash")
    gemini = settings_from(backend="gemini", model="gemini-2.5-pro")
    assert (gemini.openai_model, gemini.model) == (None, "gemini-2.5-pro")
    assert settings_from(backend="openai-compatible", model=None).openai_model is None


def test_model_flag_reaches_the_openai_compatible_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    store = tmp_path / "experiences"
    assert CliRunner().invoke(main, ["init", str(store)]).exit_code == 0
    with FakeOpenAI(model="served") as fake:
        monkeypatch.setenv("ORF_OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("ORF_OPENAI_MODEL", "from-env")
        result = CliRunner().invoke(main, [
            "analyze", str(FIXTURES / "mine" / "alpha-session.jsonl"), "--json", "--draft",
            "--backend", "openai-compatible", "--model", "from-flag", "--store", str(store)])
        sent = [r.json["model"] for r in fake.completions]
    assert result.exit_code == 0, result.output
    assert sent == ["from-flag", "from-flag"]
    doc = orjson.loads(result.stdout.splitlines()[0])
    assert doc["verdict"]["decided_by"] == "openai-compatible:from-flag"


def test_orf_config_shows_an_unset_server_as_not_set() -> None:
    out = CliRunner().invoke(main, ["config"])
    assert out.exit_code == 0, out.output
    [line] = [ln for ln in out.output.splitlines() if ln.startswith("openai_model ")]
    assert line.split(None, 1)[1] == "not set  (default)"
