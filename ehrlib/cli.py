"""The `ehrlib` command line.

Each command group lives next to the code it drives: a module listed in
`_COMMAND_MODULES` exposes `register(subparsers)`, which adds its parsers and sets
`func` to a handler taking the parsed arguments and returning an exit code. Keeping
the parsers beside their code lets modules grow commands without touching this file.

Exit status: 0 done, 1 a run that failed (:class:`~ehrlib.errors.RunError`, or notes
left in error), 2 bad usage or input (any other :class:`~ehrlib.errors.EhrlibError`,
printed as one line; ``--debug`` adds its traceback), 128 + N when stopped by signal N
(130 for Ctrl-C; a command that cleans up on SIGTERM ends with 143).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
import traceback
from typing import Any, NoReturn

from ehrlib.errors import EhrlibError, suggestion

__all__ = ["main", "build_parser"]

_COMMAND_MODULES = (
    "ehrlib.db.cli",
    "ehrlib.synth.cli",
    "ehrlib.db.notes_cli",
    "ehrlib.pipeline.cli",
    "ehrlib.bench.calibrate",
    "ehrlib.judge.cli",
    "ehrlib.llm.cli",
    "ehrlib.report.cli",
    "ehrlib.experiments.cli",
    "ehrlib.demo",
    "ehrlib.bench.cli",
    "ehrlib.ner.cli",
    "ehrlib.probe.cli",
)

#: the module of each command, so that a command line loads only its command's module (a
#: test checks it against what the modules register)
_COMMANDS = {
    "build-db": "ehrlib.db.cli", "download": "ehrlib.db.cli", "synth": "ehrlib.synth.cli",
    "notes": "ehrlib.db.notes_cli", "run": "ehrlib.pipeline.cli", "ontology": "ehrlib.pipeline.cli",
    "calibrate": "ehrlib.bench.calibrate", "judge": "ehrlib.judge.cli", "llm": "ehrlib.llm.cli",
    "report": "ehrlib.report.cli", "experiments": "ehrlib.experiments.cli", "demo": "ehrlib.demo",
    "bench": "ehrlib.bench.cli", "train-ner": "ehrlib.ner.cli", "eval-ner": "ehrlib.ner.cli",
    "probe-schema": "ehrlib.probe.cli",
}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and the likely intended value for a mistyped command
    or choice (subparsers inherit the class, so every command gets both).
    """

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{suggestion(value, names)} "
                                             f"(choose from {', '.join(names)})")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``ehrlib`` argument parser with every registered command (or with the commands of
    the module ``only``: what a command line that names its command needs).
    """
    parser = _Parser(
        prog="ehrlib",
        description="Note-table consistency verification for EHRs.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log debug output (also accepted after the subcommand)")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (normally one line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES if only is None else (only,):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # command group not installed in this build
            raise
        module.register(sub)
    return parser


_VERBOSE = ("-v", "--verbose")


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser the arguments selected, for errors about its options."""
    sub = _subcommands(parser)
    while sub is not None and getattr(args, sub.dest, None) in sub.choices:
        parser = sub.choices[getattr(args, sub.dest)]
        sub = _subcommands(parser)
    return parser


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


def _version() -> str:
    import importlib.metadata  # deferred: only --version reads the installed metadata (fast --help)

    try:
        return importlib.metadata.version("ehrlib")
    except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: print the installed version and exit (looked up only when asked)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show the version and exit") -> None:  # noqa: A002 - argparse's name
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> NoReturn:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for bad usage or input, 1 for a failed run)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # the command's own module only (a fresh process of one command does not import the
    # others'); the whole parser for help, a mistyped command or none
    module = _COMMANDS.get(next((a for a in argv if not a.startswith("-")), ""))
    parser = build_parser(module) if module else build_parser()
    # -v may follow the subcommand (`ehrlib run ... -v`) at any depth: subparsers hand
    # what they do not know back up, and only the verbose flag is accepted from there
    args, rest = parser.parse_known_args(argv)
    unknown = [a for a in rest if a not in _VERBOSE]
    if unknown:
        chosen = _chosen_parser(parser, args)
        hint = suggestion(unknown[0].split("=")[0], _option_strings(chosen)) if unknown[0].startswith("--") else ""
        chosen.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    args.verbose = args.verbose or len(rest) > 0
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except EhrlibError as exc:  # expected: one line, unless --debug asks for the traceback
        if args.debug:
            traceback.print_exc()
        print("error: " + " ".join(str(exc).splitlines()), file=sys.stderr)   # one line, whatever it quotes
        return exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or a stop signal a command turned into one
        signum = int(getattr(exc, "signum", 2))
        print(f"interrupted{f' ({exc})' if signum != 2 else ''}", file=sys.stderr)
        return 128 + signum
