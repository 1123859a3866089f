"""DataFrame views for the notebooks: the schema, a built database, a run and its findings.

Each function turns a library object (``ehrlib.schema``, a DuckDB build manifest, a run
folder) into a tidy table a notebook displays or plots, so the notebooks stay thin.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ehrlib import schema
from ehrlib.analysis.stats import paired_bootstrap
from ehrlib.corpus.io import read_predictions
from ehrlib.db import connect, summarize
from ehrlib.findings import Findings
from ehrlib.judge.evaluate import load_run, read_judgements
from ehrlib.pipeline.attempts import current_lines

__all__ = ["schema_overview", "schema_mapping", "database_overview", "stage_overview", "run_failures",
           "note_findings", "compare_runs", "ablation_table"]


def schema_overview() -> pd.DataFrame:
    """One row per logical table: kind, column count, time kind, roles, dictionary."""
    rows = [{"table": t.name, "kind": t.kind, "n_columns": len(t.columns), "time": t.time_kind,
             "roles": ", ".join(f"{r}={c}" for r, c in t.roles.items()), "dictionary": t.dictionary,
             "description": t.description} for t in schema.LOGICAL.values()]
    return pd.DataFrame(rows)


def schema_mapping(flavors: Sequence[str] = ("mimic3", "mimic4", "perturbed"),
                   tables: Sequence[str] | None = None) -> pd.DataFrame:
    """Where each logical column lives in each flavor (``table.column``; empty if absent)."""
    rows = []
    for name, logical in schema.LOGICAL.items():
        if tables is not None and name not in tables:
            continue
        for col in logical.columns:
            row: dict[str, str | None] = {"table": name, "column": col}
            for flavor in flavors:
                smap = schema.schema_map(flavor)
                phys = smap.tables.get(name)
                target = phys.columns.get(col) if phys is not None else None
                qualified = f"{phys.schema}.{phys.name}" if phys is not None and phys.schema else (
                    phys.name if phys is not None else None)
                row[flavor] = f"{qualified}.{target}" if target else None
            rows.append(row)
    return pd.DataFrame(rows)


def database_overview(db_path: str | os.PathLike[str]) -> tuple[str, pd.DataFrame]:
    """(one-line summary, per-table rows) of a built ehrlib database."""
    con = connect(db_path)
    try:
        summary = summarize(con)
    finally:
        con.close()
    frame = pd.DataFrame(summary.tables, columns=["table", "status", "rows"])
    return summary.lines()[0], frame


def stage_overview(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Per-stage calls, wall time and LLM usage of a run (from its manifest)."""
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    rows = [{"stage": name, **values} for name, values in (manifest.get("stages") or {}).items()]
    return pd.DataFrame(rows)


def run_failures(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """What failed in a run (failures.jsonl: note, stage, entity, error), counted apart
    from predictions; empty when nothing failed.
    """
    path = Path(run_dir) / "failures.jsonl"
    cols = ["note_id", "stage", "entity_id", "error"]
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=cols)
    df = pd.read_json(path, lines=True, dtype={"note_id": str, "entity_id": str})
    keep = current_lines(run_dir, "failures.jsonl")   # a rerun note's earlier failures are history
    if len(keep) == len(df):
        df = df[keep].reset_index(drop=True)
    return df[[c for c in cols if c in df.columns]]


