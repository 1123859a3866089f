"""24 h ranges of the physician note's vitals block: last (min - max) over the note day."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.synth.notes_facts import Obs
from ehrlib.synth.statements.base import (
    CONCEPTS,
    DAY,
    P_LEX,
    Ctx,
    Stmt,
    fmt_value,
    in_span,
    incon,
    iref,
    iso,
    label_for,
    main_item,
    row_refs,
    wrong_number,
)

__all__ = ["vital_range"]


def _stats(rows: Sequence[Obs]) -> dict[str, float] | None:
    vals = [o.valuenum for o in rows if o.valuenum is not None]
    if not vals:
        return None
    last_t = max(o.time for o in rows if o.valuenum is not None)
    lasts = {o.valuenum for o in rows if o.time == last_t and o.valuenum is not None}
    if len(lasts) != 1:
        return None
    return {"last": lasts.pop(), "min": min(vals), "max": max(vals)}


def vital_range(ctx: Ctx, mode: str, concept_key: str | None = None) -> Stmt | None:
    """``HR: 88 (72 - 110) bpm`` / ``BP: 100/60(80) {90/50(65) - 140/100(120)}`` over the note day."""
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "value"):
        return None
    start = dt.datetime.combine(ctx.note_date, dt.time())
    window = TimeSpan(iso(start), iso(start + DAY - dt.timedelta(seconds=1)))
    keys = [concept_key] if concept_key else ["bp", "hr", "rr", "spo2", "temp"]
    rng.shuffle(keys)
    for key in keys:
        comps = ("sbp", "dbp", "map") if key == "bp" else ("temp_f",) if key == "temp" else (key,)
        picked = []
        for c in comps:
            rows = [o for o in f.series.get(c, ()) if in_span(o.time, window) and o.valuenum is not None]
            rows = main_item(rows)
            st = _stats(rows)
            if st is None:
                break
            picked.append((c, rows, st))
        if len(picked) != len(comps):
            continue
        if key == "temp":
            c, rows, st = picked[0]
            claims: list[dict[str, Any]] = [{"itemid": rows[0].item.itemid, "max": float(fmt_value(st["max"], 1))}]
            if mode == "value":
                w = wrong_number(st["max"], [o.num for o in rows], rng, 1)
                if w is None or w > 110 or w < 90:
                    w = st["max"] + 4.5 if st["max"] < 104 else None
                if w is None:
                    continue
                claims[0]["max"] = w
            entity = f"Tmax: {fmt_value(claims[0]['max'], 1)} F"
            text = entity + rng.choice(("", f"  Tcurrent: {fmt_value(st['last'], 1)} F"))
        else:
            claims = [{"itemid": rows[0].item.itemid, **{k: float(round(v)) for k, v in st.items()}}
                      for c, rows, st in picked]
            if mode == "value":
                tgt = rng.choice(range(len(claims)))
                c, rows, st = picked[tgt]
                w = wrong_number(st["max"], [o.num for o in rows], rng, 0)
                if w is None or w < st["max"]:
                    w = round(st["max"] * 1.6 + 10)
                claims[tgt]["max"] = float(w)
            if key == "bp":
                s, d_, m = claims

                def trip(k: str) -> str:
                    return f"{s[k]:.0f}/{d_[k]:.0f}({m[k]:.0f})"  # noqa: B023 - called in this iteration
                entity = "BP"
                text = f"BP: {trip('last')} {{{trip('min')} - {trip('max')}}} mmHg"
            else:
                concept = CONCEPTS[key]
                cl = claims[0]
                entity = {"hr": "HR", "rr": "RR", "spo2": "SpO2"}[key]
                unit = {"hr": " bpm", "rr": " insp/min", "spo2": "%"}[key]
                text = rng.choice((f"{entity}: {cl['last']:.0f} ({cl['min']:.0f} - {cl['max']:.0f}){unit}",
                                   f"{entity}: {cl['last']:.0f}{unit} ({cl['min']:.0f} - {cl['max']:.0f})"))
                del concept
        items = tuple(iref(rows[0]) for _, rows, _ in picked)
        evidence = tuple(r for _, rows, _ in picked for r in row_refs(rows[:3] + rows[-2:]))
        return Stmt("vital_range", text, entity if key != "temp" else entity, label_for(mode), items,
                    ("valuenum", "charttime"), {"stats": claims}, text.split(": ", 1)[1], window,
                    incon(mode, ["valuenum"]), evidence, "none", None,
                    P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
    return None
