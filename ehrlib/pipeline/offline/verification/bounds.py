"""Bounds claimed over a whole period ("MAPs > 65 all shift", "SpO2 >= 92% throughout").

A bound with a whole-period word is not a target but a claim about every charted value of
the statement's day (the window when it has no core day): one value beyond it by more than
the concept's tolerance contradicts it. A blood pressure's parts are charted apart, so "MAP"
is judged on the mean items and a bare pressure on the systolic ones (:func:`bp_part`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.mention import concept_flags
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import at_row, num
from ehrlib.pipeline.offline.verification.item_scale import statement_scale
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, tolerance_of
from ehrlib.pipeline.offline.verification.windows import core_window, in_window
from ehrlib.pipeline.records import Verdict

__all__ = ["PERIOD_BOUND", "BP_CONCEPTS", "bp_part"]

#: concepts whose items chart a pressure's systolic, diastolic and mean apart (ABP, PA pressure)
BP_CONCEPTS = frozenset(concept_flags()["blood_pressure_values"])


def bp_part(label: str) -> str | None:
    """The part of a pressure an item label charts (systolic, diastolic, mean), None for none."""
    low = label.lower()
    if "systolic" in low:
        return "systolic"
    if "diastolic" in low:
        return "diastolic"
    if "mean" in low:
        return "mean"
    return None


def _period_bound(c: Case) -> Verdict | None:
    """"MAPs > 65 all shift": every charted value of the statement's day keeps the bound, within
    the concept's tolerance (on the item's scale).
    """
    e, n = c.entity, c.claim_as(NumericClaim)
    limit = n.reading.min if n.reading.min is not None else n.reading.max
    if not n.bound or limit is None:
        return None
    above, stated, concept = n.reading.min is not None, float(limit), concept_of(n)
    core = core_window(e.window)
    rows: list[Mapping[str, Any]] = [r for r in c.item_rows()[0] if r.get("valuenum") is not None
                                     and (core is None or in_window(r, core))]
    if concept is not None and concept.cid in BP_CONCEPTS:
        part = "mean" if re.search(r"map|mean", e.text, re.I) else "systolic"
        rows = [r for r in rows if bp_part(str(r.get("label", ""))) == part] or rows
    if not rows:
        return None
    onto, _, factor = statement_scale([("value", stated, None)], n.unit, concept, rows)
    bound, tol = onto(stated), tolerance_of(concept) * factor
    beyond = [r for r in rows if (float(r["valuenum"]) < bound - tol if above else float(r["valuenum"]) > bound + tol)]
    word = ">" if above else "<"
    if beyond:
        worst = (min if above else max)(beyond, key=lambda r: float(r["valuenum"]))
        return verdict(c, False, f"{e.text}: stated {word} {num(stated)} all period vs charted "
                       f"{num(worst['valuenum'])} {at_row(worst)} ({len(beyond)} of {len(rows)} values beyond)",
                       beyond[:4], deciding=[worst])
    tightest = min(rows, key=lambda r: abs(float(r["valuenum"]) - bound))  # the value nearest the bound
    return verdict(c, True, f"{e.text}: stated {word} {num(stated)} all period vs charted "
                   f"{'min' if above else 'max'} {num(tightest['valuenum'])} {at_row(tightest)}", rows[:4],
                   deciding=[tightest])


PERIOD_BOUND = Rule("numbers.period_bound", "A bound stated for the whole period (MAPs > 65 all shift) claims every "
                    "charted value of the statement's day keeps it; one beyond it by more than the tolerance "
                    "contradicts it.", _period_bound, ("measurement", "range", "output", "trend"))
