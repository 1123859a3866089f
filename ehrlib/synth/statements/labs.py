"""Numeric point values: a lab result on a day (``WBC 14.2 on HD 2``; results-section ``WBC-14.2*``)."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ehrlib.corpus.records import ItemRef
from ehrlib.synth.notes_facts import LAB_CONCEPTS, MISSING_LAB_CONCEPTS, rows_exist
from ehrlib.synth.statements.base import (
    CONCEPTS,
    P_LEX,
    VALUE_TOLERANCE,
    Ctx,
    Stmt,
    anchor_phrase,
    day_window,
    far_dates,
    fmt_value,
    in_span,
    incon,
    iref,
    label_for,
    main_item,
    missing_path,
    row_refs,
    wrong_number,
)

__all__ = ["lab_value"]


def lab_value(ctx: Ctx, mode: str, concept_key: str | None = None, keys: Sequence[str] | None = None,
              on_date: dt.date | None = None, panel: bool = False) -> Stmt | None:
    """A lab value; ``panel`` writes the results-section form ``WBC-14.2*`` under a dated line."""
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        return _missing_lab(ctx, on_date if panel else None)
    if panel and (on_date is None or mode == "time"):
        return None
    keys = [concept_key] if concept_key else list(keys or [c.key for c in LAB_CONCEPTS])
    rng.shuffle(keys)
    for key in keys:
        concept = CONCEPTS[key]
        rows = [o for o in main_item(f.series.get(key, ())) if o.valuenum is not None]
        on_note_day = False
        if on_date is not None:
            rows = [o for o in rows if o.time.date() == on_date]
        elif ctx.note_type != "discharge_summary":
            today = [o for o in rows if o.time.date() == ctx.note_date]
            rows, on_note_day = today or rows, bool(today)
        if not rows:
            continue
        r = rng.choice(rows)
        same_item = [o for o in f.series[key] if o.item.itemid == r.item.itemid and o.valuenum is not None]
        # a progress-note lab without a date means "today"; anything else gets its date written
        explicit = not on_note_day or mode == "time" or rng.random() < 0.2
        claim_date = r.time.date()
        value = r.num
        columns = ["valuenum"]
        if mode == "time":
            cands = [d for d in far_dates(ctx, [o.time.date() for o in same_item if o.valuenum is not None
                                                and abs(o.valuenum - value) <= VALUE_TOLERANCE * abs(o.valuenum)])
                     if not any(in_span(o.time, day_window(d)) for o in same_item)]
            if not cands:
                continue
            claim_date = rng.choice(cands)
            columns = ["charttime"]
        window = day_window(claim_date) if explicit else ctx.default_window
        in_win = [o.num for o in same_item if in_span(o.time, window)]
        if mode == "value":
            w = wrong_number(value, in_win, rng, concept.decimals)
            if w is None:
                continue
            value = w
        elif mode not in ("ok", "time"):
            return None
        surf = rng.choice(concept.surfaces)
        val = fmt_value(value, concept.decimals)
        unit = concept.unit if rng.random() < 0.4 else ""
        flag = "*" if (r.flag or "").lower().startswith("abn") and mode == "ok" and rng.random() < 0.5 else ""
        entity = rng.choice((f"{surf} {val}{flag}", f"{surf} {val} {unit}".strip(), f"{surf} of {val}",
                             f"{surf}-{val}{flag}"))
        if panel:
            entity = f"{concept.surfaces[0]}-{val}{flag}"
        when = anchor_phrase(ctx, claim_date) if explicit and not panel else ""
        text = rng.choice((f"{entity} {when}", f"{when} {entity}" if when else entity,
                           f"{entity} ({when})" if when else entity)).strip()
        if when.startswith("on ") and text.startswith(when):
            text = text[0].upper() + text[1:]
        evidence = row_refs([r]) if mode in ("ok", "time") else \
            row_refs([o for o in same_item if in_span(o.time, window)][:5])
        return Stmt("lab_value", text, entity, label_for(mode), (iref(r),), ("valuenum", "charttime"),
                    {"valuenum": float(val)}, val, window, incon(mode, columns), evidence, "none", None,
                    P_LEX + ("Get_Item_Status_History",) + (("View_General_Timeline",) if mode == "time" else ()))
    return None


#: plausible values for labs a note mentions although they were never drawn
_TYPICAL = {"lipase": 45, "trop": 0.05, "bnp": 850, "ammonia": 38, "tsh": 2.1, "ck": 210, "ferritin": 340,
            "ddimer": 560, "mg": 1.9, "alt": 32}


def _missing_lab(ctx: Ctx, panel_date: dt.date | None = None) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    cands = list(MISSING_LAB_CONCEPTS)
    rng.shuffle(cands)
    for concept in cands:
        items = ctx.index.items.get(concept.key) or []
        if not items or any(rows_exist(ctx.con, ctx.smap, "labevents", f.hadm_id, "itemid", it.itemid,
                                       f.subject_id, ctx.admission_window()) for it in items):
            continue
        it = items[0]
        val = fmt_value(_TYPICAL[concept.key] * rng.choice((0.8, 1.0, 1.3, 2.0)), concept.decimals)
        surf = rng.choice(concept.surfaces)
        d = panel_date or (f.admittime.date() if ctx.note_type == "discharge_summary" else ctx.note_date)
        explicit = ctx.note_type == "discharge_summary" or panel_date is not None
        entity = rng.choice((f"{surf} {val}", f"{surf} of {val}", f"{surf} {val} {concept.unit}".strip()))
        if panel_date is not None:
            entity = f"{concept.surfaces[0]}-{val}"
        text = f"{entity} {anchor_phrase(ctx, d)}" if explicit and panel_date is None else entity
        window = day_window(d) if explicit else ctx.default_window
        return Stmt("lab_value", text, entity, "inconsistent", (ItemRef("labevents", it.label, it.itemid),),
                    ("valuenum", "charttime"), {"valuenum": float(val)}, val, window,
                    incon("missing", ()), (), "none", None,
                    missing_path(ctx))
    return None
