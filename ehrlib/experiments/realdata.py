"""Real demo databases with hand-written notes about their patients, as run variants.

The generalization experiment (paper Section 5.5, Tables 13-14) asks whether a method
survives a schema it was not built on. On real data that is the MIMIC-III demo in its
original and perturbed schema (same rows, renamed tables and columns) and the MIMIC-IV
demo, each verified on notes written by hand about real demo patients
(``tests/fixtures/realnotes`` for MIMIC-III, ``tests/fixtures/realnotes_mimic4`` for
MIMIC-IV). Databases are built once under the work folder and reused while their
source folder and build options are unchanged. A dataset whose source data or note set
is absent is reported as skipped, with the reason, never silently dropped.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ehrlib import __version__
from ehrlib.db.build import build_db
from ehrlib.inputs import project_path

__all__ = ["RealDataset", "REAL_DATASETS", "data_folder", "demo_database", "real_variants", "dataset_table"]


@dataclass(frozen=True, slots=True)
class RealDataset:
    """One real-patient evaluation set: a demo database (optionally perturbed) and its hand-written notes."""
    label: str
    source: str          # folder name of the demo CSVs under the shared data folder
    env: str             # environment variable that may point at that folder instead
    perturb: bool
    notes: str           # hand-written note set under tests/fixtures


REAL_DATASETS = {
    "mimic3": RealDataset("MIMIC-III demo (original)", "mimic-iii-demo", "EHRLIB_MIMIC3_DEMO", False, "realnotes"),
    "mimic3_perturbed": RealDataset("MIMIC-III demo (perturbed)", "mimic-iii-demo", "EHRLIB_MIMIC3_DEMO", True,
                                    "realnotes"),
    "mimic4": RealDataset("MIMIC-IV demo", "mimic-iv-demo", "EHRLIB_MIMIC4_DEMO", False, "realnotes_mimic4"),
}


def data_folder(ds: RealDataset) -> Path | None:
    """The demo CSV folder: ``$<env>`` if set, else ``../shared/data/<source>`` beside the project."""
    env = os.environ.get(ds.env)
    for p in ([Path(env)] if env else []) + [project_path("..") / "shared" / "data" / ds.source]:
        if p.is_dir():
            return p
    return None


def demo_database(ds: RealDataset, src: Path, work: Path) -> Path:
    """The demo database of ``ds`` under ``work``, built once and reused while its source and options hold."""
    db = work / f"{ds.source}{'-perturbed' if ds.perturb else ''}.duckdb"
    stamp_path = db.with_suffix(".json")
    stamp = {"source": str(src.resolve()), "perturb": ds.perturb, "ehrlib": __version__}
    if db.exists() and stamp_path.exists() and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
        return db
    build_db(src, db, perturb=ds.perturb, progress=False)
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    return db


def real_variants(work_dir: str | os.PathLike[str], datasets: list[str], *,
                  limit: int | None = None) -> tuple[dict[str, dict[str, object]], pd.DataFrame]:
    """(``{"demo_<key>": {"db", "corpus", "limit"}}`` run variants, a table of skipped datasets);
    the prefix keeps their run ids apart from the synthetic layouts' (``mimic3`` ...).
    """
    work = project_path(work_dir) / "real"
    work.mkdir(parents=True, exist_ok=True)
    variants: dict[str, dict[str, object]] = {}
    skipped = []
    for key in datasets:
        if key not in REAL_DATASETS:
            raise KeyError(f"unknown real dataset {key!r}; known: {', '.join(REAL_DATASETS)}")
        ds = REAL_DATASETS[key]
        src = data_folder(ds)
        notes = project_path("tests/fixtures") / ds.notes
        if src is None:
            skipped.append({"dataset": ds.label, "reason": f"demo data {ds.source} not found (set {ds.env})"})
            continue
        if not (notes / "gold.jsonl").is_file():
            skipped.append({"dataset": ds.label, "reason": f"note set tests/fixtures/{ds.notes} not present"})
            continue
        variants[f"demo_{key}"] = {"db": str(demo_database(ds, src, work)), "corpus": str(notes), "limit": limit}
    return variants, pd.DataFrame(skipped, columns=["dataset", "reason"])


def dataset_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Run summaries (``compare_runs``) with a readable ``dataset`` column: the real
    datasets by their label, synthetic layouts as ``synthetic <layout>``.
    """
    labels = {f"demo_{k}": d.label for k, d in REAL_DATASETS.items()} | {"ehrcon": "EHRCon"}
    return summary.assign(dataset=summary["variant"].map(lambda v: labels.get(v, f"synthetic {v}")),
                          backbone=summary["model"].astype(object).fillna(summary["backend"]))
