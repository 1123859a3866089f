"""Metrics tables as CSV (for machines) and Markdown (for people), written atomically.

Fractions stay fractions in CSV; Markdown shows them as percentages with two decimals,
the way the paper's tables read (Rec 71.03).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from ehrlib.corpus.io import write_text

__all__ = ["PERCENT_COLUMNS", "markdown_table", "write_table", "write_markdown_sections", "paper_table"]

#: columns holding fractions in 0..1, shown as percentages in Markdown
PERCENT_COLUMNS = frozenset({"recall", "precision", "f1", "micro_recall", "micro_precision", "micro_f1",
                             "f1_low", "f1_high", "share", "accuracy"})


def _cell(value: object, percent: bool) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    if percent and isinstance(value, (int, float)):
        return f"{100 * float(value):.2f}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame, percent: Iterable[str] = PERCENT_COLUMNS) -> str:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned."""
    pct = set(percent)
    header = "| " + " | ".join(str(c) for c in df.columns) + " |"
    align = "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(df[c]) else "---" for c in df.columns) + "|"
    rows = ["| " + " | ".join(_cell(v, c in pct) for c, v in zip(df.columns, row)) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([header, align, *rows]) + "\n"


def write_table(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """CSV next to a Markdown twin (same stem, .md); returns the CSV path."""
    path = Path(path)
    write_text(df.to_csv(index=False), path.with_suffix(".csv"))
    write_text(markdown_table(df), path.with_suffix(".md"))
    return path.with_suffix(".csv")


def write_markdown_sections(sections: Mapping[str, pd.DataFrame], path: str | os.PathLike[str],
                            title: str = "") -> Path:
    """Several tables in one Markdown file, each under its own heading."""
    parts = [f"# {title}\n"] if title else []
    for heading, df in sections.items():
        parts.append(f"## {heading}\n\n{markdown_table(df) if not df.empty else '(no rows)'}\n")
    return write_text("\n".join(parts), path)


def paper_table(summary: pd.DataFrame, index: str = "variant",
                metrics: tuple[str, ...] = ("recall", "precision", "f1")) -> pd.DataFrame:
    """Long metrics (one row per run and mode) as the paper's Table 2: one row per
    ``index`` value, columns ``lenient_recall … harsh_f1`` in percent, rounded to 2."""
    if summary.empty:  # unlabelled runs: nothing was scored
        return pd.DataFrame(columns=[index])
    wide = summary.pivot_table(index=index, columns="mode", values=list(metrics), aggfunc="first", sort=False)
    modes = [m for m in ("lenient", "harsh") if m in wide.columns.get_level_values("mode")]
    cols = [(m, mode) for mode in modes for m in metrics]
    out = (100 * wide[cols]).round(2)
    out.columns = [f"{mode}_{m}" for m, mode in cols]
    return out.reset_index()
