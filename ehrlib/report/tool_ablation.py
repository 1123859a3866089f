"""Table 5 of the paper: the verifier with one tool category taken away at a time.

The variants are run parameters (``tools`` = every category but one, see
:data:`ehrlib.pipeline.params.TOOL_CATEGORIES`); the table has one row per variant, in
the paper's order, and per backend its lenient (and harsh) recall, precision and F1 in
percent, with the F1 change against the run that had every tool.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ehrlib.pipeline.params import TOOL_CATEGORIES
from ehrlib.report.views import compare_runs

__all__ = ["TOOL_ROWS", "tool_ablation_variants", "tool_ablation_runs", "tool_ablation_table"]

#: the paper's names of the categories (Appendix C; the criterion tool is the project's fourth)
TOOL_ROWS: dict[str, str] = {"alignment": "w/o Alignment", "profiling": "w/o Exploration",
                             "temporal": "w/o Timeline", "criterion": "w/o Criterion"}
FULL = "full"
FULL_ROW = "All tools"


def _variant(category: str) -> str:
    return f"no_{category}_tools"


def tool_ablation_variants() -> dict[str, dict[str, list[str]]]:
    """``{variant: run-parameter changes}``: the full toolset, then each category left out."""
    return {FULL: {}, **{_variant(c): {"tools": [o for o in TOOL_CATEGORIES if o != c]} for c in TOOL_CATEGORIES}}


def tool_ablation_runs(runs_dir: str | os.PathLike[str], prefix: str) -> dict[str, Path]:
    """The judged runs ``<prefix>-<variant>`` of the tool ablation present in ``runs_dir``
    (e.g. an LLM backend's runs made earlier with ``ehrlib run --tools ...``).
    """
    out = {}
    for v in tool_ablation_variants():
        d = Path(runs_dir) / f"{prefix}-{v}"
        if (d / "metrics.csv").is_file():
            out[v] = d
    return out


def tool_ablation_table(runs: Mapping[str, Mapping[str, str | os.PathLike[str]]], *, judge: str = "matcher",
                        modes: tuple[str, ...] = ("lenient",)) -> pd.DataFrame:
    """Table 5: ``runs`` maps a backend label to its ``{variant: run_dir}``
    (:func:`tool_ablation_variants` names). Rows: all tools, then each category left out;
    columns ``<backend> <mode>_recall|precision|f1`` in percent and ``<backend> d_f1``
    (the change in the first mode's F1 against all tools); a variant not run is empty.
    """
    order = list(tool_ablation_variants())
    labels = {FULL: FULL_ROW, **{_variant(c): TOOL_ROWS.get(c, f"w/o {c}") for c in TOOL_CATEGORIES}}
    table = pd.DataFrame({"tools": [labels[v] for v in order]})
    for backend, dirs in runs.items():
        known = {v: d for v, d in dirs.items() if v in labels}
        metrics = compare_runs(known, table="metrics", judge=judge)
        for mode in modes:
            got = metrics[metrics["mode"] == mode].set_index("variant") if not metrics.empty else pd.DataFrame()
            for m in ("recall", "precision", "f1"):
                table[f"{backend} {mode}_{m}"] = [round(100 * float(got.loc[v, m]), 2) if v in got.index else None
                                                  for v in order]
        f1 = table[f"{backend} {modes[0]}_f1"]
        table[f"{backend} d_f1"] = (f1 - f1.iloc[0]).round(2)
    return table
