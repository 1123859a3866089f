"""Several judges on one run, and runs side by side: agreement, disagreements, the paper's
Table 2 layout and the spread over repeated runs and judge passes (Appendix G).

A run folder's ``judgements.jsonl`` holds every judge's verdicts (see
:mod:`ehrlib.judge.evaluate`), so everything here reads files and never re-judges, except
:func:`judge_run_with`, which adds one judge's verdicts.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ehrlib.corpus.io import read_notes
from ehrlib.judge.evaluate import evaluate_run, load_run, read_judgements
from ehrlib.judge.llm_judge import render_prediction
from ehrlib.judge.metrics import judge_agreement
from ehrlib.judge.standin import standin_client

__all__ = ["STANDIN", "judge_run_with", "judge_runs", "repeat_variants", "agreement_table", "disagreements", "runs_table", "paper_layout",
           "spread_table"]

#: judgement name of the offline stand-in (ehrlib.judge.standin)
STANDIN = "standin"
_METRICS = ("recall", "precision", "f1")


def judge_run_with(run_dir: str | os.PathLike[str], llm: Mapping[str, Any] | None = None, *,
                   label: str | None = None) -> str:
    """Judge a run in both modes with the LLM named by ``llm`` (``backend``, ``model``, ...)
    or, with no ``llm``, with the offline stand-in; returns the judge's name in the
    judgements. ``label`` names a repeated pass (``<judge>-pass2``)."""
    if llm and llm.get("backend"):
        settings = {k: v for k, v in llm.items() if k != "backend"}
        model = str(settings.get("model") or llm["backend"])
        evaluate_run(run_dir, judge=model, llm={"backend": llm["backend"], **settings}, label=label, progress=False)
        return label or model
    name = label or STANDIN
    for mode in ("harsh", "lenient"):
        evaluate_run(run_dir, judge=name, modes=(mode,), client=standin_client(mode), label=name, progress=False)
    return name


def repeat_variants(variants: Mapping[str, Mapping[str, Any]], repeats: int = 1) -> dict[str, dict[str, Any]]:
    """Each variant ``repeats`` times as ``<name>-r1``, ``<name>-r2``, ... (separate run ids)."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    return {f"{name}-r{k}": dict(changes) for name, changes in variants.items() for k in range(1, repeats + 1)}


def judge_runs(run_dirs: Mapping[str, str | os.PathLike[str]], llm: Mapping[str, Any] | None = None, *,
               passes: int = 1) -> list[str]:
    """Judge every run with the matcher and ``passes`` passes of the LLM judge (or the
    stand-in); returns the judge names, the matcher first."""
    names: list[str] = []
    for run_dir in run_dirs.values():
        evaluate_run(run_dir, judge="matcher", progress=False)
        first = judge_run_with(run_dir, llm)
        labels = [first, *(judge_run_with(run_dir, llm, label=f"{first}-pass{k}") for k in range(2, passes + 1))]
        names += [n for n in labels if n not in names]
    return ["matcher", *names]


def agreement_table(run_dir: str | os.PathLike[str], judges: Sequence[str]) -> pd.DataFrame:
    """Raw agreement and Cohen's kappa for every pair of judges in each mode, and for each
    judge's harsh vs lenient verdicts (how much the setting itself changes)."""
    judgements = read_judgements(run_dir)
    frames = [judge_agreement([j for j in judgements if j.judge in (ref, other)], reference=ref)
              for k, ref in enumerate(judges) for other in judges[k + 1:]]
    for judge in judges:
        # the same judge's two settings compared like two judges: the mode becomes the name
        as_judges = [dataclasses.replace(j, judge=j.mode, mode="harsh vs lenient")
                     for j in judgements if j.judge == judge]
        if {j.judge for j in as_judges} >= {"harsh", "lenient"}:
            t = judge_agreement(as_judges, reference="harsh")
            frames.append(t.assign(judge=f"{judge} lenient", reference=f"{judge} harsh"))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def disagreements(run_dir: str | os.PathLike[str], a: str, b: str, mode: str) -> pd.DataFrame:
    """Gold entities on which judges ``a`` and ``b`` gave different verdicts in ``mode``, with
    the gold statement, each judge's matched prediction and reason."""
    run = load_run(run_dir)
    by_judge = {(j.judge, j.note_id, j.entity_id): j for j in read_judgements(run_dir) if j.mode == mode}
    rows = []
    for g in run.gold:
        x, y = by_judge.get((a, g.note_id, g.entity_id)), by_judge.get((b, g.note_id, g.entity_id))
        if x is None or y is None or x.verdict == y.verdict:
            continue

        def shown(j):
            i = j.matched_prediction
            return render_prediction(run.predictions[i]) if i is not None and 0 <= i < len(run.predictions) else ""

        rows.append({"note_id": g.note_id, "line": g.line, "gold_entity": g.entity, "gold_label": g.label,
                     f"{a}_verdict": x.verdict, f"{b}_verdict": y.verdict, f"{a}_prediction": shown(x),
                     f"{b}_prediction": shown(y), f"{a}_reason": x.reason, f"{b}_reason": y.reason})
    return pd.DataFrame(rows)


