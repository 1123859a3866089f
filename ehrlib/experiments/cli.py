"""`ehrlib experiments list|run NAME|all`."""
from __future__ import annotations

import argparse

from ehrlib.experiments import list_experiments, run_notebooks


def _list(args: argparse.Namespace) -> int:
    for exp in list_experiments():
        print(f"{exp.name:<28} params: {exp.params or '-'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    run_notebooks(args.name, out_dir=args.out, use_params_file=not args.fast)
    return 0


def register(sub) -> None:
    """Add the ``experiments`` command to the CLI."""
    p = sub.add_parser("experiments", help="list or run the numbered notebooks with papermill")
    s = p.add_subparsers(dest="experiments_command", metavar="ACTION", required=True)
    s.add_parser("list", help="numbered notebooks and their params files").set_defaults(func=_list)
    r = s.add_parser("run", help="execute notebooks (NAME such as 03, 03_run_inspector, or all)")
    r.add_argument("name", help="notebook number or name (03, 03_ontology_build) or all")
    r.add_argument("--out", default="runs/notebooks", help="folder for executed copies")
    which = r.add_mutually_exclusive_group()
    which.add_argument("--full", action="store_true",
                       help="use params/NN_*.yaml, which write the committed figures/ (the default)")
    which.add_argument("--fast", action="store_true",
                       help="use the notebooks' fast defaults (figures under runs/figures)")
    r.set_defaults(func=_run)
