"""Drips and boluses: started on a day, weaned off, or running at a rate (INPUTEVENTS)."""
from __future__ import annotations

import random
import re
from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_facts import rows_exist
from ehrlib.synth.notes_templates import input_surface
from ehrlib.synth.statements.base import (
    P_LEX,
    P_SEM,
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

__all__ = ["infusion"]


_MISSING_INPUTS = (r"^vasopressin$", r"^phenylephrine$|^neosynephrine", r"^dopamine", r"^epinephrine",
                   r"^amiodarone", r"^heparin sodium$|^heparin$", r"^insulin - regular$|^insulin$",
                   r"^midazolam|^versed")


def _missing_input(ctx: Ctx) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    tables = [t for t in ("inputevents_mv", "inputevents_cv") if ctx.smap.has(t)]
    if not tables:
        return None
    used = {e.item.label.lower() for e in f.inputs}
    pats = list(_MISSING_INPUTS)
    rng.shuffle(pats)
    labels = sorted(((k[1], v) for k, v in ctx.index.labels.items() if k[0] == "d_items"), key=str)
    for pat in pats:
        hits = [(i, lab) for i, lab in labels if re.search(pat, lab.strip(), re.I)]
        if not hits or any(re.search(pat, u, re.I) for u in used):
            continue
        if any(rows_exist(ctx.con, ctx.smap, t, f.hadm_id, "itemid", i) for t in tables for i, _ in hits):
            continue
        itemid, label = hits[0]
        name = input_surface(label, rng) or label.lower()
        d = ctx.note_date if ctx.note_type != "discharge_summary" else f.admittime.date()
        when = anchor_phrase(ctx, d)
        text = rng.choice((f"started on {name} {when}", f"{name} started {when}", f"{name} initiated {when}"))
        return Stmt("infusion", text, name, "inconsistent", (ItemRef(tables[0], label, itemid),),
                    ("itemid", "starttime" if tables[0] == "inputevents_mv" else "charttime"), {"started": True},
                    None, day_window(d), incon("missing", ()), (), "commonsense", None,
                    missing_path(ctx))
    return None


def infusion(ctx: Ctx, mode: str, with_rate: bool = False) -> Stmt | None:
    """Drips and boluses: started on a day, weaned off (last end time), or running at a rate."""
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        return _missing_input(ctx)
    if mode not in ("ok", "time", "value"):
        return None
    by_item: dict[Any, list] = {}
    for e in f.inputs:
        if input_surface(e.item.label, random.Random(0)) is not None:
            by_item.setdefault((e.table, e.item.itemid), []).append(e)
    keys = sorted(by_item, key=str)
    rng.shuffle(keys)
    for key in keys:
        events = by_item[key]
        table = events[0].table
        start_col = "starttime" if table == "inputevents_mv" else "charttime"
        item_ref = ItemRef(table, events[0].item.label, events[0].item.itemid)
        name = input_surface(events[0].item.label, rng)
        if name is None:  # (only items with a surface form are kept)
            continue
        reasoning = "none" if name.lower() in events[0].item.label.lower() else "commonsense"
        path = P_LEX + P_SEM + ("Get_Item_Status_History",) + (("View_General_Timeline",) if mode == "time" else ())
        if with_rate:
            if mode == "time":
                return None
            d = ctx.note_date
            rated = [e for e in events if e.rate is not None and e.rate > 0 and e.start.date() == d and e.rate_unit]
            if not rated:
                continue
            e = rng.choice(rated)
            window = day_window(d)
            rate = e.rate
            if mode == "value":
                w = wrong_number(rate, [x.rate for x in events if x.rate is not None and in_span(x.start, window)],
                                 rng, 2)
                if w is None:
                    continue
                rate = w
            shown = f"{rate:.3g}"
            entity = f"{name} - {shown} {e.rate_unit}"
            return Stmt("infusion", entity, entity, label_for(mode), (item_ref,), ("itemid", "rate", start_col),
                        {"rate": float(shown)}, shown, window, incon(mode, ["rate"]), (RowRef(table, e.row_id),),
                        reasoning, None, path)
        if mode == "value":
            return None
        ends = [e.end for e in events if e.end is not None]
        stop = table == "inputevents_mv" and ends and rng.random() < 0.35
        if stop:
            last = max(ends)
            if ctx.note_type != "discharge_summary" and abs((last.date() - ctx.note_date).days) > 1:
                stop = False
        if stop:
            claim_date = claimed_date(ctx, mode, last.date(), [last.date()])
            if claim_date is None:
                continue
            when = anchor_phrase(ctx, claim_date)
            text = rng.choice((f"{name} weaned off {when}", f"weaned off {name} {when}",
                               f"{name} off {when}", f"pressors ({name}) weaned off {when}"))
            last_row = max((e for e in events if e.end is not None), key=lambda e: (e.end, e.row_id))
            return Stmt("infusion", text, name, label_for(mode), (item_ref,), ("itemid", "endtime"), {"stopped": True},
                        None, day_window(claim_date), incon(mode, ["endtime"]), (RowRef(table, last_row.row_id),),
                        reasoning, None, path)
        first = events[0]
        if ctx.note_type != "discharge_summary":
            todays = [e for e in events if e.start.date() == ctx.note_date]
            if not todays:
                continue
            first = todays[0]
        claim_date = claimed_date(ctx, mode, first.start.date(), [e.start.date() for e in events])
        if claim_date is None:
            continue
        when = anchor_phrase(ctx, claim_date)
        text = rng.choice((f"started on {name} {when}", f"{name} started {when}",
                           f"{when[:1].upper() + when[1:]} required {name}", f"{name} initiated {when}"))
        return Stmt("infusion", text, name, label_for(mode), (item_ref,), ("itemid", start_col), {"started": True},
                    None,
                    day_window(claim_date), incon(mode, [start_col]), (RowRef(first.table, first.row_id),),
                    reasoning, None, path)
    return None
