"""`ehrlib demo`: the whole study on the embedded synthetic hospital, offline.

Builds the seeded synthetic hospital, writes its note corpus with gold labels, runs the
offline EHR-Inspector and the surface-level baseline over the test split, judges both
with the deterministic matcher, writes reports and figures, and prints a summary. Each
step reuses what an earlier (possibly interrupted) run left in ``runs/demo`` when it is
complete and matches the parameters, so a rerun resumes instead of starting over.
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ehrlib.corpus.io import load_corpus
from ehrlib.corpus.stats import table1
from ehrlib.db import connect, read_manifest, summarize
from ehrlib.experiments import run_notebooks
from ehrlib.judge.evaluate import evaluate_run
from ehrlib.pipeline.params import load_params
from ehrlib.pipeline.runner import run_experiment
from ehrlib.report.build import build_report
from ehrlib.result_tables import write_table
from ehrlib.synth import GENERATOR_VERSION, generate_hospital
from ehrlib.synth.notes import write_corpus

__all__ = ["DemoConfig", "run_demo", "register"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DemoConfig:
    out_dir: Path = Path("runs/demo")
    figures_dir: Path = Path("figures")
    patients: int = 40
    seed: int = 0
    notes_per_type: int = 10
    methods: tuple[str, ...] = ("inspector", "surface")
    fresh: bool = False
    notebooks: bool = False


def _hospital(cfg: DemoConfig) -> Path:
    db = cfg.out_dir / "hospital.duckdb"
    stamp = {"generator": GENERATOR_VERSION, "patients": cfg.patients, "seed": cfg.seed}
    stamp_path = cfg.out_dir / "hospital.json"
    if db.exists() and stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        print(f"[1/5] synthetic hospital: reusing {db}")
    else:
        t0 = time.perf_counter()
        generate_hospital(db, patients=cfg.patients, seed=cfg.seed)
        stamp_path.write_text(json.dumps(stamp))
        print(f"[1/5] synthetic hospital: built {db} in {time.perf_counter() - t0:.1f} s")
    con = connect(db)
    try:
        summary = summarize(con)
        manifest = read_manifest(con)
    finally:
        con.close()
    print("\n".join("      " + line for line in summary.lines()[:1]))
    log.debug("manifest %s", manifest)
    return db


def _corpus(cfg: DemoConfig, db: Path) -> Path:
    corpus = cfg.out_dir / "corpus"
    stamp = {"db": str(db), "seed": cfg.seed, "notes_per_type": cfg.notes_per_type}
    stamp_path = cfg.out_dir / "corpus.json"
    if (corpus / "gold.jsonl").exists() and stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        print(f"[2/5] corpus: reusing {corpus}")
    else:
        write_corpus(db, corpus, seed=cfg.seed, notes_per_type=cfg.notes_per_type)
        stamp_path.write_text(json.dumps(stamp))
        print(f"[2/5] corpus: wrote {corpus}")
    print(table1(load_corpus(corpus)).to_string())
    return corpus


def _run(cfg: DemoConfig, method: str, db: Path, corpus: Path) -> Path:
    runs_dir = cfg.out_dir / "runs"
    # offline runs take seconds: start them afresh, so a demo after a code update never
    # reports predictions resumed from the previous version
    shutil.rmtree(runs_dir / f"demo-{method}", ignore_errors=True)
    params = load_params(None, corpus=str(corpus), db=str(db), method=method, backend="offline",
                         run_id=f"demo-{method}", runs_dir=str(runs_dir))
    t0 = time.perf_counter()
    run_dir = run_experiment(params)
    print(f"[3/5] {method}: predictions in {run_dir} ({time.perf_counter() - t0:.1f} s)")
    return run_dir


def _judge_and_report(cfg: DemoConfig, run_dir: Path, corpus: Path):
    summary = evaluate_run(run_dir, corpus, judge="matcher", progress=False)
    build_report(run_dir, corpus, figures_dir=None, progress=False)  # per-run figures stay in the run dir
    return summary


def run_demo(cfg: DemoConfig) -> dict[str, Path]:
    """Run every step; returns the paths of the hospital, corpus and run folders."""
    if cfg.fresh and cfg.out_dir.exists():
        shutil.rmtree(cfg.out_dir)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    db = _hospital(cfg)
    corpus = _corpus(cfg, db)
    runs = {m: _run(cfg, m, db, corpus) for m in cfg.methods}
    print("[4/5] judging with the deterministic matcher and writing reports")
    rows = []
    for method, run_dir in runs.items():
        rows.append(_judge_and_report(cfg, run_dir, corpus))
    metrics = pd.concat(rows, ignore_index=True)
    _write_overview(cfg, metrics)
    print("[5/5] results (mean over notes):")
    cols = [c for c in ("method", "mode", "n_notes", "recall", "precision", "f1", "n_gold", "n_pred")
            if c in metrics.columns]
    print(metrics[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if cfg.notebooks:
        run_notebooks("all")
    return {"db": db, "corpus": corpus, **runs}


def _write_overview(cfg: DemoConfig, metrics) -> None:
    """The README picture: recall/precision/F1 per method, harsh vs lenient."""
    # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
    from ehrlib.viz.plots import plot_main_results
    # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
    from ehrlib.viz.save import savefig

    write_table(metrics, cfg.figures_dir / "demo_metrics.csv")
    fig = plot_main_results(metrics, title="Offline EHR-Inspector vs surface baseline (synthetic corpus)")
    savefig(fig, "overview", prefix="demo", out_dir=cfg.figures_dir, formats=("png",))


def _cmd(args: argparse.Namespace) -> int:
    cfg = DemoConfig(out_dir=Path(args.out), patients=args.patients, seed=args.seed,
                     notes_per_type=args.notes_per_type, fresh=args.fresh, notebooks=args.notebooks)
    run_demo(cfg)
    return 0


def register(sub) -> None:
    p = sub.add_parser("demo", help="run the whole study on the embedded synthetic hospital (offline)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="runs/demo", help="working folder (default: runs/demo)")
    defaults = DemoConfig()
    p.add_argument("--patients", type=int, default=defaults.patients)
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument("--notes-per-type", type=int, default=defaults.notes_per_type)
    p.add_argument("--fresh", action="store_true", help="discard runs/demo and start over")
    p.add_argument("--notebooks", action="store_true", help="also execute every notebook with papermill")
    p.set_defaults(func=_cmd)
