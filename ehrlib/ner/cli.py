"""``ehrlib train-ner`` (fit the token tagger) and ``ehrlib eval-ner`` (leave-one-set-out)."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``train-ner`` and ``eval-ner`` commands."""
    p = sub.add_parser("train-ner", help="train the NER tagger that `run --extraction ner` uses",
                       description="Fit the BIO token tagger on the gold spans of the development sets (and the "
                                   "synthetic corpus's validation split) and write model.npz + manifest.json.")
    p.add_argument("--out", help="model folder (default: the bundled model's folder, which runs read by default)")
    p.add_argument("--sets", nargs="*", help="development sets to train on (default: all present)")
    p.add_argument("--no-synthetic", action="store_true", help="leave the synthetic validation split out")
    p.add_argument("--work-dir", default="runs/ner", help="where the synthetic corpus is built (default runs/ner)")
    p.set_defaults(func=_train)
    e = sub.add_parser("eval-ner", help="leave-one-set-out: the NER tagger vs the framework's extraction",
                       description="For each real-patient development set, train on the others, run the inspector "
                                   "with both extractions and judge them; writes ner_loso.csv and prints the table.")
    e.add_argument("--work-dir", default="runs/ner-loso", help="models, runs and the table go here")
    e.add_argument("--sets", nargs="*", help="sets to hold out (default: every set with its demo database)")
    e.add_argument("--no-synthetic", action="store_true", help="train without the synthetic validation split")
    e.set_defaults(func=_evaluate)


def _train(args: argparse.Namespace) -> int:
    # deferred: the CLI parser is built without the command bodies' imports
    from pathlib import Path

    from ehrlib.inputs import project_path
    from ehrlib.ner.training import DEFAULT_MODEL, dev_set_folders, sets_named, synthetic_dev_corpus, train_on

    folders = dev_set_folders()
    corpora: dict[str, Any] = sets_named(args.sets if args.sets is not None else list(folders), folders)
    if not args.no_synthetic:
        corpora = {"synthetic_validation": synthetic_dev_corpus(project_path(args.work_dir))[1], **corpora}
    tagger, manifest = train_on(corpora)
    out = tagger.save(Path(args.out) if args.out else DEFAULT_MODEL, manifest)
    print(f"NER tagger ({len(tagger.vocab)} features, {len(corpora)} training sets) written to {out}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    # deferred: the synthetic inputs load only when the command runs
    from ehrlib.inputs import project_path
    from ehrlib.ner.evaluate import extraction_table, loso_rows
    from ehrlib.result_tables import markdown_table, write_table

    work = project_path(args.work_dir)
    rows = loso_rows(work, sets=args.sets, synthetic=not args.no_synthetic)
    # deferred: pandas is heavy; `ehrlib --help` must stay fast
    import pandas as pd

    write_table(pd.DataFrame(rows), work / "ner_loso.csv")
    print(markdown_table(extraction_table(rows)))
    return 0
