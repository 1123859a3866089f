"""Trend statistics of a numeric series (Analyze_Value_Trend).

Direction rule: fit least squares value ~ time (days). The fitted change over the
series' span (slope × span) decides: if it is smaller than 5 % of the mean absolute
value, or smaller than the residual standard deviation around the fitted line (so noise
around a flat line is not a "trend"), the series is *stable*; otherwise *rising* or
*falling* by the slope's sign.
Fewer than two values, or all values at one time, give *insufficient data*. The
relative threshold follows how notes talk ("creatinine trending down" means a visible
change, not a 1 % drift); the noise guard keeps a fluctuating vital sign "stable".
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["trend_stats", "STABLE_FRACTION"]

STABLE_FRACTION = 0.05


def _parse(t: Any) -> _dt.datetime:
    return t if isinstance(t, _dt.datetime) else _dt.datetime.fromisoformat(str(t))


def trend_stats(points: Sequence[tuple[Any, float | None]]) -> dict[str, Any]:
    """Summary of (time, value) points in time order (points without a time or value are skipped)."""
    pts = [(_parse(t), float(v)) for t, v in points if t is not None and v is not None and math.isfinite(float(v))]
    pts.sort(key=lambda p: p[0])
    n = len(pts)
    if n == 0:
        return {"n": 0, "direction": "insufficient data"}
    values = [v for _, v in pts]
    first_t, last_t = pts[0][0], pts[-1][0]
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    imin = min(range(n), key=lambda i: values[i])
    imax = max(range(n), key=lambda i: values[i])
    out: dict[str, Any] = {
        "n": n, "first": values[0], "first_time": first_t, "last": values[-1], "last_time": last_t,
        "min": values[imin], "min_time": pts[imin][0], "max": values[imax], "max_time": pts[imax][0],
        "mean": round(mean, 4), "sd": round(sd, 4),
        "cv": round(sd / abs(mean), 4) if mean else None,
    }
    span = (last_t - first_t).total_seconds() / 86400.0
    out["span_days"] = round(span, 4)
    if n < 2 or span <= 0:
        out["direction"] = "insufficient data"
        return out
    days = [(t - first_t).total_seconds() / 86400.0 for t, _ in pts]
    md = sum(days) / n
    sxx = sum((d - md) ** 2 for d in days)
    slope = sum((d - md) * (v - mean) for d, v in zip(days, values, strict=True)) / sxx
    out["slope_per_day"] = round(slope, 4)
    out["rate_of_change_per_day"] = round((values[-1] - values[0]) / span, 4)
    out["max_step_change"] = round(max(abs(b - a) for a, b in zip(values, values[1:], strict=False)), 4)
    fitted = slope * span
    residual_sd = 0.0
    if n > 2:
        residuals = [v - (mean + slope * (d - md)) for d, v in zip(days, values, strict=True)]
        residual_sd = math.sqrt(sum(r * r for r in residuals) / (n - 2))
    tolerance = max(STABLE_FRACTION * abs(mean), residual_sd)
    out["fitted_change"] = round(fitted, 4)
    out["direction"] = "stable" if abs(fitted) < tolerance or fitted == 0 else ("rising" if fitted > 0 else "falling")
    return out
