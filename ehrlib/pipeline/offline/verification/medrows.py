"""What the medication rules read of a statement: its claim, its drug names and rows.

The chain's rules narrow the window's rows as they check (:mod:`.medications`); these
readers give every rule, and the count rules (:mod:`.counts`), one view of that state.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import MedicationClaim
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import core_window, in_window, parse_time, row_interval

__all__ = ["med", "names", "rows", "day_rows", "short_window", "course", "done_before", "dose_bound"]

Rows = list[Mapping[str, Any]]


def med(c: Case) -> MedicationClaim:
    """The statement's medication claim (an empty one for another shape)."""
    return c.claim_as(MedicationClaim)


def names(c: Case) -> str:
    """The drug names, as a verdict's reason shows them."""
    return ", ".join(med(c).drugs[:3])


def rows(c: Case) -> Rows:
    """The window's rows, as the rules before narrowed them."""
    return c.narrowed if c.narrowed is not None else c.item_rows()[0]


def short_window(window: TimeSpan | None) -> bool:
    """Whether a window is a day or so (a progress note's, a stated time's), not a stay."""
    a, b = (parse_time(window.start), parse_time(window.end)) if window else (None, None)
    return a is not None and b is not None and (b - a) <= timedelta(days=3, minutes=1)


def day_rows(c: Case) -> Rows:
    """The rows of the statement's own day: a widened note window counts its core day."""
    core = core_window(c.entity.window) if not c.entity.time_text else None
    got = rows(c)
    return [r for r in got if in_window(r, core)] if core is not None else got


def course(c: Case) -> Rows:
    """Every row of the drug in the admission (a course is judged as a whole)."""
    return [r for k in c.keys()[:6] for r in c.session.rows(k, None)[0]]


def done_before(c: Case, every: Rows) -> Rows:
    """The admission's rows before the window of a course told as completed ("completed CTX
    course"): such a statement places the drug before its window, not in it.
    """
    start = parse_time(c.entity.window.start) if c.entity.window else None
    if start is None or (med(c).action or "") not in terms()["actions"].get("completions", ()):
        return []
    return [r for r in every if (iv := row_interval(r)) is not None and iv[0] < start]


def dose_bound(c: Case) -> str | None:
    """"min" when the statement bounds its dose from below (">3.5 L", "more than 2 L"), "max"
    from above ("less than 500 mL"), else None: the bound word right before the dose's number.
    """
    dose, text = med(c).dose, c.entity.value or ""
    if dose is None:
        return None
    for m in re.finditer(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", text):
        if abs(float(m.group(0).replace(",", "")) - float(dose)) > 1e-9:
            continue
        before = text[:m.start()]
        for bound in ("max", "min"):  # "no more than" is a maximum before "more than" is a minimum
            words = terms().get("dose_bounds", {}).get(bound) or ["(?!)"]
            if re.search(r"(?:^|(?<=\W)|\b)(?:" + "|".join(words) + r")\s*~?\s*$", before, re.I):
                return bound
        return None
    return None
