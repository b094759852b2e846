"""Docs stay true: every command has help with examples, every setting is in the README."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from conftest import REPO

from pipeline.cli import main
from pipeline.config import Settings

COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_with_examples(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0
    command = main.commands[name]
    assert command.help and len(command.help.strip()) > 40
    assert "Examples:" in result.output or "Example:" in result.output, name


def test_readme_documents_every_setting_and_command() -> None:
    readme = (REPO / "README.md").read_text()
    for name in Settings.model_fields:
        assert f"`{name}`" in readme or f"`{name}.*`" in readme, name
    for name in COMMANDS:
        assert f"orf {name}" in readme, name


def test_readme_has_exactly_two_setup_commands() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    assert section.count("```sh") == 2


def test_exit_codes_in_top_level_help() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "3  partial" in result.output
    assert isinstance(main, click.Group)


def test_public_api_names_resolve() -> None:
    import pipeline

    for name in pipeline.__all__:
        assert getattr(pipeline, name) is not None, name
    with pytest.raises(AttributeError):
        pipeline.nope  # noqa: B018
