"""Trends of a lab series over the note's window: up, down, or peaked then improved."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ehrlib.corpus.records import TimeSpan
from ehrlib.synth.statements.base import (
    CONCEPTS,
    DAY,
    P_LEX,
    Ctx,
    Stmt,
    anchor_phrase,
    fmt_value,
    in_span,
    incon,
    iref,
    iso,
    label_for,
    main_item,
    row_refs,
)

__all__ = ["trend"]


def trend(ctx: Ctx, mode: str, concept_key: str | None = None, keys: Sequence[str] | None = None) -> Stmt | None:
    """A lab series going up or down over the window (or peaking, then improving)."""
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "trend"):
        return None
    keys = [concept_key] if concept_key else list(keys or ("cr", "wbc", "lactate", "hgb", "plt", "bun", "tbili"))
    rng.shuffle(keys)
    for key in keys:
        concept = CONCEPTS[key]
        rows = [o for o in main_item(f.series.get(key, ())) if o.valuenum is not None]
        if ctx.note_type != "discharge_summary":
            lo = dt.datetime.combine(ctx.note_date - 2 * DAY, dt.time())
            window = TimeSpan(iso(lo), ctx.default_window.end)
        else:
            window = ctx.default_window
        rows = [o for o in rows if in_span(o.time, window)]
        if len(rows) < 3 or rows[0].num <= 0:
            continue
        first, last = rows[0].num, rows[-1].num
        change = (last - first) / abs(first)
        peak = max(rows, key=lambda o: o.num)
        surf = rng.choice(concept.surfaces)
        if (mode == "ok" and peak is not rows[0] and peak is not rows[-1] and first <= 0.8 * peak.num
                and last <= 0.8 * peak.num and rng.random() < 0.5):
            val = fmt_value(peak.num, concept.decimals)
            entity = f"{surf} peaked at {val}"
            text = rng.choice((f"{entity} {anchor_phrase(ctx, peak.time.date())} then improved",
                               f"{entity} {anchor_phrase(ctx, peak.time.date())}, subsequently downtrended"))
            return Stmt("trend", text, entity, "consistent", (iref(peak),), ("valuenum", "charttime"),
                        {"trend": "peak", "peak": float(val)}, val, window, None,
                        row_refs([rows[0], peak, rows[-1]]), "commonsense", None,
                        P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
        if abs(change) < 0.25:
            continue
        truth = "up" if change > 0 else "down"
        said = truth if mode == "ok" else ("down" if truth == "up" else "up")
        word = rng.choice(("uptrending", "rising", "trending up", "increased") if said == "up"
                          else ("downtrending", "improving", "trending down", "decreased"))
        if rng.random() < 0.4 and mode == "ok":
            entity = f"{surf} {word} ({fmt_value(first, concept.decimals)} -> {fmt_value(last, concept.decimals)})"
        else:
            entity = f"{surf} {word}"
        return Stmt("trend", entity, entity, label_for(mode), (iref(rows[0]),), ("valuenum", "charttime"),
                    {"trend": said}, word, window, incon(mode, ["valuenum"]), row_refs([rows[0], rows[-1]]),
                    "commonsense", None, P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
    return None
