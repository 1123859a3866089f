"""The command line's contract for errors: one line and exit 2 for bad input, 1 for a failed
run, a traceback only with --debug; --version, and -v on either side of a subcommand."""
from __future__ import annotations

import importlib.metadata
import logging

import pytest

from ehrlib import cli
from ehrlib.errors import EhrlibError, RunError


def _bad_notes(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "notes.jsonl").write_text('{"note_id": "n1", "note_type": "physician"}\n', encoding="utf-8")
    return corpus


def test_malformed_notes_is_one_line_and_exit_2(tmp_path, synth_db, capsys):
    code = cli.main(["run", "--corpus", str(_bad_notes(tmp_path)), "--db", str(synth_db),
                     "--runs-dir", str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error: ")] and "notes.jsonl" in err


def test_debug_shows_the_traceback(tmp_path, synth_db, capsys):
    code = cli.main(["--debug", "run", "--corpus", str(_bad_notes(tmp_path)), "--db", str(synth_db),
                     "--runs-dir", str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" in err and "error: " in err


@pytest.mark.parametrize(("exc", "code"), [(EhrlibError("bad input"), 2), (RunError("endpoint down"), 1)])
def test_exit_code_follows_the_error(monkeypatch, capsys, exc, code):
    def fail(args):
        raise exc

    parser = cli.build_parser()
    args = parser.parse_args(["run"])
    monkeypatch.setattr(cli, "build_parser", lambda: _Fixed(parser, args, fail))
    assert cli.main([]) == code
    assert capsys.readouterr().err.strip() == f"error: {exc}"


class _Fixed:
    """A parser whose parse_args returns prepared arguments with ``func`` replaced."""

    def __init__(self, parser, args, func):
        self._parser, self._args = parser, args
        self._args.func = func

    def parse_args(self, argv):
        return self._args

    def parse_known_args(self, argv):
        return self._args, []

    def print_help(self):
        self._parser.print_help()


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


def test_the_command_table_names_the_module_that_registers_each_command():
    import argparse
    import importlib

    seen = {}
    for name in cli._COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        try:
            importlib.import_module(name).register(sub)
        except ModuleNotFoundError:
            continue   # a command group not installed in this build
        seen.update(dict.fromkeys(sub.choices, name))
    assert seen == {c: m for c, m in cli._COMMANDS.items() if m in set(seen.values())}


def test_a_named_command_builds_its_module_only():
    parser = cli.build_parser("ehrlib.pipeline.cli")
    sub = cli._subcommands(parser)
    assert sub is not None and sorted(sub.choices) == ["ontology", "run"]
