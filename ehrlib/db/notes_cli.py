"""``ehrlib notes import SRC OUT_DIR``: MIMIC note files or a labelled release -> a corpus folder.

It sits with the database commands because ``--db`` reads the admissions of a built
database; the import itself (``ehrlib.corpus.mimic_notes``) knows no database.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

from ehrlib import schema
from ehrlib.corpus.ehrcon_release import VARIANTS
from ehrlib.corpus.records import NOTE_TYPES, PAPER_NOTE_TYPES
from ehrlib.corpus.release_import import FORMATS
from ehrlib.corpus.splits import SPLITS
from ehrlib.errors import ConfigError

__all__ = ["db_admissions", "register"]


def db_admissions(db: str | os.PathLike[str]) -> dict[int, int]:
    """hadm_id -> subject_id of every admission in an ehrlib database (read-only)."""
    from ehrlib.db.connect import connect  # deferred: DuckDB; `ehrlib --help` must stay fast

    con = connect(db)
    try:
        t = schema.schema_map(schema.detect_flavor(con)).table("admissions")
        sql = f"SELECT {t.col('hadm_id')}, {t.col('subject_id')} FROM {t.ref}"  # noqa: S608 - identifiers from the schema map
        return {int(h): int(s) for h, s in con.execute(sql).fetchall() if h is not None and s is not None}
    finally:
        con.close()


def register(sub: Any) -> None:
    """Add the ``notes`` command (``notes import``) to the CLI."""
    notes = sub.add_parser("notes", help="bring real clinical notes into a corpus folder (MIMIC, EHRCon, ReasonCon)")
    nsub = notes.add_subparsers(dest="notes_command", metavar="NOTES_COMMAND")
    notes.set_defaults(func=lambda _args: notes.print_help() or 2)
    p = nsub.add_parser(
        "import", help="MIMIC notes CSV, EHRCon release or ReasonCon JSONL -> a corpus folder",
        description="Import notes into OUT_DIR. SRC is a MIMIC-III NOTEEVENTS.csv[.gz] or MIMIC-IV-Note "
                    "discharge/radiology.csv[.gz] (notes.jsonl + import.json; the source is recognised from the "
                    "header), an EHRCon release folder (notes.jsonl, gold.jsonl, import.json; one variant per "
                    "import) or ReasonCon-style JSONL (a file, or a folder of them with --format reasoncon). The "
                    "format is recognised from SRC unless --format names it (docs/datasets.md). MIMIC-III rows "
                    "marked ISERROR are left out; rows that cannot become a note are counted by reason. Label "
                    "pickles are read only from inside SRC, as plain data. OUT_DIR must be new, or with "
                    "--overwrite a folder an earlier import wrote; it appears only once complete, and nothing "
                    "else is ever removed.")
    p.add_argument("src", metavar="SRC", help="a MIMIC notes CSV, an EHRCon release folder, or ReasonCon JSONL")
    p.add_argument("out_dir", metavar="OUT_DIR", help="corpus folder to write")
    p.add_argument("--format", choices=FORMATS, help="mimic | ehrcon | reasoncon (default: recognised from SRC)")
    p.add_argument("--variant", choices=VARIANTS,
                   help="EHRCon: which variant of the notes (default original; both share note ids, so one "
                        "per import)")
    p.add_argument("--split", choices=SPLITS, help="EHRCon / ReasonCon: import only this split (default both; "
                                                   "each note's split is recorded either way)")
    p.add_argument("--line-base", choices=("auto", "0", "1"), default="auto",
                   help="EHRCon / ReasonCon: whether the release counts lines from 0 or 1 (default auto: the "
                        "count under which more labelled entities are found on their line)")
    p.add_argument("--source", choices=("mimic3", "mimic4"), help="MIMIC: force the source format "
                                                                  "(default: from the header)")
    p.add_argument("--note-types", default=",".join(PAPER_NOTE_TYPES), metavar="TYPES",
                   help=f"comma-separated note types to keep (default: the paper's {','.join(PAPER_NOTE_TYPES)}; "
                        f"of {','.join(NOTE_TYPES)})")
    p.add_argument("--hadm-ids", metavar="FILE", help="MIMIC: keep only these admissions (ids, one a line or "
                                                      "comma-separated)")
    p.add_argument("--subject-ids", metavar="FILE", help="MIMIC: keep only these patients (same format)")
    p.add_argument("--db", metavar="DB", help="keep only admissions present in this ehrlib database")
    p.add_argument("--per-type", type=int, metavar="N", help="MIMIC: a uniform random sample of N notes per type")
    p.add_argument("--seed", type=int, default=0, help="MIMIC: sampling seed (default 0)")
    p.add_argument("--include-errors", action="store_true", help="MIMIC: keep MIMIC-III rows marked ISERROR")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the corpus files of a folder an earlier import wrote (its other files are kept)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from pathlib import Path

    from ehrlib.corpus.release_import import detect_format, import_release

    note_types = tuple(t.strip() for t in args.note_types.split(",") if t.strip())
    fmt = args.format or detect_format(Path(args.src))
    admissions = db_admissions(args.db) if args.db else None
    if fmt != "mimic":
        mimic_only = [flag for flag, given in (("--source", args.source), ("--hadm-ids", args.hadm_ids),
                                               ("--subject-ids", args.subject_ids), ("--per-type", args.per_type),
                                               ("--include-errors", args.include_errors)) if given]
        if mimic_only:
            raise ConfigError(f"{', '.join(mimic_only)} apply to MIMIC notes CSVs, not to a {fmt} import")
        release = import_release(args.src, args.out_dir, fmt=fmt, variant=args.variant, split=args.split,
                                note_types=note_types, admissions=admissions, db=args.db,
                                line_base=None if args.line_base == "auto" else int(args.line_base),
                                overwrite=args.overwrite)
        print("\n".join(release.lines()))
        return 0
    release_only = [flag for flag, given in (("--variant", args.variant), ("--split", args.split),
                                              ("--line-base", args.line_base != "auto")) if given]
    if release_only:
        raise ConfigError(f"{', '.join(release_only)} apply to EHRCon / ReasonCon releases; MIMIC notes have no "
                          "variants, splits or labels")
    from ehrlib.corpus.mimic_notes import ImportFilters, import_notes, read_id_file  # deferred: tqdm; fast --help

    filters = ImportFilters(
        note_types=note_types,
        hadm_ids=read_id_file(args.hadm_ids, "hadm_id") if args.hadm_ids else None,
        subject_ids=read_id_file(args.subject_ids, "subject_id") if args.subject_ids else None,
        per_type=args.per_type, seed=args.seed, include_errors=args.include_errors)
    result = import_notes(args.src, args.out_dir, source=args.source, filters=filters, admissions=admissions,
                          db=args.db, overwrite=args.overwrite, progress=not args.no_progress)
    print("\n".join(result.lines()))
    return 0
