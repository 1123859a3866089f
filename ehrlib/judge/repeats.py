"""Mean ± standard deviation over repeated runs or judge passes (the paper's Appendix G).

Repeated inferences (`ehrlib run --repeats k`) and repeated judge passes (`ehrlib judge
--passes j`) differ only in their response-cache salt; their metric rows are pooled
here into one row per group with the sample standard deviation (ddof=1, the spread of
independent repeats; 0 for a single repeat).
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

__all__ = ["mean_std", "mean_std_table"]


def mean_std(values: pd.Series) -> tuple[float, float, int]:
    clean = pd.to_numeric(values, errors="coerce").dropna()
    n = len(clean)
    if n == 0:
        return float("nan"), float("nan"), 0
    return float(clean.mean()), float(clean.std(ddof=1)) if n > 1 else 0.0, n


def mean_std_table(rows: pd.DataFrame, by: Sequence[str], metrics: Sequence[str], *, digits: int = 3) -> pd.DataFrame:
    """One row per `by` group: `n_repeats` and "mean ± std" text per metric (plus numeric
    `<metric>_mean`/`<metric>_std` columns for further analysis)."""
    out = []
    for key, group in rows.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(by, key))
        n = 0
        for m in metrics:
            mean, std, n = mean_std(group[m])
            row[m] = f"{mean:.{digits}f} ± {std:.{digits}f}" if n else "n/a"
        row["n_repeats"] = n
        for m in metrics:
            mean, std, _ = mean_std(group[m])
            row[f"{m}_mean"], row[f"{m}_std"] = mean, std
        out.append(row)
    return pd.DataFrame(out)
