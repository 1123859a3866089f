"""Categorical nursing findings (LOC, rhythm, skin, lungs, ...) from charted values."""
from __future__ import annotations

from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_facts import rows_exist
from ehrlib.synth.notes_templates import category_surface
from ehrlib.synth.statements.base import CONCEPTS, P_SEM, Ctx, Stmt, in_span, incon, iref, label_for, row_refs

__all__ = ["categorical"]


def _distribution(ctx: Ctx, itemid: Any) -> list[str]:
    key = ("dist", itemid)
    if key not in ctx.cache:
        pt = ctx.smap.table("chartevents")
        rows = ctx.con.execute(
            f"SELECT {pt.col('value')}, count(*) AS n FROM {pt.ref} WHERE {pt.col('itemid')} = ? "  # noqa: S608
            f"AND {pt.col('value')} IS NOT NULL GROUP BY 1 ORDER BY n DESC, 1 LIMIT 10", [itemid]).fetchall()
        ctx.cache[key] = [str(r[0]) for r in rows]
    return ctx.cache[key]


def categorical(ctx: Ctx, mode: str, concept_key: str) -> Stmt | None:
    """A charted finding of the note day; a wrong one is a value charted elsewhere, never here."""
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "value", "missing"):
        return None
    concept = CONCEPTS[concept_key]
    window = ctx.default_window
    rows = [o for o in f.categorical.get(concept_key, ()) if o.value and in_span(o.time, window)
            and o.time.date() == ctx.note_date]
    if mode == "missing":
        items = ctx.index.items.get(concept_key) or []
        if not items or f.categorical.get(concept_key) or any(
                rows_exist(ctx.con, ctx.smap, "chartevents", f.hadm_id, "itemid", it.itemid) for it in items):
            return None
        dist = _distribution(ctx, items[0].itemid)
        if not dist:
            return None
        claimed, it = dist[0], items[0]
        evidence: tuple[RowRef, ...] = ()
        item_ref = ItemRef("chartevents", it.label, it.itemid)
    else:
        if not rows:
            return None
        r = rng.choice(rows)
        item_rows = [o for o in f.categorical[concept_key]
                     if o.item.itemid == r.item.itemid and in_span(o.time, window)]
        claimed = r.value or ""  # (rows with a value only)
        if mode == "value":
            seen = {(o.value or "").strip().lower() for o in item_rows}
            alts = [v for v in _distribution(ctx, r.item.itemid) if v.strip().lower() not in seen]
            if not alts:
                return None
            claimed = rng.choice(alts)
            evidence = row_refs(item_rows[:5])
        else:
            evidence = row_refs([r])
        item_ref = iref(r)
    surf = category_surface(claimed, rng)
    name = rng.choice(concept.surfaces)
    bare_ok = concept_key in ("loc", "abd", "skin", "rhythm")  # values that name their system
    entity = rng.choice((f"{name} {surf}", f"{surf}" if bare_ok else f"{name} {surf}", f"{name}: {surf}"))
    reasoning = "none" if surf.lower() == claimed.lower() else "commonsense"
    path = P_SEM + ("Get_Item_Value_Distribution", "Get_Item_Status_History")
    return Stmt("finding", entity, entity, label_for(mode), (item_ref,), ("value", "charttime"),
                {"value": claimed}, claimed, window, incon(mode, ["value"]), evidence, reasoning, None, path)
