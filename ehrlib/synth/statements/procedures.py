"""Procedures, lines and airways: performed on a day, at a side (PROCEDUREEVENTS_MV)."""
from __future__ import annotations

import re
from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_facts import rows_exist
from ehrlib.synth.notes_templates import location_surface
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
)

__all__ = ["procedure"]


def _swap_side(loc: str) -> str | None:
    m = re.match(r"(?i)^(right|left|r|l|rt|lt)(\s+.*)$", loc.strip())
    if not m:
        return None
    side = m.group(1).lower()
    other = {"right": "Left", "left": "Right", "r": "L", "l": "R", "rt": "Lt", "lt": "Rt"}[side]
    return other + m.group(2)


_MISSING_PROCS = (r"^intubation$", r"^arterial line$", r"^multi lumen$", r"^dialysis - crrt$",
                  r"^chest x-ray$", r"^ct scan$", r"^paracentesis$", r"^bronchoscopy$")


def procedure(ctx: Ctx, mode: str) -> Stmt | None:
    """A procedure or line on a day, with its side where charted."""
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        return _missing_proc(ctx)
    if mode not in ("ok", "time", "other"):
        return None
    procs = list(f.procedures)
    if ctx.note_type != "discharge_summary":
        procs = [p for p in procs if p.start.date() == ctx.note_date]
    rng.shuffle(procs)
    for p in procs:
        same = [q for q in f.procedures if q.item.itemid == p.item.itemid]
        loc, columns = (p.location or "").strip() or None, ["starttime"]
        claim_date = claimed_date(ctx, mode, p.start.date(), [q.start.date() for q in same])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        if mode == "other":
            if not loc:
                continue
            swapped = _swap_side(loc)
            used = {_norm_loc(q.location) for q in same if in_span(q.start, window)}
            if not swapped or _norm_loc(swapped) in used:
                continue
            loc, columns = swapped, ["location"]
        when = anchor_phrase(ctx, claim_date)
        label = p.item.label
        name = label if rng.random() < 0.5 else label.lower()
        entity = f"{location_surface(loc, rng)} {name}" if loc else name
        placed = re.search(r"(?i)gauge|line|lumen|catheter|picc|cordis|tube", label)
        text = rng.choice((f"{entity} placed {when}" if placed else f"{entity} done {when}", f"s/p {entity} {when}",
                           f"{entity} {when}"))
        claim: dict[str, Any] = {"performed": True}
        cols = ["itemid", "starttime"]
        if loc:
            claim["location"] = loc
            cols.append("location")
        return Stmt("procedure", text, entity, label_for(mode),
                    (ItemRef("procedureevents_mv", label, p.item.itemid),), tuple(cols), claim, loc, window,
                    incon(mode, columns), (RowRef("procedureevents_mv", p.row_id),),
                    "commonsense" if loc else "none", None,
                    P_LEX + ("Get_Item_Status_History",) + (("View_General_Timeline",) if mode == "time" else ()))
    return None


def _norm_loc(loc: str | None) -> str:
    s = re.sub(r"[^a-z ]", "", (loc or "").lower()).strip()
    s = re.sub(r"^(r|rt)\b", "right", s)
    return re.sub(r"^(l|lt)\b", "left", s)


def _missing_proc(ctx: Ctx) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    if not ctx.smap.has("procedureevents_mv"):
        return None
    labels = [(k[1], v) for k, v in ctx.index.labels.items() if k[0] == "d_items"]
    pats = list(_MISSING_PROCS)
    rng.shuffle(pats)
    for pat in pats:
        hits = sorted([(i, lab) for i, lab in labels if re.search(pat, lab.strip(), re.I)], key=str)
        if not hits:
            continue
        ids = {i for i, _ in hits}
        if any(p.item.itemid in ids for p in f.procedures) or any(
                rows_exist(ctx.con, ctx.smap, "procedureevents_mv", f.hadm_id, "itemid", i) for i in ids):
            continue
        itemid, label = hits[0]
        d = ctx.note_date if ctx.note_type != "discharge_summary" else f.admittime.date()
        when = anchor_phrase(ctx, d)
        entity = label.lower()
        return Stmt("procedure", f"s/p {entity} {when}", entity, "inconsistent",
                    (ItemRef("procedureevents_mv", label, itemid),), ("itemid", "starttime"), {"performed": True},
                    None, day_window(d), incon("missing", ()), (), "none", None,
                    missing_path(ctx))
    return None
