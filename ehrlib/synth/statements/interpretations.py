"""Interpretations (febrile, hypotensive, AKI, oliguric, ...) judged against the clinical criteria.

A label is only written where the rows are clearly on one side of the criterion's threshold
(generator-side margins), so it never hinges on rounding.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from ehrlib.corpus.records import TimeSpan
from ehrlib.criteria import Criterion, load_criteria
from ehrlib.synth.notes_facts import Obs
from ehrlib.synth.statements.base import (
    DAY,
    P_SEM,
    Ctx,
    Stmt,
    anchor_phrase,
    day_window,
    in_span,
    incon,
    iref,
    iso,
    label_for,
    main_item,
    row_refs,
)
from ehrlib.synth.statements.outputs import start_day, urine_day

__all__ = ["interpretation"]


#: generator-side margins beyond the cited threshold, so a label never hinges on rounding
_MARGIN = {"fever": (0.5, 0.3), "tachycardia": (5, 5), "bradycardia": (5, 5), "hypotension": (5, 5),
           "hypertension": (10, 10), "anemia": (0.5, 0.5), "hypoxia": (2, 2), "leukocytosis": (1.0, 1.0),
           "leukopenia": (0.5, 0.5), "tachypnea": (3, 3), "bradypnea": (2, 2)}
_INTERP_CONCEPTS = ("fever", "tachycardia", "bradycardia", "hypotension", "anemia", "hypoxia", "leukocytosis",
                    "leukopenia", "tachypnea", "bradypnea")


def _judge(crit: Criterion, rows: Sequence[Obs], sex: str | None) -> tuple[bool | None, list[Obs]]:
    """(True/False when clearly met/unmet, None when borderline; rows supporting it)."""
    m_hold, m_not = _MARGIN[crit.id]
    meeting, clear_not, tested = [], True, []
    for o in rows:
        if o.valuenum is None:
            continue
        for t in crit.tests_for(o.table, o.item.label, None, sex) if o.table == "chartevents" else \
                [t for t in crit.tests if t.table == o.table and t.applies_to_sex(sex)
                 and re.search(t.label, o.item.label.strip(), re.I)]:
            tested.append(o)
            v, thr = o.num, t.threshold
            if thr is None:  # (criterion tests with an operator carry a threshold)
                continue
            upward = t.operator in (">", ">=")
            beyond = (v - thr) if upward else (thr - v)
            if t.met(v) and beyond >= m_hold:
                meeting.append(o)
            if t.met(v) or -beyond < m_not:
                clear_not = False
    if not tested:
        return None, []
    if meeting:
        return True, meeting
    if clear_not:
        upward = crit.tests[0].operator in (">", ">=")
        extreme = max(tested, key=lambda o: o.num if upward else -o.num)
        return False, [extreme]
    return None, []


_INTERP_TEXT = {
    True: ("{w}", "Pt {w}", "noted to be {w}", "{w} {when}", "{W} {when}"),
    False: ("{w}", "Pt remained {w}", "{W} {when}", "{w} {when}", "{W}"),
}


def interpretation(ctx: Ctx, mode: str, crit_id: str | None = None, keys: Sequence[str] | None = None,
                   on_date: dt.date | None = None) -> Stmt | None:
    """Whether a criterion (fever, hypotension, AKI, oliguria, ...) held in the window."""
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "interpretation"):
        return None
    crits = load_criteria()
    ids = [crit_id] if crit_id else list(keys or (*_INTERP_CONCEPTS, "aki"))
    rng.shuffle(ids)
    for cid in ids:
        crit = crits[cid]
        if crit.kind in ("delta", "rate"):
            st = (_aki if crit.kind == "delta" else _oliguria)(ctx, crit, mode)
            if st:
                return st
            continue
        if cid == "anemia" and not f.gender:
            continue
        rows_all = list(f.series.get("crit:" + cid, ()))
        if not rows_all:
            continue
        if on_date is not None:
            d, explicit = on_date, True
        elif ctx.note_type == "discharge_summary":
            d = rng.choice(sorted({o.time.date() for o in rows_all}))
            explicit = True
        else:
            d, explicit = ctx.note_date, rng.random() < 0.5
        window = day_window(d) if explicit else ctx.default_window
        rows = [o for o in rows_all if in_span(o.time, window)]
        truth, support = _judge(crit, rows, f.gender)
        if truth is None:
            continue
        said = truth if mode == "ok" else not truth
        word = rng.choice(crit.names if said else (crit.negations or ("no " + crit.names[0],)))
        when = anchor_phrase(ctx, d) if explicit else ""
        adjective = " " not in word and word.lower().endswith(("ic", "ive", "ile", "ed", "ent"))
        tmpl = rng.choice([t for t in _INTERP_TEXT[said] if ("{when}" in t) == bool(when)
                           and (adjective or not re.search(r"remained|noted to be|^Pt ", t))] or ["{w}"])
        text = tmpl.format(w=word, W=word[:1].upper() + word[1:], when=when).strip()
        if "{W}" in tmpl:
            word = word[:1].upper() + word[1:]
        items = tuple(dict.fromkeys(iref(o) for o in rows))
        return Stmt("interpretation", text, word, label_for(mode), items, ("valuenum", "charttime"),
                    {"criterion": cid, "holds": said}, word, window,
                    incon(mode, ["valuenum"]), row_refs(support[:5]), "medical", crit.source,
                    P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History"))
    return None


def _aki(ctx: Ctx, crit: Criterion, mode: str) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    rows = [o for o in main_item(f.series.get("cr", ())) if o.valuenum is not None]
    if len(rows) < 3:
        return None
    window = ctx.default_window if ctx.note_type == "discharge_summary" else TimeSpan(
        iso(dt.datetime.combine(ctx.note_date - 2 * DAY, dt.time())), ctx.default_window.end)
    rows = [o for o in rows if in_span(o.time, window)]
    best_rise, best_ratio, support = 0.0, 1.0, None
    for i, b in enumerate(rows):
        earlier = rows[:i]
        if not earlier:
            continue
        base = min(o.num for o in earlier)
        ratio = b.num / base if base > 0 else 1.0
        rise = max((b.num - a.num for a in earlier if (b.time - a.time).total_seconds() <= 48 * 3600),
                   default=0.0)
        if rise > best_rise or ratio > best_ratio:
            support = b
        best_rise, best_ratio = max(best_rise, rise), max(best_ratio, ratio)
    if best_rise >= 0.5 or best_ratio >= 1.8:
        truth = True
    elif best_rise <= 0.1 and best_ratio <= 1.2:
        truth = False
    else:
        return None
    said = truth if mode == "ok" else not truth
    word = rng.choice(crit.names if said else crit.negations)
    text = rng.choice((f"course c/b {word}", f"{word}", f"pt developed {word}" if said else f"{word}"))
    return Stmt("interpretation", text, word, label_for(mode), (iref(rows[0]),), ("valuenum", "charttime"),
                {"criterion": "aki", "holds": said}, word, window, incon(mode, ["valuenum"]),
                row_refs([support] if support else rows[:1]), "medical", crit.source,
                P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History", "Analyze_Value_Trend"))


def _oliguria(ctx: Ctx, crit: Criterion, mode: str) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    got = urine_day(ctx, "crit:" + crit.id)
    if got is None:
        return None
    span, rows = got
    weights = [o for o in f.series.get(f"crit:{crit.id}:weight", ()) if o.valuenum and o.valuenum > 0]
    weight = weights[0].num if weights else float(crit.default_weight_kg or 70)
    rate = sum(o.num for o in rows) / (weight * 24.0)
    thr = crit.tests[0].threshold
    if thr is None:
        return None
    if rate < 0.7 * thr:
        truth = True
    elif rate > 1.4 * thr:
        truth = False
    else:
        return None
    said = truth if mode == "ok" else not truth
    word = rng.choice(crit.names if said else crit.negations)
    when = "" if ctx.note_type != "discharge_summary" else " " + anchor_phrase(ctx, start_day(span))
    items = tuple(dict.fromkeys(iref(o) for o in rows + weights[:1]))
    return Stmt("interpretation", f"{word}{when}", word, label_for(mode), items, ("value", "charttime"),
                {"criterion": crit.id, "holds": said}, word, span, incon(mode, ["value"]),
                row_refs(rows[:5] + weights[:1]), "medical", crit.source,
                P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History", "Analyze_Value_Trend"))
