"""Get_Clinical_Criterion: what an interpreted state ("febrile", "AKI") means in numbers.

The paper's annotators looked thresholds up in public references (Table 7); the note
writer and this tool share ``ehrlib/data/clinical_criteria.yaml`` so the benchmark and
the verifier agree on what "tachycardic" means. The tool also lists the items of this
database each test applies to, so the next call can fetch the values.
"""
from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz, process

from ehrlib.criteria import Criterion, CriterionTest, load_criteria
from ehrlib.tools.env import ToolArgumentError, ToolEnv
from ehrlib.tools.items import Catalog, CatalogItem
from ehrlib.tools.result import ToolResult

__all__ = ["clinical_criterion", "find_criterion", "covered_items"]

_MAX_ITEMS_PER_TEST = 6


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").split())


def find_criterion(state: str) -> tuple[Criterion, bool]:
    """The criterion a state names, and whether the state was a negation ("afebrile")."""
    s = _norm(state)
    criteria = load_criteria()
    for crit in criteria.values():
        if s == crit.id.replace("_", " ") or s in {_norm(n) for n in crit.names}:
            return crit, False
    for crit in criteria.values():
        if s in {_norm(n) for n in crit.negations}:
            return crit, True
    choices = {(_norm(n), cid, neg): None for cid, c in criteria.items()
               for neg, names in ((False, c.names + (c.id.replace("_", " "),)), (True, c.negations)) for n in names}
    keys = list(choices)
    best = process.extractOne(s, [k[0] for k in keys], scorer=fuzz.WRatio, score_cutoff=86)
    if best is None:
        known = ", ".join(sorted(c.names[0] for c in criteria.values()))
        raise ToolArgumentError(f"no clinical criterion for {state[:60]!r}; known states: {known}")
    _, cid, neg = keys[best[2]]
    return criteria[cid], neg


def covered_items(catalog: Catalog, test: CriterionTest) -> tuple[CatalogItem, ...]:
    """The catalog's items ``test`` applies to, in catalog order; matched once per catalog
    (a note asks about "afebrile" many times, and the catalog holds tens of thousands of items).
    """
    def build() -> tuple[CatalogItem, ...]:
        # only the test's table can match: its items, in catalog order, instead of the whole catalog
        candidates = catalog.derived("items by table", lambda: _by_table(catalog.items)).get(test.table, ())
        return tuple(i for i in candidates if test.matches(i.table, i.label, i.fluid))
    return catalog.derived(("criterion items", test), build)


def _by_table(items: tuple[CatalogItem, ...]) -> dict[str, tuple[CatalogItem, ...]]:
    out: dict[str, list[CatalogItem]] = {}
    for i in items:
        out.setdefault(i.table, []).append(i)
    return {t: tuple(v) for t, v in out.items()}


def clinical_criterion(env: ToolEnv, args: dict[str, Any], state: str) -> ToolResult:
    """Get_Clinical_Criterion: the tests that define a clinical state, and the items they match."""
    s = " ".join(str(state or "").split())
    if not s or len(s) > 100:
        raise ToolArgumentError("state must be a short clinical term such as 'febrile' or 'AKI'")
    crit, negated = find_criterion(s)
    keys = env.patient_keys
    sex = (env.patient.sex or "").upper()[:1] or None
    lines = [f"Criterion {crit.id} ({', '.join(crit.names)})"
             + (f"; {s!r} states its absence" if negated else "") + f", kind {crit.kind}."]
    rows: list[dict[str, Any]] = []
    for test in crit.tests:
        items = list(covered_items(env.catalog, test))
        items.sort(key=lambda i: (i.key not in keys, i.label))
        applies = test.applies_to_sex(sex) if sex else True
        cond = f"{test.operator} {test.threshold:g} {test.unit}".strip() if test.operator else f"(unit {test.unit})"
        rule = f"- {test.table} items labelled /{test.label}/: value {cond}"
        if test.sex:
            rule += f" (sex {test.sex}{'' if applies else ', not this patient'})"
        shown = items[:_MAX_ITEMS_PER_TEST]
        rule += "; items here: " + (", ".join(f"{i.key} {i.label}" + (" [HAS records]" if i.key in keys else "")
                                              for i in shown) or "none in this database")
        lines.append(rule)
        rows.append({"criterion": crit.id, "table": test.table, "label_pattern": test.label, "operator": test.operator,
                     "threshold": test.threshold, "unit": test.unit, "sex": test.sex, "applies_to_patient": applies,
                     "items": [{**i.as_dict(), "has_records": i.key in keys} for i in shown]})
    if crit.kind == "delta":
        lines.append(f"Holds if the value rises by ≥ {crit.rise:g} within {crit.within_hours:g} h"
                     + (f", or to ≥ {crit.ratio:g} × the admission baseline" if crit.ratio else "") + ".")
    if crit.kind == "rate":
        lines.append("Holds if the output summed over the window, divided by weight (kg) and hours, meets the test"
                     + (f"; default weight {crit.default_weight_kg:g} kg" if crit.default_weight_kg else "") + ".")
    lines.append(f"Source: {crit.source}" + (f" ({crit.source_url})" if crit.source_url else ""))
    summary = {"id": crit.id, "names": list(crit.names), "kind": crit.kind, "negated": negated,
               "source": crit.source, "source_url": crit.source_url, "rise": crit.rise,
               "within_hours": crit.within_hours, "ratio": crit.ratio}
    return ToolResult("Get_Clinical_Criterion", args, "\n".join(lines), tuple(rows), len(rows), summary)
