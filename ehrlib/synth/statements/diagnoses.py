"""Billed diagnoses (DIAGNOSES_ICD), or a common one that was never billed."""
from __future__ import annotations

from ehrlib.corpus.records import ItemRef, RowRef
from ehrlib.synth.notes_templates import dx_surface
from ehrlib.synth.statements.base import P_LEX, P_SEM, Ctx, Stmt, incon, missing_path

__all__ = ["diagnosis"]


_MISSING_DX = ("4280", "5849", "486", "0389", "5990", "42731", "2851", "25000", "4019", "5070", "2762", "78552")


def diagnosis(ctx: Ctx, mode: str, exclude: set | None = None) -> Stmt | None:
    """A billed diagnosis (``exclude`` collects the codes already written in this note)."""
    f, rng = ctx.facts, ctx.rng
    exclude = exclude if exclude is not None else set()
    if mode == "missing":
        billed = {d.code for d in f.diagnoses}
        cands = [c for c in _MISSING_DX if c not in billed and c not in exclude]
        rng.shuffle(cands)
        for code in cands:
            pt = ctx.smap.table("d_icd_diagnoses")
            row = ctx.con.execute(
                f"SELECT {pt.expr('short_title')}, {pt.expr('long_title')} FROM {pt.ref} "  # noqa: S608
                f"WHERE {pt.col('icd9_code')} = ? LIMIT 1", [code]).fetchone()
            if not row or not (row[0] or row[1]):
                continue
            exclude.add(code)
            text = dx_surface(row[0], row[1], rng)
            return Stmt("diagnosis", text, text, "inconsistent", (ItemRef("diagnoses_icd", row[1] or row[0], code),),
                        ("icd9_code",), {"icd9_code": code}, code, None, incon("missing", ()), (),
                        "commonsense", None, missing_path(ctx))
        return None
    if mode != "ok":
        return None
    dxs = [d for d in f.diagnoses if d.code not in exclude and (d.short_title or d.long_title)]
    if not dxs:
        return None
    d = rng.choice(dxs[:8])
    exclude.add(d.code)
    text = dx_surface(d.short_title, d.long_title, rng)
    return Stmt("diagnosis", text, text, "consistent", (ItemRef("diagnoses_icd", d.long_title or d.short_title or "",
                                                                d.code),),
                ("icd9_code",), {"icd9_code": d.code}, d.code, None, None, (RowRef("diagnoses_icd", d.row_id),),
                "commonsense", None, P_LEX + P_SEM + ("Get_Item_Status_History",))
