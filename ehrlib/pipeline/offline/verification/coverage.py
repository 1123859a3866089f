"""Documentation coverage: whether an admission's records could show that something was never recorded.

An absence is evidence only where the table that would hold the record has rows for the
admission. Orders (prescriptions) and the medication administration record (MIMIC-IV's
eMAR) cover every drug; the ICU input tables hold only what runs through a pump or is
pushed IV (drips, boluses, blood products, fluids). An admission with neither orders nor an
administration record (some CareVue-era stays have no prescription rows at all) can thus
show only that an IV drug was never given: "ASA, plavix, heparin SC" have nowhere to be.

The same holds for a charted measurement: a table with no row of the patient in the
statement's window (vital signs before the ICU stay began, a build without bedside chart
rows) cannot show that a value stated then was never measured.
"""
from __future__ import annotations

from ehrlib.pipeline.offline.verification.medrows import med, names
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.windows import tool_spec

__all__ = ["ORDER_TABLES", "unshown_absence", "uncharted_tables"]

#: tables that record every drug of an admission, whatever its route
ORDER_TABLES = ("prescriptions", "emar")
#: item-key prefix of the tables that record IV administrations only
_INPUT_PREFIX = "inputevents"


def _admission_rows(c: Case, table: str, time: str = "during admission") -> int | None:
    """Rows of ``table`` in the admission (or the ``time`` window); None when the tools cannot
    tell (no such tool or table, or a timeline without counts).
    """
    res = c.session.call("View_General_Timeline", time=time, table=table)
    counts = (res.summary or {}).get("counts") if res is not None else None
    return int(counts.get(table, 0)) if isinstance(counts, dict) else None


def _present(c: Case, tables: tuple[str, ...]) -> tuple[str, ...]:
    """The ``tables`` this database has: a table its schema lacks (MIMIC-III has no eMAR) is
    not asked for, so no call names a table the model-facing schema does not show.
    """
    schema = getattr(c.session.tools, "schema", None)
    have = getattr(schema, "tables", None)
    return tables if have is None else tuple(t for t in tables if t in have)


def unshown_absence(c: Case) -> str | None:
    """Why the admission's records cannot show that the statement's drug was never given,
    or None when they can: an order table has rows, or the drug is given IV (no other route
    stated) and one of its items is an input item, which the ICU input tables would hold.
    """
    known = [n for t in _present(c, ORDER_TABLES) if (n := _admission_rows(c, t)) is not None]
    if not known or any(n > 0 for n in known):
        return None
    route = med(c).route
    if any(k.startswith(_INPUT_PREFIX) for k in c.keys()) and route in (None, "IV"):
        return None
    return (f"{names(c)} not judged: this admission has no order or administration-record rows at all, and "
            f"the ICU input tables would not hold it{f' ({route})' if route else ''}")


def uncharted_tables(c: Case, tables: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``tables`` that hold no row of the patient in the statement's window (the
    tools widen it a day each way, so a table charted near the window counts as charted);
    a table the tools cannot count is taken as charted.
    """
    spec = tool_spec(c.entity.window) or "during admission"
    return tuple(t for t in dict.fromkeys(tables) if _admission_rows(c, t, spec) == 0)
