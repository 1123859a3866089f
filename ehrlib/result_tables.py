"""Metrics tables as CSV (for machines) and Markdown (for people), written atomically.

Fractions stay fractions in CSV; Markdown shows them as percentages with two decimals,
the way the paper's tables read (Rec 71.03).

Cells can hold text taken from notes (entity text, reasons, note ids), so both writers
treat text as hostile: Markdown cells escape HTML and pipes (a viewer renders raw HTML
in a table), and CSV text that a spreadsheet would run as a formula (starting with
``= + - @``, a tab or a carriage return) gets a leading single quote, as OWASP advises
against CSV injection. Numbers, and text that is just a number ("-5"), are left as they are.
"""
from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ehrlib.corpus.io import write_text

__all__ = ["PERCENT_COLUMNS", "markdown_table", "write_table", "write_markdown_sections", "paper_table",
           "markdown_text", "csv_safe", "csv_text", "write_csv"]

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
    return markdown_text(str(value))


def markdown_text(text: str) -> str:
    """``text`` safe inside a Markdown table cell: HTML escaped, pipes escaped, one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.replace("|", "\\|").splitlines())


#: what a spreadsheet reads as the start of a formula (OWASP, CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_safe(value: object) -> object:
    """A CSV cell that no spreadsheet runs as a formula: text starting with ``= + - @``,
    tab or CR gets a leading ``'``; numbers and text that is only a number pass unchanged.
    A carriage return inside text becomes a newline: Python's CSV writer quotes a cell
    holding a newline but not one holding a lone CR, which readers take as a row break.
    """
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index) with every text cell passed through :func:`csv_safe`."""
    safe = df.copy()
    for col in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[col]):
            safe[col] = safe[col].map(csv_safe)
    safe.columns = [csv_safe(str(c)) for c in safe.columns]
    return safe.to_csv(index=False)


def write_csv(path: str | os.PathLike[str], header: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """Rows as a CSV file, atomically, every text cell passed through :func:`csv_safe`."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow([csv_safe(h) for h in header])
    w.writerows([csv_safe(v) for v in row] for row in rows)
    return write_text(buf.getvalue(), path)


def markdown_table(df: pd.DataFrame, percent: Iterable[str] = PERCENT_COLUMNS) -> str:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned."""
    pct = set(percent)
    header = "| " + " | ".join(markdown_text(str(c)) for c in df.columns) + " |"
    align = "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(df[c]) else "---" for c in df.columns) + "|"
    rows = ["| " + " | ".join(_cell(v, c in pct) for c, v in zip(df.columns, row, strict=True)) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([header, align, *rows]) + "\n"


def write_table(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """CSV next to a Markdown twin (same stem, .md); returns the CSV path."""
    path = Path(path)
    write_text(csv_text(df), path.with_suffix(".csv"))
    write_text(markdown_table(df), path.with_suffix(".md"))
    return path.with_suffix(".csv")


def write_markdown_sections(sections: Mapping[str, pd.DataFrame], path: str | os.PathLike[str],
                            title: str = "") -> Path:
    """Several tables in one Markdown file, each under its own heading."""
    parts = [f"# {markdown_text(title)}\n"] if title else []
    for heading, df in sections.items():
        parts.append(f"## {markdown_text(heading)}\n\n{markdown_table(df) if not df.empty else '(no rows)'}\n")
    return write_text("\n".join(parts), path)


def paper_table(summary: pd.DataFrame, index: str = "variant",
                metrics: tuple[str, ...] = ("recall", "precision", "f1")) -> pd.DataFrame:
    """Long metrics (one row per run and mode) as the paper's Table 2: one row per
    ``index`` value, columns ``lenient_recall … harsh_f1`` in percent, rounded to 2.
    """
    if summary.empty:  # unlabelled runs: nothing was scored
        return pd.DataFrame(columns=[index])
    wide = summary.pivot_table(index=index, columns="mode", values=list(metrics), aggfunc="first", sort=False)
    modes = [m for m in ("lenient", "harsh") if m in wide.columns.get_level_values("mode")]
    cols = [(m, mode) for mode in modes for m in metrics]
    out = (100 * wide[cols]).round(2)
    out.columns = [f"{mode}_{m}" for m, mode in cols]
    return out.reset_index()
