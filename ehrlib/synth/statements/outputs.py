"""Urine output over one calendar day: the sum of that day's rows (also what oliguria is judged on)."""
from __future__ import annotations

import datetime as dt

from ehrlib.corpus.records import TimeSpan
from ehrlib.synth.notes_facts import Obs
from ehrlib.synth.statements.base import (
    DAY,
    P_LEX,
    Ctx,
    Stmt,
    anchor_phrase,
    in_span,
    incon,
    iref,
    iso,
    label_for,
    row_refs,
)

__all__ = ["urine_output", "urine_day", "start_day", "day_span"]


def day_span(d: dt.date) -> TimeSpan:
    """The exact calendar day (24 h totals and ranges are not widened)."""
    start = dt.datetime.combine(d, dt.time())
    return TimeSpan(iso(start), iso(start + DAY - dt.timedelta(seconds=1)))


def start_day(span: TimeSpan) -> dt.date:
    """The first day of a window with a start."""
    return dt.date.fromisoformat(str(span.start)[:10])


def urine_day(ctx: Ctx, key: str) -> tuple[TimeSpan, list[Obs]] | None:
    """Urine rows of the note day (progress notes) or of a busy day (discharge summaries)."""
    source = ctx.facts.outputs if key == "urine" else ctx.facts.series.get(key, ())
    rows = [o for o in source if o.valuenum is not None]
    if ctx.note_type == "discharge_summary":
        days = sorted({o.time.date() for o in rows})
        if not days:
            return None
        d = ctx.rng.choice(days)
    else:
        d = ctx.note_date
    span = day_span(d)
    rows = [o for o in rows if in_span(o.time, span)]
    return (span, rows) if len(rows) >= 3 else None


def urine_output(ctx: Ctx, mode: str) -> Stmt | None:
    """'UOP 1,240 mL' over the note day: the sum of the urine rows of that day."""
    rng = ctx.rng
    if mode not in ("ok", "value"):
        return None
    got = urine_day(ctx, "urine")
    if got is None:
        return None
    span, rows = got
    total = round(sum(o.num for o in rows))
    if mode == "value":
        total = round(total * rng.choice((0.3, 2.2, 2.6))) + 100
    forms = [f"{total:,} mL", f"{total} cc"] + ([f"{total / 1000:.2f} L"] if total >= 1000 else [])
    shown = rng.choice(forms)  # litres only where 10 mL of rounding stays within the 2 % tolerance
    claimed = float(shown.split()[0].replace(",", "")) * (1000 if shown.endswith(" L") else 1)
    name = rng.choice(("UOP", "urine output", "U/O", "foley output"))
    entity = f"{name} {shown}"
    when = "" if ctx.note_type != "discharge_summary" else " " + anchor_phrase(ctx, start_day(span))
    text = rng.choice((f"{entity} over 24h{when}", f"{entity}{when}"))
    return Stmt("output", text, entity, label_for(mode), tuple(dict.fromkeys(iref(o) for o in rows)),
                ("value", "charttime"), {"sum": claimed}, shown, span, incon(mode, ["value"]), row_refs(rows[:5]),
                "commonsense", None, P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
