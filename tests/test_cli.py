"""The top-level command line: --version and the verbose flag on either side of a subcommand."""
from __future__ import annotations

import importlib.metadata
import logging

import pytest

from ehrlib import cli


def test_version_comes_from_the_installed_metadata(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"ehrlib {importlib.metadata.version('ehrlib')}"


@pytest.mark.parametrize("argv", [["-v", "experiments", "list"], ["experiments", "list", "-v"],
                                  ["experiments", "list", "--verbose"]])
def test_verbose_before_or_after_the_subcommand(argv, monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: seen.update(kw))
    assert cli.main(argv) == 0
    assert seen["level"] == logging.DEBUG


def test_without_verbose_logs_info(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: seen.update(kw))
    assert cli.main(["experiments", "list"]) == 0
    assert seen["level"] == logging.INFO


def test_other_unknown_arguments_are_still_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["experiments", "list", "-v", "--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
