"""Cultures: specimen, organism and susceptibilities on a day (MICROBIOLOGYEVENTS)."""
from __future__ import annotations

from typing import Any

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_templates import deid_date, organism_surface, specimen_surface
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
)

__all__ = ["micro"]


_MISSING_MICRO = (("URINE", "ESCHERICHIA COLI"), ("BLOOD CULTURE", "STAPH AUREUS COAG +"),
                  ("SPUTUM", "PSEUDOMONAS AERUGINOSA"), ("BLOOD CULTURE", "KLEBSIELLA PNEUMONIAE"))


def micro(ctx: Ctx, mode: str, row_id: int | None = None) -> Stmt | None:
    """Cultures: organism + susceptibility, "pan-sensitive", or organism only (relation anchors)."""
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        combos = [(s, o) for s, o in _MISSING_MICRO if not any(
            (m.specimen or "").upper().startswith(s.split()[0]) and (m.organism or "").upper() == o for m in f.micro)]
        if not combos:
            return None
        spec, org = rng.choice(combos)
        d = f.admittime.date() if ctx.note_type == "discharge_summary" else ctx.note_date
        entity = f"{specimen_surface(spec, rng)} grew {organism_surface(org, rng)}".replace(" pan-sensitive", "")
        return Stmt("microbiology", f"{entity} {anchor_phrase(ctx, d)}", entity, "inconsistent",
                    (ItemRef("microbiologyevents", spec, None),), ("spec_type_desc", "org_name", "charttime"),
                    {"spec_type_desc": spec, "org_name": org}, org, day_window(d), incon("missing", ()), (), "none",
                    None, P_LEX + ("Get_Item_Status_History", "View_General_Timeline"))
    if mode not in ("ok", "time", "value"):
        return None
    rows = [m for m in f.micro if m.organism and m.specimen]
    if row_id is not None:
        rows = [m for m in rows if m.row_id == row_id]
    elif ctx.note_type != "discharge_summary":
        rows = [m for m in rows if abs((m.time.date() - ctx.note_date).days) <= 3]
    rng.shuffle(rows)
    for m in rows:
        if not m.organism or not m.specimen:  # (rows have both)
            continue
        same = [x for x in f.micro if x.specimen == m.specimen and x.organism == m.organism]
        interp, columns = m.interpretation, ["charttime"]
        claim_date = claimed_date(ctx, mode, m.time.date(), [x.time.date() for x in same])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        in_win = {x.interpretation for x in same if in_span(x.time, window) and x.interpretation}
        has_ab = bool(m.antibiotic) and interp in ("S", "R", "I")
        pan = row_id is None and in_win and mode in ("ok", "value") and (
            (mode == "ok" and in_win == {"S"} and rng.random() < 0.35) or (mode == "value" and in_win != {"S"}))
        claim: dict[str, Any] = {"spec_type_desc": m.specimen, "org_name": m.organism}
        org = organism_surface(m.organism, rng).replace("pan-sensitive ", "")
        spec = specimen_surface(m.specimen, rng)
        if pan:
            entity = rng.choice((f"{spec} grew pan-sensitive {org}", f"pan-sensitive {org} in {spec.lower()}"))
            claim["all_sensitive"] = True
            cols: tuple[str, ...] = ("spec_type_desc", "org_name", "interpretation", "charttime")
            value, columns = "S", \
                (["interpretation"] if mode == "value" else columns)
        elif has_ab and row_id is None and interp is not None and m.antibiotic:  # (has_ab implies both)
            if mode == "value":
                flipped = "R" if interp == "S" else "S"
                if any(x.antibiotic == m.antibiotic and x.interpretation == flipped and in_span(x.time, window)
                       for x in same):
                    continue
                interp, columns = flipped, ["interpretation"]
            word = {"S": rng.choice(("sensitive to", "susceptible to", "S to")),
                    "R": rng.choice(("resistant to", "R to")), "I": "intermediate to"}[interp]
            entity = f"{spec} grew {org} {word} {m.antibiotic.lower()}"
            claim.update(ab_name=m.antibiotic, interpretation=interp)
            cols, value = ("spec_type_desc", "org_name", "ab_name", "interpretation", "charttime"), interp
        else:
            if mode == "value":
                continue
            entity = rng.choice((f"{spec} grew {org}", f"{spec} + {org}", f"{org} in {spec.lower()}"))
            cols, value = ("spec_type_desc", "org_name", "charttime"), m.organism
        when = deid_date(claim_date, rng) if rng.random() < 0.6 else anchor_phrase(ctx, claim_date)
        text = rng.choice((f"{entity} ({when})", f"{when} {entity}"))
        return Stmt("microbiology", text, entity, label_for(mode), (ItemRef("microbiologyevents", m.specimen, None),),
                    cols, claim, value, window, incon(mode, columns), (RowRef("microbiologyevents", m.row_id),),
                    "commonsense", None, P_LEX + ("Get_Item_Status_History", "View_General_Timeline"))
    return None
