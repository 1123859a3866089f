"""``ehrlib synth``: the synthetic hospital's command group.

``ehrlib synth tables OUT.duckdb`` writes the tables (this module); ``ehrlib synth
notes`` writes notes and gold labels on top of a database (registered below by the
note writer's module).
"""
from __future__ import annotations

import argparse
import logging
import time

__all__ = ["register"]

log = logging.getLogger(__name__)


def _tables(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.synth import build_hospital

    started = time.perf_counter()
    b = build_hospital(args.out, patients=args.patients, seed=args.seed, scale=args.scale, layout=args.layout)
    took = time.perf_counter() - started
    print(f"wrote {b.path} ({args.layout}, seed {args.seed}, {args.patients} patients): "
          f"{b.chartevents_rows:,} CHARTEVENTS rows in {took:.1f} s ({b.chartevents_rows / took:,.0f} rows/s)")
    return 0


def register(subparsers) -> None:
    synth = subparsers.add_parser("synth", help="build the embedded synthetic hospital (tables, notes)")
    sub = synth.add_subparsers(dest="synth_command", metavar="SYNTH_COMMAND")
    synth.set_defaults(func=lambda _args: synth.print_help() or 2)

    tables = sub.add_parser("tables", help="write a seeded synthetic MIMIC-shaped DuckDB",
                            description="Write a seeded synthetic hospital (MIMIC-III layout by default).")
    tables.add_argument("out", metavar="OUT.duckdb", help="DuckDB file to write (replaced if present)")
    tables.add_argument("--patients", type=int, default=40, help="number of patients (default 40)")
    tables.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    tables.add_argument("--scale", type=int, default=None, metavar="CHARTEVENTS_ROWS",
                        help="add bulk ICU stays until CHARTEVENTS has about this many rows")
    tables.add_argument("--layout", choices=("mimic3", "mimic4", "perturbed"), default="mimic3",
                        help="physical layout (default mimic3)")
    tables.set_defaults(func=_tables)

    # --- `ehrlib synth notes` (note writer, gold labels, corpus) --------------------
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.synth.notes_cli import add_notes_parser

    add_notes_parser(sub)
