"""Counted days of medication statements ("rocuronium on HD 3", "vasopressin stopped on HD
2"): a hospital, post-operative or ICU day names one calendar day, which the time resolver
widened a day either side for retrieval; the drug's rows must fall on that day itself.
"""
from __future__ import annotations

import re

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.verification.medrows import med as _med
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.medrows import rows as _rows
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import core_window, in_window
from ehrlib.pipeline.records import Verdict

__all__ = ["counted_day", "on_counted_day"]


#: a counted day: hospital day, post-operative day, ICU day ("HD 3", "POD 2", "ICU day 4")
_COUNTED_DAY = re.compile(r"\s*(?:on\s+)?(?:HD|hospital\s+day|hosp\.?\s*day|day|POD|post[-\s]?op(?:erative)?\s+day|"
                          r"M?ICU\s+day|ICU\s*D)\s*#?\s*\d{1,2}\s*$", re.I)


def counted_day(c: Case) -> TimeSpan | None:
    """The one calendar day a counted day names ("HD 3", "POD 2"): the middle day of the
    window the time resolver widened around it, None for any other time.
    """
    e = c.entity
    if not _COUNTED_DAY.match(e.time_text or ""):
        return None
    return core_window(e.window)


def on_counted_day(c: Case) -> Verdict | None:
    """"rocuronium on HD 3", "lasix gtt run on HD 4": a drug stated on a counted day, with no
    start or stop, was given or running on that very day; rows only on the days either side
    of it (the window the resolver widened) contradict it.
    """
    e, action, actions = c.entity, _med(c).action or "", terms()["actions"]
    day = counted_day(c)
    edge = action in actions["dated_start"] or action.startswith(tuple(actions["dated_stop_prefixes"]))
    if day is None or edge or e.claim.negated:
        return None
    inside = _rows(c)
    mine = [r for r in inside if in_window(r, day)]
    if inside and not mine:
        return verdict(c, False, f"{_names(c)}: not recorded on {(e.time_text or '').strip()} "
                       f"({(day.start or '')[:10]}), only on "
                       f"days beside it", inside[:4])
    if mine:
        c.narrowed = mine
    return None