def _manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))


def runs_table(runs_dir: str | os.PathLike[str], corpus: str | os.PathLike[str], *,
               db: str | os.PathLike[str] | None = None, judges: Sequence[str] | None = None,
               ablations: bool = False) -> pd.DataFrame:
    """Every judged run under ``runs_dir`` made on ``corpus`` (same notes) and, if given,
    ``db``: one row per run, judge and mode with method, backbone and the scores. Runs with
    a component switched off (an ablation) are left out unless ``ablations``: they are
    another configuration, not a repeat of the method."""
    want = {n.note_id for n in read_notes(Path(corpus) / "notes.jsonl")}
    frames = []
    for metrics in sorted(Path(runs_dir).glob("*/metrics.csv")):
        run_dir = metrics.parent
        try:
            manifest = _manifest(run_dir)
            used = {n.note_id for n in read_notes(Path(manifest["params"]["corpus"]) / "notes.jsonl")}
        except (OSError, KeyError, ValueError):
            continue  # not a run folder of this layout, or its corpus is gone
        if used != want or (db is not None and Path(str(manifest["params"].get("db"))).resolve() != Path(db).resolve()):
            continue
        df = pd.read_csv(metrics)
        if judges is not None:
            df = df[df["judge"].isin(judges)]
        ablation = _ablation_of(manifest.get("params", {}))
        if ablation != "full" and not ablations:
            continue
        frames.append(df.assign(backbone=df["model"].astype(object).fillna(df["backend"]), ablation=ablation))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _ablation_of(params: Mapping[str, Any]) -> str:
    """'full' unless a component switch differs from its default (then which ones)."""
    off = [k for k, v in (("segmentation", True), ("scope_filter", True), ("validation_cache", 5),
                          ("tools", None)) if params.get(k, v) != v]
    return "full" if not off else "no " + ", ".join(off)


def spread_table(rows: pd.DataFrame, by: Sequence[str] = ("method", "backbone", "judge", "mode"), *,
                 run_prefix: str | None = None) -> pd.DataFrame:
    """Mean, std and count of R/P/F1 per group over the rows (runs × judge passes), of the
    runs whose id starts with ``run_prefix`` if given; empty when nothing was scored."""
    if run_prefix is not None and not rows.empty:
        rows = rows[rows["run_id"].astype(str).str.startswith(run_prefix)]
    if rows.empty:
        return pd.DataFrame()
    keys = [k for k in by if k in rows.columns]
    agg = rows.groupby(keys, sort=False)[list(_METRICS)].agg(["mean", "std", "count"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    return agg.reset_index()


def paper_layout(rows: pd.DataFrame, *, index: Sequence[str] = ("method", "backbone"),
                 judge: str | None = None) -> pd.DataFrame:
    """Table 2's shape: one row per method × backbone, columns {lenient, harsh} × {R, P, F1}
    in percent, of one ``judge``'s rows if given; a cell reads ``mean ± std`` when several
    runs or passes share the row (``n`` says how many), else the one value."""
    if judge is not None and not rows.empty:
        rows = rows[rows["judge"] == judge]
    if rows.empty:
        return pd.DataFrame()
    spread = spread_table(rows, by=[*index, "mode"])
    out: dict[tuple, dict[str, Any]] = {}
    for rec in spread.to_dict("records"):
        key = tuple(rec[k] for k in index)
        row = out.setdefault(key, dict(zip(index, key)))
        for m in _METRICS:
            mean, std, n = 100 * rec[f"{m}_mean"], rec[f"{m}_std"], int(rec[f"{m}_count"])
            row[f"{rec['mode']} {m}"] = f"{mean:.1f}" if n < 2 or np.isnan(std) else f"{mean:.1f} ± {100 * std:.1f}"
            row["n"] = max(row.get("n", 0), n)
    if "n_notes" in rows.columns:  # how many notes each row's scores average
        notes = rows.groupby(list(index), sort=False)["n_notes"].max()
        for key, row in out.items():
            row["notes"] = int(notes.loc[key if len(index) > 1 else key[0]])
    cols = [*index, *(f"{mode} {m}" for mode in ("lenient", "harsh") for m in _METRICS), "notes", "n"]
    table = pd.DataFrame(list(out.values()))
    return table[[c for c in cols if c in table.columns]]
