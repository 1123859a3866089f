"""The numbers a numeric statement claims, as (component, low, high) intervals.

A value is exact (high None); a decade ("SBP 80s", "min in the 60s") is its bounds; a
blood pressure lists each component's. The number rules compare these with charted rows,
and the deciding-row chooser measures how near a row lies to them.
"""
from __future__ import annotations

from ehrlib.pipeline.claims import BloodPressure, NumericClaim, Reading

__all__ = ["stated_numbers"]


def _intervals(r: Reading, value: float | None) -> list[tuple[float, float | None]]:
    """(low, high) of every number of a reading (its ``value`` given apart: a blood-pressure component's value is
    listed by the caller): an exact value has high None; a decade ("60s") or a "min in the 60s" gives its bounds.
    """
    out: list[tuple[float, float | None]] = []
    lo, lo_hi, hi_lo, hi, value = (None if x is None else float(x) for x in (r.min, r.min_hi, r.max_lo, r.max, value))
    if lo is not None and hi is not None and lo_hi is None and hi_lo is None and hi - lo == 9 and value in (lo, None):
        return [(lo, hi)]  # "SBP 80s", "tachycardic to the 120s"
    if lo is not None and lo_hi is not None and hi is not None and hi_lo is not None and (lo, lo_hi) == (hi_lo, hi):
        return [(lo, lo_hi)]
    if lo is not None:
        out.append((lo, lo_hi))
    if hi is not None:
        out.append((hi_lo, hi) if hi_lo is not None and hi_lo != hi else (hi, None))
    if value is not None and (value, None) not in out and not any(x == value for x, _ in out):
        out.append((value, None))
    return list(dict.fromkeys(out))  # a range whose ends are equal ("7.1-7.1") states one value


def stated_numbers(n: NumericClaim) -> list[tuple[str, float, float | None]]:
    """(component, low, high) of every number a statement claims."""
    if n.bp is not None:
        out: list[tuple[str, float, float | None]] = []
        for part in BloodPressure.PARTS:
            r = n.bp.part(part)
            out += [(part, lo, hi) for lo, hi in _intervals(r, None)]
            if r.value is not None and not any(lo == float(r.value) for p, lo, _ in out if p == part):
                out.append((part, float(r.value), None))
        return out
    return [("value", lo, hi) for lo, hi in _intervals(n.reading, n.reading.value)]
