"""``ehrlib notes import SRC OUT_DIR``: MIMIC note files -> a corpus folder ``ehrlib run`` reads.

It sits with the database commands because ``--db`` reads the admissions of a built
database; the import itself (``ehrlib.corpus.mimic_notes``) knows no database.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

from ehrlib import schema
from ehrlib.corpus.mimic_notes import ImportFilters, import_notes, read_id_file
from ehrlib.corpus.records import NOTE_TYPES

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
    notes = sub.add_parser("notes", help="bring real clinical notes into a corpus folder (MIMIC import)")
    nsub = notes.add_subparsers(dest="notes_command", metavar="NOTES_COMMAND")
    notes.set_defaults(func=lambda _args: notes.print_help() or 2)
    p = nsub.add_parser(
        "import", help="MIMIC-III NOTEEVENTS or MIMIC-IV-Note CSV -> notes.jsonl + import.json",
        description="Stream a MIMIC-III NOTEEVENTS.csv[.gz] or a MIMIC-IV-Note discharge/radiology.csv[.gz] "
                    "into OUT_DIR (notes.jsonl, import.json). The source is recognised from the header. "
                    "MIMIC-III rows marked ISERROR are left out; rows that cannot become a note (unsupported "
                    "category, missing HADM_ID, bad date or one outside the years the note contract allows, "
                    "empty text) are counted by reason. OUT_DIR must be new, or with --overwrite a folder an "
                    "earlier import wrote; it appears only once complete, and nothing else is ever removed.")
    p.add_argument("src", metavar="SRC", help="NOTEEVENTS.csv[.gz], discharge.csv[.gz] or radiology.csv[.gz]")
    p.add_argument("out_dir", metavar="OUT_DIR", help="corpus folder to write")
    p.add_argument("--source", choices=("mimic3", "mimic4"), help="force the source format (default: from the header)")
    p.add_argument("--note-types", default=",".join(NOTE_TYPES), metavar="TYPES",
                   help=f"comma-separated note types to keep (default: {','.join(NOTE_TYPES)})")
    p.add_argument("--hadm-ids", metavar="FILE", help="keep only these admissions (ids, one a line or comma-separated)")
    p.add_argument("--subject-ids", metavar="FILE", help="keep only these patients (same format)")
    p.add_argument("--db", metavar="DB", help="keep only admissions present in this ehrlib database")
    p.add_argument("--per-type", type=int, metavar="N", help="a uniform random sample of N notes per type")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--include-errors", action="store_true", help="keep MIMIC-III rows marked ISERROR")
    p.add_argument("--overwrite", action="store_true",
                   help="replace notes.jsonl and import.json of a corpus folder an earlier import wrote "
                        "(its other files are kept)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    filters = ImportFilters(
        note_types=tuple(t.strip() for t in args.note_types.split(",") if t.strip()),
        hadm_ids=read_id_file(args.hadm_ids, "hadm_id") if args.hadm_ids else None,
        subject_ids=read_id_file(args.subject_ids, "subject_id") if args.subject_ids else None,
        per_type=args.per_type, seed=args.seed, include_errors=args.include_errors)
    admissions = db_admissions(args.db) if args.db else None
    result = import_notes(args.src, args.out_dir, source=args.source, filters=filters, admissions=admissions,
                          db=args.db, overwrite=args.overwrite, progress=not args.no_progress)
    print("\n".join(result.lines()))
    return 0
