"""`ehrlib build-db` and `ehrlib download`."""
from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``build-db`` and ``download`` commands to the CLI."""
    p = sub.add_parser("build-db", help="build a DuckDB file from a MIMIC-III or MIMIC-IV CSV folder",
                       description="Build one typed DuckDB file (with a build manifest) from a MIMIC folder.")
    p.add_argument("src", metavar="SRC_DIR", help="MIMIC-III folder (PATIENTS.csv[.gz], ...) or MIMIC-IV (hosp/, icu/)")
    p.add_argument("out", metavar="OUT.duckdb", help="database file to write (replaced atomically)")
    # no argparse `choices`: a bad value gets the same one-line error as any other bad input
    p.add_argument("--flavor", default="auto", help="auto | mimic3 | mimic4 (default: detect from the files)")
    p.add_argument("--perturb", action="store_true", help="write the perturbed MIMIC-III schema (paper Table 15)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_build_db)

    d = sub.add_parser("download", help="download a PhysioNet open demo (ODbL) and verify its SHA256SUMS",
                       description="Download the MIMIC-III or MIMIC-IV open demo from PhysioNet.")
    d.add_argument("dataset", metavar="DATASET", help="mimic-iii-demo | mimic-iv-demo")
    d.add_argument("dest", metavar="DEST_DIR", help="folder to download into (resumes a partial download)")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    d.set_defaults(func=_download)


def _build_db(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.db.build import build_db
    from ehrlib.db.connect import connect
    from ehrlib.db.skipped import summary_lines
    from ehrlib.db.summary import summarize

    r = build_db(args.src, args.out, flavor=args.flavor, perturb=args.perturb, progress=not args.no_progress)
    print(f"built {r.path} in {r.seconds:.1f} s")
    with connect(r.path) as con:
        print("\n".join(summarize(con).lines()))
    if r.missing:
        print(f"missing (reported in the manifest): {', '.join(r.missing)}")
    if r.skipped:
        print(f"{len(r.skipped)} source file(s) not read (listed in the manifest):")
        print("\n".join("  " + line for line in summary_lines(r.skipped)))
    return 0


def _download(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.db.download import download

    r = download(args.dataset, args.dest, progress=not args.no_progress)
    print(f"{args.dataset}: {r.files} files verified against SHA256SUMS.txt in {r.dest} "
          f"({r.downloaded} downloaded, {r.skipped} already complete)")
    return 0
