"""`ehrlib demo`: the whole study on the embedded synthetic hospital, offline.

Builds the seeded synthetic hospital, writes its note corpus with gold labels, runs the
offline EHR-Inspector and the surface-level baseline over its notes, judges both
with the deterministic matcher, writes reports and figures, and prints a summary. The
two methods also run on the hand-written notes for real MIMIC-III demo patients (the
held-out set) when the MIMIC-III demo folder is found; otherwise the committed
benchmark numbers (``figures/bench_quality.csv``) are shown and the figure says so.
Each step reuses what an earlier (possibly interrupted) run left in ``runs/demo`` when
it is complete and matches the parameters, so a rerun resumes instead of starting over.
The last three lines say what ran, the headline numbers and which files to open.
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ehrlib.experiments import papermill, run_notebooks

# the steps import their code when they run (pandas, DuckDB, the pipeline): the CLI
# builds this command's parser without them, so `ehrlib --help` stays fast
if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DemoConfig", "run_demo", "register"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DemoConfig:
    """Sizes and folders of one demo run (defaults: the embedded synthetic study)."""
    out_dir: Path = Path("runs/demo")
    figures_dir: Path = Path("figures")
    patients: int = 40
    seed: int = 0
    notes_per_type: int = 10
    methods: tuple[str, ...] = ("inspector", "surface")
    fresh: bool = False
    notebooks: bool = False


def _hospital(cfg: DemoConfig) -> Path:
    # deferred: loads when this step runs, so the CLI builds its parser without it
    from ehrlib.db import connect, read_manifest, summarize
    from ehrlib.synth import GENERATOR_VERSION, generate_hospital

    db = cfg.out_dir / "hospital.duckdb"
    stamp = {"generator": GENERATOR_VERSION, "patients": cfg.patients, "seed": cfg.seed}
    stamp_path = cfg.out_dir / "hospital.json"
    if db.exists() and stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        print(f"[1/6] synthetic hospital: reusing {db}")
    else:
        t0 = time.perf_counter()
        generate_hospital(db, patients=cfg.patients, seed=cfg.seed)
        stamp_path.write_text(json.dumps(stamp))
        print(f"[1/6] synthetic hospital: built {db} in {time.perf_counter() - t0:.1f} s")
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
    # deferred: loads when this step runs, so the CLI builds its parser without it
    from ehrlib.corpus.io import load_corpus
    from ehrlib.corpus.stats import table1
    from ehrlib.synth.notes import write_corpus

    corpus = cfg.out_dir / "corpus"
    stamp = {"db": str(db), "seed": cfg.seed, "notes_per_type": cfg.notes_per_type}
    stamp_path = cfg.out_dir / "corpus.json"
    if (corpus / "gold.jsonl").exists() and stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        action = "reusing"
    else:
        write_corpus(db, corpus, seed=cfg.seed, notes_per_type=cfg.notes_per_type)
        stamp_path.write_text(json.dumps(stamp))
        action = "wrote"
    print(f"[2/6] corpus: {action} {corpus}: {_corpus_line(table1(load_corpus(corpus)))}")
    return corpus


def _corpus_line(stats: pd.DataFrame) -> str:
    """Table 1 in one line: notes per type, gold statements, inconsistent ones."""
    types = ", ".join(f"{int(row['notes'])} {name}" for name, row in stats.drop(index="total").iterrows())
    total = stats.loc["total"]
    return (f"{int(total['notes'])} notes ({types}), {int(total['entities'])} gold statements, "
            f"{int(total['inconsistent'])} inconsistent")


def _run(cfg: DemoConfig, method: str, db: Path, corpus: Path, run_id: str | None = None,
         step: str = "3/6") -> Path:
    # deferred: loads when this step runs, so the CLI builds its parser without it
    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.runner import run_experiment

    runs_dir = cfg.out_dir / "runs"
    run_id = run_id or f"demo-{method}"
    # offline runs take seconds: start them afresh, so a demo after a code update never
    # reports predictions resumed from the previous version
    shutil.rmtree(runs_dir / run_id, ignore_errors=True)
    params = load_params(None, corpus=str(corpus), db=str(db), method=method, backend="offline",
                         run_id=run_id, runs_dir=str(runs_dir))
    t0 = time.perf_counter()
    run_dir = run_experiment(params)
    print(f"[{step}] {method}: predictions in {run_dir} ({time.perf_counter() - t0:.1f} s)")
    return run_dir


def _judge_and_report(run_dir: Path, corpus: Path) -> tuple[pd.DataFrame, Path | None]:
    """The matcher's summary of one run and its findings-viewer index page."""
    # deferred: loads when this step runs, so the CLI builds its parser without it
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.report.build import build_report

    summary = evaluate_run(run_dir, corpus, judge="matcher", progress=False)
    report = build_report(run_dir, corpus, figures_dir=None, progress=False)  # per-run figures stay in the run dir
    index = [p for p in report.viewer if p.name == "index.html"]
    return summary, (index[0] if index else None)


