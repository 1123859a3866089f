"""Event relations: an antibiotic started before or after a culture, checked on the order's start."""
from __future__ import annotations

from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_templates import drug_surface
from ehrlib.synth.statements.base import P_LEX, Ctx, Stmt, incon, label_for
from ehrlib.synth.statements.medications import ANTIBIOTIC, dose_num

__all__ = ["relation_pair", "relation"]


def relation_pair(ctx: Ctx) -> tuple[Any, Any, int] | None:
    """(culture row with an organism, first order of an antibiotic, days from culture to start),
    where the start is at least a day away from the culture so before/after is unambiguous.
    """
    f, rng = ctx.facts, ctx.rng
    firsts: dict[str, Any] = {}
    for m in f.meds:
        if m.start is not None and ANTIBIOTIC.search(m.drug) and dose_num(m.dose) is not None:
            key = m.drug.strip().lower()
            if key not in firsts or m.start < firsts[key].start:
                firsts[key] = m
    cultures = {(m.specimen, m.organism, m.time.date()): m for m in f.micro if m.organism and m.specimen}
    pairs = [(c, o, (o.start.date() - c.time.date()).days) for c in cultures.values() for o in firsts.values()]
    pairs = [p for p in pairs if p[2] != 0 and abs(p[2]) <= 7]
    if not pairs:
        return None
    pairs.sort(key=lambda p: (p[0].row_id, p[1].row_id))
    return rng.choice(pairs)


def relation(ctx: Ctx, mode: str, anchor: Any = None, order: Any = None, diff: int = 0) -> Stmt | None:
    """"started on vanc the following day" after a culture: checked on the order's first start."""
    rng = ctx.rng
    if mode not in ("ok", "time") or anchor is None or order is None or diff == 0:
        return None
    truth = "after" if diff > 0 else "before"
    said = truth if mode == "ok" else ("before" if truth == "after" else "after")
    name = drug_surface(order.drug, rng)
    claim: dict[str, Any] = {"drug": order.drug, "relation": said,
                             "anchor": {"table": "microbiologyevents", "row_id": anchor.row_id}}
    if said == "after":
        if mode == "ok" and diff in (1, 2) and rng.random() < 0.6:
            phrase = "the following day" if diff == 1 else "2 days later"
            claim["days_after"] = diff
        else:
            phrase = rng.choice(("afterwards", "after that", "after the culture resulted"))
        text = rng.choice((f"started on {name} {phrase}", f"{name} started {phrase}"))
    else:
        text = rng.choice((f"already on {name} prior to this", f"{name} had been started before the culture"))
    return Stmt("relation", text, name, label_for(mode), (ItemRef("prescriptions", order.drug, None),),
                ("drug", "startdate"), claim, said, None, incon(mode, ["startdate"]),
                (RowRef("microbiologyevents", anchor.row_id), RowRef("prescriptions", order.row_id)),
                "commonsense", None, P_LEX + ("Get_Item_Status_History", "View_General_Timeline"))
