"""``ehrlib report --run RUN_DIR``: metrics tables, figures and the findings viewer of a run."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``report`` command to the CLI."""
    p = sub.add_parser("report", help="write a run's tables (CSV + Markdown), figures and HTML viewer",
                       description="Regenerate every table and figure of one run: metrics (mean over "
                                   "notes, breakdowns, bootstrap CIs), heuristic error types, tool-trace "
                                   "graphs, and a per-note HTML findings viewer. Judges with the matcher "
                                   "first when the run has no judgements.")
    p.add_argument("--run", required=True, metavar="RUN_DIR", action="append",
                   help="a run folder; repeat it to also write a side-by-side comparison (into --figures, "
                        "else the first run's figures/)")
    p.add_argument("--judge", default="matcher", help="whose judgements to report (default: matcher)")
    p.add_argument("--corpus", metavar="DIR", help="corpus folder (default: the one in the run manifest)")
    p.add_argument("--figures", metavar="DIR",
                   help="also copy the figures into DIR, prefixed with the run id (default: only RUN_DIR/figures/; "
                        "'' for no figure files at all)")
    p.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples for the F1 intervals")
    p.add_argument("--formats", default="png,svg", help="figure formats, comma-separated (default: png,svg)")
    p.add_argument("--no-viewer", action="store_true", help="skip the HTML findings viewer")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.report.build import build_comparison, build_report

    # figures stay in each run's own folder unless --figures names another; '' writes none
    formats = () if args.figures == "" else tuple(f.strip() for f in args.formats.split(",") if f.strip())
    for run in args.run:
        result = build_report(run, args.corpus, judge=args.judge, figures_dir=args.figures or None,
                              n_bootstrap=args.n_bootstrap, viewer=not args.no_viewer, formats=formats,
                              progress=not args.no_progress)
        print(f"{result.run_dir / 'report.md'}: {len(result.tables)} tables, {len(result.figures)} figure files, "
              f"{len(result.viewer)} viewer pages")
    if len(args.run) > 1:
        out_dir = args.figures or Path(args.run[0]) / "figures"
        paths = build_comparison(args.run, judge=args.judge, out_dir=out_dir, formats=formats)
        print(f"comparison: {', '.join(str(p) for p in paths)}")
    return 0