_REAL_CORPUS = "realnotes_holdout"
_BENCH_CSV = "bench_quality.csv"


@dataclass(frozen=True, slots=True)
class _RealNotes:
    """Lenient metrics of each method on the real-patient notes, and where they come from."""
    metrics: pd.DataFrame
    ran: bool  # run by this demo (else read from the committed benchmark file)
    source: str


def _real_notes(cfg: DemoConfig) -> _RealNotes | None:
    """Both methods on the held-out hand-written notes for real MIMIC-III demo patients.

    Runs them when the MIMIC-III demo folder and the fixture are present; else reads the
    committed benchmark CSV; else (an installed package away from the repository) None.
    """
    # deferred: loads when this step runs, so the CLI builds its parser without it
    import pandas as pd

    from ehrlib.bench.build import demo_folder
    from ehrlib.bench.realnotes import fixture_dir
    from ehrlib.db.build import build_db

    src, corpus = demo_folder(), fixture_dir("holdout")
    if src is not None and (corpus / "gold.jsonl").exists():
        with tempfile.TemporaryDirectory(prefix="ehrlib-demo-") as tmp:
            t0 = time.perf_counter()
            db = build_db(src, Path(tmp) / "mimic3_demo.duckdb", progress=False).path
            print(f"[4/6] real-patient notes: MIMIC-III demo database built in {time.perf_counter() - t0:.1f} s")
            rows = [_judge_and_report(_run(cfg, m, db, corpus, run_id=f"{_REAL_CORPUS}-{m}", step="4/6"), corpus)[0]
                    for m in cfg.methods]
        metrics = pd.concat(rows, ignore_index=True)
        return _RealNotes(metrics[metrics["mode"] == "lenient"], True,
                          "run by this demo against the MIMIC-III demo database")
    bench = cfg.figures_dir / _BENCH_CSV
    if bench.exists():
        frame = pd.read_csv(bench)
        frame = frame[(frame["corpus"] == _REAL_CORPUS) & (frame["scope"] == "all") & (frame["mode"] == "lenient")
                      & frame["method"].isin(cfg.methods)]
        if not frame.empty:
            print(f"[4/6] real-patient notes: MIMIC-III demo data not found; numbers read from {bench}")
            return _RealNotes(frame, False, f"read from {bench}, as the MIMIC-III demo data was not found")
    print("[4/6] real-patient notes: skipped (no MIMIC-III demo data and no benchmark file)")
    return None


def run_demo(cfg: DemoConfig) -> dict[str, Path]:
    """Run every step; returns the paths of the hospital, corpus and run folders."""
    # deferred: loads when this step runs, so the CLI builds its parser without it
    import pandas as pd

    if cfg.notebooks:
        papermill()  # fail before the work, not after it, when the notebooks extra is missing
    if cfg.fresh and cfg.out_dir.exists():
        shutil.rmtree(cfg.out_dir)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    db = _hospital(cfg)
    corpus = _corpus(cfg, db)
    runs = {m: _run(cfg, m, db, corpus) for m in cfg.methods}
    real = _real_notes(cfg)
    print("[5/6] judging with the deterministic matcher and writing reports")
    judged = {method: _judge_and_report(run_dir, corpus) for method, run_dir in runs.items()}
    metrics = pd.concat([summary for summary, _ in judged.values()], ignore_index=True)
    figures = _write_overview(cfg, metrics, real)
    print("[6/6] results on the synthetic notes (mean over notes):")
    print(results_table(metrics))
    notebooks: list[Path] = []
    if cfg.notebooks:
        notebooks = run_notebooks("all")
    viewer = judged[cfg.methods[0]][1]
    print("\n".join(closing_lines(cfg, metrics, real, notebooks, [viewer, *figures])))
    return {"db": db, "corpus": corpus, **runs}


