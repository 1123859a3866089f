"""A stated value on an item the laboratory reports in bins of counts.

Urine sediment counts are recorded per high-power field as bins ("0-2", "3-5", "11-20",
">50"), text with no numeric value: "WBC 11-20" or "RBC 4" states a count the bin holds.
The number rules compare numeric values only, so without this rule such a statement
reads as a missing record.
"""
from __future__ import annotations

import re

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.numbers import stated_numbers
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.records import Verdict

__all__ = ["RECORDED_BIN"]

#: a value the laboratory reports as a bin of counts ("11-20", "0-2", ">50" per high-power field)
_BIN = re.compile(r"(?P<lo>\d+(?:\.\d+)?)\s*-\s*(?P<hi>\d+(?:\.\d+)?)|>\s*(?P<over>\d+(?:\.\d+)?)")


def _bin_of(value: object) -> tuple[float, float] | None:
    m = _BIN.fullmatch(str(value or "").strip())
    if m is None:
        return None
    if m.group("over") is not None:
        return float(m.group("over")), float("inf")
    return float(m.group("lo")), float(m.group("hi"))


def _recorded_bin(c: Case) -> Verdict | None:
    """A value stated on an item the laboratory reports in bins (urine sediment "WBC 11-20")
    is met by a bin of the window that holds it, or that the stated range names.
    """
    n = c.claim_as(NumericClaim)
    inside = c.item_rows()[0]
    bins = [(r, b) for r in inside if r.get("valuenum") is None and (b := _bin_of(r.get("value"))) is not None]
    if not bins or not stated_numbers(n):
        return None
    r0 = n.reading
    if r0.min is not None and r0.max is not None and r0.min_hi is None and r0.max_lo is None:
        stated = [(float(r0.min), float(r0.max))]
    else:
        stated = [(lo, lo if hi is None else hi) for _, lo, hi in stated_numbers(n)]
    hits = [r for lo, hi in stated for r, (blo, bhi) in bins if (lo, hi) == (blo, bhi) or blo <= lo and hi <= bhi]
    numeric = [r for r in inside if r.get("valuenum") is not None]
    if len({id(r) for r in hits}) < 1 or (not hits and numeric):
        return None  # no bin holds it: the numeric rules judge the numbers the item records
    shown = ", ".join(sorted({str(r.get("value")) for r, _ in bins})[:4])
    return verdict(c, True, f"{c.entity.text}: the recorded bin ({shown}) holds the stated value", hits[:4])


RECORDED_BIN = Rule("numbers.recorded_bin", "A value stated on an item the laboratory reports in bins (urine "
                    "sediment WBC 11-20, RBC 0-2 per high-power field) is met by a bin of its window that holds it or "
                    "that the stated range names.", _recorded_bin, ("measurement", "range"))
