"""Medication orders: drug, dose, unit and route started on a day (PRESCRIPTIONS)."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_templates import drug_surface
from ehrlib.synth.statements.base import (
    P_LEX,
    Ctx,
    Stmt,
    anchor_phrase,
    claimed_date,
    day_window,
    in_span,
    incon,
    label_for,
    missing_path,
    wrong_number,
)

__all__ = ["ANTIBIOTIC", "dose_num", "medication"]


ANTIBIOTIC = re.compile(r"(?i)cillin|^cef|vanc|mycin|floxacin|penem|tazo|metronidazole|sulfameth|bactrim|linezolid|"
                  r"daptomycin|fluconazole|clindamycin|doxycycline|aztreonam|micafungin|acyclovir")


#: drugs a note may claim although never ordered, with a usual adult dose, unit and route
_MISSING_DRUGS = {
    "Linezolid": (600, "mg", "IV"), "Meropenem": (1, "g", "IV"), "Fluconazole": (400, "mg", "PO"),
    "Acyclovir": (700, "mg", "IV"), "Haloperidol": (2, "mg", "IV"), "Digoxin": (0.125, "mg", "PO"),
    "Diltiazem": (30, "mg", "PO"), "Amiodarone": (200, "mg", "PO"), "Warfarin": (5, "mg", "PO"),
    "Azithromycin": (500, "mg", "IV"), "Cefepime": (2, "g", "IV"), "Levofloxacin": (750, "mg", "PO"),
    "Clopidogrel": (75, "mg", "PO"), "Allopurinol": (100, "mg", "PO"), "Prednisone": (40, "mg", "PO"),
    "Lorazepam": (1, "mg", "IV"), "Daptomycin": (500, "mg", "IV"), "Micafungin": (100, "mg", "IV"),
    "Rifaximin": (550, "mg", "PO"), "Octreotide": (100, "mcg", "SC"),
}
_ROUTES = ("IV", "PO", "SC", "IM", "PR", "NG")
_FREQ = ("", " daily", " q12h", " q8h", " BID", " TID", " q6h", " qHS")


def dose_num(s: str | None) -> float | None:
    """The dose of an order as a number (None for ranges and text)."""
    try:
        return float(str(s).replace(",", ""))
    except (TypeError, ValueError):
        return None


def medication(ctx: Ctx, mode: str, antibiotics: bool = False, on_date: dt.date | None = None) -> Stmt | None:
    """An order started on a day: drug, dose, unit, route (and a duration where it ran for days)."""
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        return _missing_drug(ctx, antibiotics)
    orders = [m for m in f.meds if m.start is not None and dose_num(m.dose) is not None and m.route
              and m.dose_unit and len(m.drug) < 40 and not re.search(r"(?i)syringe|bag|sodium chloride|d5w|"
                                                                         r"flush|neb|\bsw\b|dextrose", m.drug)]
    if antibiotics:
        orders = [m for m in orders if ANTIBIOTIC.search(m.drug)]
    if on_date is not None:
        orders = [m for m in orders if m.start is not None and m.start.date() == on_date]
    elif ctx.note_type != "discharge_summary":
        orders = [m for m in orders if in_span(m.start, day_window(ctx.note_date))]
    rng.shuffle(orders)
    for m in orders:
        same = [o for o in f.meds if o.drug.lower() == m.drug.lower() and o.start is not None]
        dose, route, columns = dose_num(m.dose), m.route, ["startdate"]
        if m.start is None or dose is None:  # (orders have both)
            continue
        claim_date = claimed_date(ctx, mode, m.start.date(), [o.start.date() for o in same if o.start is not None])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        in_win = [o for o in same if in_span(o.start, window)]
        if mode == "value":
            others = [d for d in (dose_num(o.dose) for o in in_win) if d is not None]
            w = wrong_number(dose, others, rng, 0 if dose >= 10 else 1)
            if w is None:
                continue
            dose, columns = w, ["dose_val_rx"]
        elif mode == "other":
            used = {(o.route or "").upper() for o in in_win}
            alts = [r for r in _ROUTES if r not in used and not any(r in u for u in used)]
            if not alts:
                continue
            route, columns = rng.choice(alts), ["route"]
        elif mode not in ("ok", "time"):
            return None
        name = drug_surface(m.drug, rng)
        dose_s = f"{dose:g}"
        unit = m.dose_unit
        when = anchor_phrase(ctx, claim_date)
        duration = ""
        claim: dict[str, Any] = {"drug": m.drug, "dose_val_rx": float(dose_s), "dose_unit_rx": unit, "route": route}
        cols = ["drug", "dose_val_rx", "dose_unit_rx", "route", "startdate"]
        if mode == "ok" and m.end is not None and (m.end - m.start).days >= 2 and rng.random() < 0.35:
            n = (m.end - m.start).days
            duration = rng.choice((f" x{n} days", f" x {n}d", f" for {n} days"))
            claim["duration_days"] = n
            cols.append("enddate")
        entity = f"{name} {dose_s} {unit} {route}"
        freq = "" if "DRIP" in (route or "").upper() else rng.choice(_FREQ)
        text = rng.choice((f"started on {entity}{freq} {when}{duration}",
                           f"{when[:1].upper() + when[1:]} started {entity}{freq}{duration}",
                           f"received {entity}{duration} ({when})",
                           f"{entity}{freq} was started {when}{duration}"))
        reasoning = "none" if name.lower() == m.drug.lower() else "commonsense"
        evidence = tuple(RowRef("prescriptions", o.row_id) for o in (in_win or [m])[:5])
        return Stmt("medication", text, entity, label_for(mode),
                    (ItemRef("prescriptions", m.drug, None),), tuple(cols), claim, f"{dose_s} {unit} {route}",
                    window, incon(mode, columns), evidence, reasoning, None,
                    P_LEX + ("Get_Item_Status_History",) + (("View_General_Timeline",) if mode == "time" else ()))
    return None


def _drug_present(ctx: Ctx, name: str) -> bool:
    token = name.split()[0].lower()
    if any(token in m.drug.lower() for m in ctx.facts.meds):
        return True
    return any(token in i.item.label.lower() for i in ctx.facts.inputs)


def _missing_drug(ctx: Ctx, antibiotics: bool = False) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    names = [n for n in _MISSING_DRUGS if not _drug_present(ctx, n) and (not antibiotics or ANTIBIOTIC.search(n))]
    if not names:
        return None
    drug = rng.choice(names)
    d = rng.choice([f.admittime.date() + dt.timedelta(days=i) for i in range(f.n_days)]) \
        if ctx.note_type == "discharge_summary" else ctx.note_date
    dose, unit, route = _MISSING_DRUGS[drug]
    dose = float(dose)
    entity = f"{drug.lower() if rng.random() < 0.5 else drug} {dose:g} {unit} {route}"
    when = anchor_phrase(ctx, d)
    text = rng.choice((f"started on {entity} {when}", f"{entity} was started {when}", f"received {entity} ({when})"))
    return Stmt("medication", text, entity, "inconsistent", (ItemRef("prescriptions", drug, None),),
                ("drug", "dose_val_rx", "dose_unit_rx", "route", "startdate"),
                {"drug": drug, "dose_val_rx": dose, "dose_unit_rx": unit, "route": route}, f"{dose:g} {unit} {route}",
                day_window(d), incon("missing", ()), (), "none", None,
                missing_path(ctx))