def results_table(metrics: pd.DataFrame) -> str:
    """One row per method and judge mode, as text; a method's harsh and lenient rows fold
    into one when every number agrees (with the deterministic matcher they often do).
    """
    # deferred: loads when this step runs, so the CLI builds its parser without it
    import pandas as pd

    cols = [c for c in ("method", "mode", "n_notes", "recall", "precision", "f1", "n_gold", "n_pred")
            if c in metrics.columns]
    parts = []
    for _, part in metrics[cols].groupby("method", sort=False):
        if len(part) > 1 and len(part.drop(columns="mode").round(6).drop_duplicates()) == 1:
            part = part.iloc[[0]].assign(mode="harsh = lenient")
        parts.append(part)
    return pd.concat(parts, ignore_index=True).to_string(index=False, float_format=lambda v: f"{v:.3f}")


def _f1s(frame: pd.DataFrame, methods: tuple[str, ...]) -> str:
    lenient = frame[frame["mode"] == "lenient"].set_index("method")["f1"]
    return ", ".join(f"{m} {float(lenient[m]):.3f}" for m in methods if m in lenient.index)


def closing_lines(cfg: DemoConfig, metrics: pd.DataFrame, real: _RealNotes | None, notebooks: list[Path],
                  to_open: list[Path | None]) -> list[str]:
    """The demo's last three lines: what ran, the headline numbers, the files to open."""
    n_notes = int(metrics["n_notes"].iloc[0])
    ran = f"ran: {' and '.join(cfg.methods)} (offline backend, matcher judge) on {n_notes} synthetic notes"
    if real is not None and real.ran:
        ran += f" and {int(real.metrics['n_notes'].iloc[0])} held-out real-patient notes"
    if notebooks:
        ran += f", then {len(notebooks)} notebooks"
    headline = f"lenient F1, synthetic: {_f1s(metrics, cfg.methods)}"
    if real is not None:
        headline += f"; real-patient notes: {_f1s(real.metrics, cfg.methods)}"
        headline += "" if real.ran else " (from the benchmark file)"
    paths = [str(p) for p in to_open if p is not None]
    paths += [f"{notebooks[0].parent}/"] if notebooks else []
    paths.append(f"{cfg.figures_dir}/")
    return [ran, headline, "open: " + "  ".join(paths)]


def _write_overview(cfg: DemoConfig, metrics: pd.DataFrame, real: _RealNotes | None) -> list[Path]:
    """The README picture: recall/precision/F1 per method (lenient judge), the synthetic
    split and the real-patient notes side by side.
    """
    # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
    import pandas as pd

    from ehrlib.result_tables import write_table
    from ehrlib.viz.plots import plot_main_results
    from ehrlib.viz.save import savefig

    write_table(metrics, cfg.figures_dir / "demo_metrics.csv")
    panels = [_panel(metrics[metrics["mode"] == "lenient"], "synthetic notes (embedded hospital)")]
    caption = "Lenient matcher judge, per-note mean."
    if real is not None:
        panels.append(_panel(real.metrics, "hand-written notes, real MIMIC-III demo patients (held out)"))
        caption += f" Real-patient notes: {real.source}."
    else:
        caption += " Real-patient notes not shown: no MIMIC-III demo data and no benchmark file."
    fig = plot_main_results(pd.concat(panels, ignore_index=True), panel="corpus", methods=list(cfg.methods),
                            title="Offline EHR-Inspector vs surface baseline", caption=caption)
    return savefig(fig, "overview", prefix="demo", out_dir=cfg.figures_dir, formats=("png",))


def _panel(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    notes, gold = int(frame["n_notes"].iloc[0]), int(frame["n_gold"].iloc[0])
    return frame.assign(corpus=f"{name}\n{notes} notes, {gold} gold statements")


def _cmd(args: argparse.Namespace) -> int:
    cfg = DemoConfig(out_dir=Path(args.out), patients=args.patients, seed=args.seed,
                     notes_per_type=args.notes_per_type, fresh=args.fresh, notebooks=args.notebooks)
    run_demo(cfg)
    return 0


def register(sub) -> None:
    """Add the ``demo`` command to the CLI."""
    p = sub.add_parser("demo", help="run the whole study on the embedded synthetic hospital (offline)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="runs/demo", help="working folder (default: runs/demo)")
    defaults = DemoConfig()
    p.add_argument("--patients", type=int, default=defaults.patients,
                   help=f"patients of the synthetic hospital (default {defaults.patients})")
    p.add_argument("--seed", type=int, default=defaults.seed, help=f"random seed (default {defaults.seed})")
    p.add_argument("--notes-per-type", type=int, default=defaults.notes_per_type,
                   help=f"synthetic notes of each type (default {defaults.notes_per_type})")
    p.add_argument("--fresh", action="store_true", help="discard runs/demo and start over")
    p.add_argument("--notebooks", action="store_true", help="also execute every notebook with papermill")
    p.set_defaults(func=_cmd)
