"""EHRCon as a run variant of the generalization experiment (paper Section 5.5, Table 13).

The release is credentialed, so the notebook takes its folder as a parameter and skips
the section, with the reason, when none is given or the folder is absent. The release is
imported (one variant, one split) into the work folder through ``ehrlib notes import``'s
code, so the notebook runs exactly what the command would.

:func:`demo_release` writes an EHRCon-shaped release from hand-written notes about real
MIMIC-III demo admissions (``tests/fixtures/realnotes``), so the section can run, and be
tested, without the credentialed files.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

import pandas as pd

from ehrlib.corpus.ehrcon_shape import write_ehrcon_release
from ehrlib.corpus.import_target import is_import_folder
from ehrlib.corpus.io import load_corpus
from ehrlib.corpus.release_import import import_release
from ehrlib.experiments.realdata import REAL_DATASETS, data_folder, demo_database
from ehrlib.inputs import project_path

__all__ = ["EHRCON_KEY", "demo_release", "ehrcon_variants"]

#: the variant name of EHRCon runs (``<run_id>-ehrcon``)
EHRCON_KEY = "ehrcon"


def _admit_times(demo: Path | None) -> dict[int, str]:
    """ADMITTIME per HADM_ID from the demo's ADMISSIONS.csv (the release's notes CSV carries it)."""
    path = None if demo is None else demo / "ADMISSIONS.csv"
    if path is None or not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        return {int(r["hadm_id"]): r["admittime"] for r in csv.DictReader(fh)}


def demo_release(out_dir: str | os.PathLike[str], *, notes: str | os.PathLike[str] = "tests/fixtures/realnotes",
                 line_base: int = 1, seed: int = 0) -> Path:
    """Write an EHRCon-shaped release (both variants, 4:1 test/valid) of a labelled corpus
    about demo admissions into ``out_dir``; returns the release folder.
    """
    corpus = load_corpus(project_path(notes))
    out = Path(out_dir)
    write_ehrcon_release(corpus.notes, corpus.gold, out, line_base=line_base, seed=seed,
                         admit_times=_admit_times(data_folder(REAL_DATASETS["mimic3"])))
    return out


def ehrcon_variants(work_dir: str | os.PathLike[str], release: str | os.PathLike[str] | None, *,
                    variant: str = "original", split: str | None = "test", db: str | os.PathLike[str] | None = None,
                    limit: int | None = None) -> tuple[dict[str, dict[str, object]], pd.DataFrame]:
    """(``{"ehrcon": {"db", "corpus", "limit", "split"}}``, skipped datasets) for the release in
    ``release`` checked against ``db`` (default: the MIMIC-III demo database, which holds
    the admissions of :func:`demo_release`; the real release needs a full MIMIC-III build).
    """
    label = f"EHRCon ({variant})"
    reason = None
    if release is None:
        reason = "no EHRCon release given (set ehrcon_release to the release folder)"
    elif not Path(release).is_dir():
        reason = f"EHRCon release {release} not found"
    if db is None and reason is None:
        demo = data_folder(REAL_DATASETS["mimic3"])
        if demo is None:
            reason = f"no database given and demo data {REAL_DATASETS['mimic3'].source} not found"
        else:
            work = project_path(work_dir) / "real"
            work.mkdir(parents=True, exist_ok=True)
            db = demo_database(REAL_DATASETS["mimic3"], demo, work)
    if reason is not None or release is None or db is None:
        return {}, pd.DataFrame([{"dataset": label, "reason": reason}], columns=["dataset", "reason"])
    corpus = project_path(work_dir) / "real" / f"ehrcon-{variant}"
    import_release(release, corpus, fmt="ehrcon", variant=variant, overwrite=is_import_folder(corpus))
    return ({EHRCON_KEY: {"db": str(db), "corpus": str(corpus), "limit": limit, "split": split}},
            pd.DataFrame(columns=["dataset", "reason"]))