def note_findings(run_dir: str | os.PathLike[str], note_id: str | None = None, *, judge: str = "matcher",
                  mode: str = "lenient") -> pd.DataFrame:
    """A note's findings (the run's first note when None) in line order: the rows of
    :func:`ehrlib.findings.finding_row` (``verdict`` is the method's: contradiction /
    missing / unverified / consistent) plus the judge's word on each, ``judge_verdict``
    (correct / incorrect; "no gold counterpart", or "not judged" for a run without
    judgements, e.g. over unlabelled notes) and the ``gold_entity`` it matched.
    ``findings_by_confidence.csv`` of ``ehrlib report`` has a run's findings in review order.
    """
    # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
    from ehrlib.viz.viewer import prediction_verdicts

    keep = current_lines(run_dir, "predictions.jsonl")   # each note's last attempt only
    preds = [p for p, k in zip(read_predictions(Path(run_dir) / "predictions.jsonl"), keep, strict=False) if k]
    if note_id is None:
        note_id = preds[0].note_id if preds else ""
    mine = [j for j in read_judgements(run_dir) if j.judge == judge and j.mode == mode]
    verdicts = prediction_verdicts([j for j in mine if j.note_id == note_id])
    unmatched = "no gold counterpart" if mine else "not judged"
    chosen = [(i, p) for i, p in enumerate(preds) if p.note_id == note_id]
    frame = Findings.of(p for _, p in chosen).to_frame()
    frame["judge_verdict"] = [verdicts[i].verdict if i in verdicts else unmatched for i, _ in chosen]
    frame["gold_entity"] = [verdicts[i].entity_id if i in verdicts else None for i, _ in chosen]
    return frame.sort_values("line", kind="stable", ignore_index=True)


def _labelled(run_dir: str | os.PathLike[str]) -> bool:
    """Whether the corpus a run read has gold labels (its manifest names the corpus)."""
    return load_run(run_dir).labelled


def compare_runs(run_dirs: Mapping[str, str | os.PathLike[str]] | Sequence[str | os.PathLike[str]], *,
                 table: str = "metrics", judge: str = "matcher", mode: str | None = None) -> pd.DataFrame:
    """One table (``metrics``, ``metrics_by_note_type``, ``metrics_ci``, ``error_types``, ...)
    of several judged runs, stacked, with a ``variant`` column: the mapping's keys, or each
    run's id; ``mode`` keeps one judge mode (harsh | lenient). ``metrics`` gains the F1
    bootstrap bounds (``f1_low``, ``f1_high``) when ``ehrlib report`` wrote them.
    """
    items = run_dirs.items() if isinstance(run_dirs, Mapping) else ((Path(r).name, r) for r in run_dirs)
    frames = []
    for name, run_dir in items:
        if not (Path(run_dir) / f"{table}.csv").exists() and not _labelled(run_dir):
            continue  # a run over unlabelled notes: no metrics to stack (its findings are in the viewer)
        df = pd.read_csv(Path(run_dir) / f"{table}.csv")
        if "judge" in df.columns:
            df = df[df["judge"] == judge]
        if mode is not None and "mode" in df.columns:
            df = df[df["mode"] == mode]
        ci_path = Path(run_dir) / "metrics_ci.csv"
        if table == "metrics" and ci_path.exists():  # bootstrap bounds for F1 error bars
            ci = pd.read_csv(ci_path)[["judge", "mode", "f1_low", "f1_high"]]
            df = df.merge(ci, on=["judge", "mode"], how="left")
        frames.append(df.assign(variant=name)[["variant", *df.columns]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def ablation_table(run_dirs: Mapping[str, str | os.PathLike[str]], baseline: str, *, judge: str = "matcher",
                   metric: str = "f1", n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per variant and mode: mean ``metric`` over notes and its paired-bootstrap difference
    to ``baseline`` (over the notes both scored), with a 95% interval and one-sided p.
    """
    if baseline not in run_dirs:
        raise KeyError(f"baseline {baseline!r} is not one of the variants {list(run_dirs)}")
    scores = compare_runs(run_dirs, table="note_scores", judge=judge)
    if scores.empty:  # unlabelled runs: nothing was scored
        return pd.DataFrame(columns=["variant", "mode", metric, "n_notes"])
    rows = []
    for (variant, mode), grp in scores.groupby(["variant", "mode"], sort=False):
        base = scores[(scores["variant"] == baseline) & (scores["mode"] == mode)]
        row = {"variant": variant, "mode": mode, metric: grp[metric].mean(), "n_notes": int(grp[metric].notna().sum())}
        if variant != baseline:
            diff = paired_bootstrap(grp, base, metric, n_boot=n_boot, seed=seed)
            row.update({f"diff_{metric}": diff["diff"], "diff_low": diff["low"], "diff_high": diff["high"],
                        "p_not_better": diff["p_not_better"]})
        rows.append(row)
    return pd.DataFrame(rows)
