"""``ehrlib synth notes DB OUT_DIR``: write a corpus (notes + gold) and print its Table 1."""
from __future__ import annotations

import argparse
import time

__all__ = ["add_notes_parser"]


def _admissions(text: str) -> list[int]:
    try:
        return [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"admissions must be hadm_ids separated by commas, got {text!r}") from None


def _notes(args: argparse.Namespace) -> int:
    # deferred: the note writer and Table 1 load DuckDB and pandas; `ehrlib --help` must stay fast
    from ehrlib.corpus.io import load_corpus
    from ehrlib.corpus.stats import column_vs_missing, table1
    from ehrlib.synth.notes import write_corpus

    started = time.perf_counter()
    admissions = [a for chunk in (args.admissions or []) for a in chunk] or None
    out = write_corpus(args.db, args.out_dir, seed=args.seed, notes_per_type=args.notes_per_type,
                       admissions=admissions, inconsistency_rate=args.inconsistency_rate,
                       split=(args.split[0], args.split[1]), progress=not args.quiet)
    corpus = load_corpus(out)
    splits = corpus.manifest.get("splits", {})
    print(f"wrote {out} (seed {args.seed}) in {time.perf_counter() - started:.1f} s: "
          f"{len(splits.get('validation', []))} validation / {len(splits.get('test', []))} test notes")
    print(table1(corpus).to_string())
    print(column_vs_missing(corpus).to_string())
    return 0


def add_notes_parser(sub) -> None:
    """Add ``synth notes`` to the CLI."""
    p = sub.add_parser("notes", help="write notes + gold labels from a database (any MIMIC-like layout)",
                       description="Write discharge summaries, physician and nursing notes with gold labels "
                                   "(notes.jsonl, gold.jsonl, manifest.json) from DB's rows.")
    p.add_argument("db", metavar="DB", help="DuckDB built by `ehrlib build-db` or `ehrlib synth tables`")
    p.add_argument("out_dir", metavar="OUT_DIR", help="corpus folder to write")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--notes-per-type", type=int, default=10, help="notes of each type (default 10)")
    p.add_argument("--admissions", type=_admissions, action="append", metavar="HADM_IDS",
                   help="only these admissions (comma-separated hadm_ids; repeatable)")
    p.add_argument("--inconsistency-rate", type=float, default=0.27,
                   help="target share of inconsistent entities (default 0.27, the paper's 2,200/8,048)")
    p.add_argument("--split", type=int, nargs=2, default=(22, 83), metavar=("VAL", "TEST"),
                   help="validation/test ratio (default 22 83, as in the paper)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_notes)
