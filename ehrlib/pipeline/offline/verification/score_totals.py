"""A stated score total checked on its components when the flowsheet charts no total.

MetaVision charts the Glasgow Coma Scale as three responses, each with its points as the
numeric value, and no total item: "GCS 3" is then the sum eye + verbal + motor charted at
one time, not any one component's value (``score_totals.yaml``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import num, span
from ehrlib.pipeline.offline.verification.numbers import stated_numbers
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, tolerance_of
from ehrlib.pipeline.records import Verdict

__all__ = ["COMPONENT_SUM", "component_sums"]

Rows = list[Mapping[str, Any]]


@functools.cache
def _totals() -> Mapping[str, tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]]:
    raw = load_data("score_totals.yaml")["totals"]
    return {cid: (re.compile(t["total"], re.I), tuple(re.compile(x, re.I) for x in t["components"]))
            for cid, t in raw.items()}


def component_sums(parts: list[Rows]) -> list[tuple[float, Rows]]:
    """(sum, rows) at every chart time where each component (a list of rows) has a number."""
    by_time: list[dict[str, Mapping[str, Any]]] = []
    for rows in parts:
        at: dict[str, Mapping[str, Any]] = {}
        for r in rows:
            if r.get("valuenum") is not None and r.get("time"):
                at.setdefault(str(r["time"]), r)
        by_time.append(at)
    if not by_time:
        return []
    times = set(by_time[0]).intersection(*by_time[1:])
    return [(sum(float(p[t]["valuenum"]) for p in by_time), [p[t] for p in by_time]) for t in sorted(times)]


def _component_sum(c: Case) -> Verdict | None:
    e, n = c.entity, c.claim_as(NumericClaim)
    spec = _totals().get(str(n.concept))
    labels = [it.label or "" for it in e.items]
    if spec is None or not labels or any(spec[0].search(x) for x in labels):
        return None
    keys = [[k for it, k in zip(e.items, e.item_keys, strict=False) if k and p.search(it.label or "")]
            for p in spec[1]]
    if not all(keys):
        return None
    sums = component_sums([[r for k in ks for r in c.session.rows(k, e.window)[0]] for ks in keys])
    stated = stated_numbers(n)
    if not sums or not stated:
        return None
    tol = tolerance_of(concept_of(n))
    shown = ", ".join(num(s) for s in sorted({s for s, _ in sums})[:8])
    for _, lo, hi in stated:
        hit = next((rows for s, rows in sums if (lo - tol <= s <= lo + tol if hi is None else lo <= s <= hi)), None)
        if hit is None:
            return verdict(c, False, f"{e.text}: no charted sum of the components is {span(lo, hi)} "
                           f"(sums {shown})", sums[0][1])
    return verdict(c, True, f"{e.text}: the components charted sum to the stated total (sums {shown})",
                   [r for s, rows in sums for r in rows if any(lo - tol <= s <= (hi or lo) + tol
                                                              for _, lo, hi in stated)][:6])


COMPONENT_SUM = Rule("numbers.component_sum", "A stated score total whose flowsheet charts only the components "
                     "(the Glasgow Coma Scale's three responses) is met by their sum at one chart time.",
                     _component_sum, ("measurement", "range"))
