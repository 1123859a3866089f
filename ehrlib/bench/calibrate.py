"""``ehrlib calibrate``: refit the confidence calibrator from the development sets, in one command.

Runs the offline inspector uncalibrated on every labelled real-patient development set
(:data:`ehrlib.bench.quality.DEV_SETS`, on the MIMIC demo databases) and on a synthetic
hospital of its own (another seed than the quality benchmark's), pairs predictions with
gold by the deterministic matcher, scores each set leave-one-set-out, picks the abstention
threshold on those held-out scores, fits the final model on all sets, and writes the model
(``offline.json``) and its manifest (``manifest.json``: sets, features, versions, date,
LOSO metrics) — by default into the package's ``ehrlib/data/calibration/``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import functools
import hashlib
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ehrlib.corpus.io import write_json
from ehrlib.errors import DataError
from ehrlib.pipeline.calibration.kinds import DEFAULT_MODEL, MODEL_KINDS

if TYPE_CHECKING:
    from ehrlib.pipeline.calibration.training import SetData

__all__ = ["register", "collect_dev_sets", "refit", "MANIFEST_NAME"]

MANIFEST_NAME = "manifest.json"
#: the synthetic hospital's train split, a training set beside the real-patient sets
SYNTHETIC_TRAIN = "synthetic_seed1"


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def collect_dev_sets(work: Path, *, progress: bool = False, names: Sequence[str] | None = None) -> list[SetData]:
    """Run the inspector uncalibrated on each development set present and collect its data."""
    # deferred: the runner and the quality benchmark are heavy; `ehrlib --help` must stay fast
    from ehrlib.bench.quality import real_patient_sets
    from ehrlib.pipeline.calibration.training import collect_run, pool_parts
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.runner import run_experiment

    # a fresh run id per call: a refit after a rule change must never resume older runs
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
    out = []
    wanted = dict(real_patient_sets(work))
    if names is None or SYNTHETIC_TRAIN in names:
        wanted[SYNTHETIC_TRAIN] = synthetic_train(work)
    for name, (cdir, parts) in wanted.items():
        if names is not None and name not in names:
            continue
        pieces = []
        for k, (db, ids) in enumerate(parts):
            params = RunParams(corpus=str(cdir), db=str(db), method="inspector", backend="offline",
                               run_id=f"calibrate-{stamp}-{name}-{k}", runs_dir=str(work / "runs"),
                               note_ids=tuple(ids or ()), progress=progress, calibrator="none", abstain_below=0.0)
            pieces.append(collect_run(name, run_experiment(params), cdir, db))
        out.append(pool_parts(name, pieces))
    return out


def synthetic_train(work: Path) -> tuple[Path, list[tuple[Path, list[str] | None]]]:
    """A synthetic hospital of its own (seed 1; the quality benchmark scores seed 0's test
    split, which this never sees), so the calibrator also knows generated notes:
    (corpus folder, [(database, every note)]).
    """
    # deferred: the synthetic hospital is built only when a refit runs
    from ehrlib.synth import generate_hospital
    from ehrlib.synth.notes import write_corpus

    db, corpus_dir = work / "calibration-hospital.duckdb", work / "calibration-corpus"
    if not db.exists():
        generate_hospital(db, patients=30, seed=1)
    if not (corpus_dir / "gold.jsonl").exists():
        write_corpus(db, corpus_dir, seed=1, notes_per_type=10, progress=False)
    return corpus_dir, [(db, None)]


def refit(sets: Sequence[SetData], out: Path | None = None, *, kind: str = DEFAULT_MODEL,
          fit: Callable[..., Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """Fit a ``kind`` model on ``sets`` (LOSO metrics, threshold, final model) and write
    model + manifest (``fit``: another fitting function, for tests).
    """
    # deferred: the calibration modules load numpy and the offline pipeline; `ehrlib --help` stays fast
    from ehrlib.pipeline.calibration.apply import bundled_path
    from ehrlib.pipeline.calibration.features import CATEGORICAL, NUMERIC
    from ehrlib.pipeline.calibration.model import FEATURE_VERSION, FORMAT_VERSION, fit_calibrator
    from ehrlib.pipeline.calibration.training import (
        MIN_RECALL,
        TARGET_PRECISION,
        choose_threshold,
        loso_probabilities,
        set_metrics,
    )
    from ehrlib.pipeline.calibration.trees import GBM_PARAMS

    fit = fit or functools.partial(fit_calibrator, kind=kind)
    if len(sets) < 2:
        raise DataError("calibration needs at least two labelled development sets (leave-one-set-out); "
                        "are the MIMIC demo databases present (EHRLIB_MIMIC3_DEMO, EHRLIB_MIMIC4_DEMO)?")
    loso = loso_probabilities(sets, fit)
    threshold = choose_threshold(sets, loso)
    metrics = [set_metrics(s, loso[s.name], threshold) for s in sets]
    rows, y, groups = [], [], []
    for s in sets:
        idx = [i for i, p in enumerate(s.preds) if p.label in ("consistent", "inconsistent")]
        rows += [s.features[i] for i in idx]
        y += [s.right[i] for i in idx]
        groups += [s.name] * len(idx)
    model = fit(rows, y, groups)
    fitted = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    path = Path(out) if out is not None else bundled_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(model.to_json(fitted), path)
    info = {"model_file": path.name, "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "fitted": fitted, "model": kind, "format_version": FORMAT_VERSION, "feature_version": FEATURE_VERSION,
            "ehrlib_version": _version("ehrlib"), "sklearn_version": _version("scikit-learn"),
            "training_sets": {s.name: {"predictions": len(s.preds), "right": int(sum(s.right))} for s in sets},
            "target": "lenient matcher credits the prediction (unmatched predictions count as not right)",
            "gbm_params": dict(GBM_PARAMS) if kind == "gbm" else None,
            "threshold_rule": f"lowest threshold with pooled real-patient LOSO alarm precision >= {TARGET_PRECISION} "
                              f"and inconsistent recall >= {MIN_RECALL}",
            "features": {"categorical": list(CATEGORICAL), "numeric": list(NUMERIC)},
            "abstain_below_chosen": threshold, "loso": metrics}
    write_json(info, path.with_name(MANIFEST_NAME) if out is None else path.with_suffix(".manifest.json"))
    return path, info


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` command to the CLI."""
    p = sub.add_parser("calibrate", help="refit the confidence calibrator on the development sets",
                       description="Run the offline inspector on the labelled development sets, fit the "
                                   "confidence calibrator (leave-one-set-out metrics in its manifest) and "
                                   "write it (default: the bundled ehrlib/data/calibration/offline.json).")
    p.add_argument("--out", default=None, help="model file to write (default: the bundled one)")
    p.add_argument("--model", choices=MODEL_KINDS, default=DEFAULT_MODEL,
                   help=f"model kind: boosted trees or logistic regression (default: {DEFAULT_MODEL})")
    p.add_argument("--work-dir", default=None,
                   help="keep the demo databases (built once) and the runs here (default: temporary)")
    p.set_defaults(func=_calibrate)


def _calibrate(args: argparse.Namespace) -> int:
    # deferred: params pull the run-parameter checks; only this command needs the default
    from ehrlib.pipeline.params import DEFAULT_ABSTAIN_BELOW

    with tempfile.TemporaryDirectory(prefix="ehrlib-calibrate-") as tmp:
        work = Path(args.work_dir) if args.work_dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        path, info = refit(collect_dev_sets(work), Path(args.out) if args.out else None, kind=args.model)
    print(f"wrote {path} ({args.model}; abstain_below chosen leave-one-set-out: {info['abstain_below_chosen']}; "
          f"the default in RunParams is {DEFAULT_ABSTAIN_BELOW})")
    for m in info["loso"]:
        print(f"  {m['set']}: alarm precision {m['alarm_precision_before']} -> {m['alarm_precision_after']}, "
              f"inconsistent recall {m['inconsistent_recall_before']} -> {m['inconsistent_recall_after']}, "
              f"ECE {m['ece']}, F1 {m['f1_before']} -> {m['f1_after']}")
    return 0
