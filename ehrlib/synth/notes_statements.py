"""Statements derived from table rows, each with its gold label decided *before* writing.

A builder receives the admission's facts and a requested mode:

- ``ok``: state what the rows say (surface form chosen by the seed);
- ``time``: the event exists but at a time clearly outside the stated window (the true
  date is at least two days beyond the protocol window of +-1 day);
- ``value`` / ``other``: a value / route / side / susceptibility that no row of the item in
  the window has (numbers at least 40 % off every row, far outside any rounding);
- ``interpretation`` / ``trend``: the opposite of what the criterion / the series says,
  only where the data are clearly on one side (margins beyond the cited threshold);
- ``missing``: a statement about an item with no row in the admission.

It returns ``None`` when the mode is not feasible for this admission, and the caller
falls back. Every statement carries a ``claim`` (the machine-checkable assertion) so an
independent checker can re-derive the label from the tables.

Size: one builder per statement kind (44 small functions over the same facts record);
a candidate for a split by kind, kept together for now so the seeded order of builders
stays the same (the corpus is byte-identical across versions of the generator).
"""
from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ehrlib.corpus.records import Inconsistency, ItemRef, RowRef, TimeSpan
from ehrlib.schema import SchemaMap
from ehrlib.criteria import Criterion, load_criteria
from ehrlib.synth.notes_facts import (
    CATEGORICAL_CONCEPTS,
    LAB_CONCEPTS,
    MISSING_LAB_CONCEPTS,
    VITAL_CONCEPTS,
    AdmissionFacts,
    Concept,
    ItemIndex,
    Obs,
    rows_exist,
)
from ehrlib.synth.notes_templates import (
    category_surface,
    deid_date,
    drug_surface,
    dx_surface,
    input_surface,
    location_surface,
    organism_surface,
    specimen_surface,
)

__all__ = ["Ctx", "Stmt", "BUILDERS", "iso", "day_window", "VALUE_TOLERANCE"]

DAY = dt.timedelta(days=1)
#: relative tolerance a copied number must meet (the checker uses the same contract);
#: generated wrong values are at least WRONG_MIN_REL away from every row in the window.
VALUE_TOLERANCE = 0.02
WRONG_MIN_REL = 0.4
CONCEPTS = {c.key: c for c in (*LAB_CONCEPTS, *MISSING_LAB_CONCEPTS, *VITAL_CONCEPTS, *CATEGORICAL_CONCEPTS)}

P_LEX = ("Lexical_Search",)
P_SEM = ("Semantic_Search",)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def day_window(d: dt.date) -> TimeSpan:
    """The protocol window for a narrative date: the day before to the day after."""
    start = dt.datetime.combine(d - DAY, dt.time())
    end = dt.datetime.combine(d + DAY, dt.time(23, 59, 59))
    return TimeSpan(iso(start), iso(end))


def _in(t: dt.datetime | None, span: TimeSpan) -> bool:
    return t is not None and iso(t) >= span.start and iso(t) <= span.end


@dataclass(slots=True)
class Ctx:
    con: Any
    smap: SchemaMap
    index: ItemIndex
    facts: AdmissionFacts
    rng: random.Random
    note_type: str
    note_date: dt.date
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def default_window(self) -> TimeSpan:
        if self.note_type == "discharge_summary":
            f = self.facts
            return TimeSpan(iso(dt.datetime.combine(f.admittime.date() - DAY, dt.time())),
                            iso(dt.datetime.combine(f.dischtime.date() + DAY, dt.time(23, 59, 59))))
        return day_window(self.note_date)

    def admission_window(self) -> tuple[dt.datetime, dt.datetime]:
        f = self.facts
        return (dt.datetime.combine(f.admittime.date() - DAY, dt.time()),
                dt.datetime.combine(f.dischtime.date() + DAY, dt.time(23, 59, 59)))


@dataclass(slots=True)
class Stmt:
    """One labeled statement; ``text`` is a line fragment containing ``entity``."""

    kind: str
    text: str
    entity: str
    label: str
    items: tuple[ItemRef, ...]
    columns: tuple[str, ...]
    claim: dict[str, Any]
    value: str | None = None
    time: TimeSpan | None = None
    inconsistency: Inconsistency | None = None
    evidence: tuple[RowRef, ...] = ()
    reasoning: str = "none"
    source: str | None = None
    check_path: tuple[str, ...] = ()


def _fmt(v: float, decimals: int) -> str:
    s = f"{v:.{decimals}f}"
    if abs(float(s) - v) > VALUE_TOLERANCE * abs(v) / 2 + 1e-9:
        s = f"{v:.4g}"
    return s


def _wrong_number(v: float, others: Sequence[float], rng: random.Random, decimals: int) -> float | None:
    """A number clearly different from every value in ``others``."""
    factors = [0.3, 0.45, 1.8, 2.2, 2.6]
    rng.shuffle(factors)
    for f in factors:
        w = float(_fmt(v * f if v else f * 10, decimals))
        if w <= 0:
            continue
        if all(abs(w - o) > WRONG_MIN_REL * max(abs(o), 1e-6) for o in others):
            return w
    return None


def _anchor(ctx: Ctx, d: dt.date) -> str:
    f, rng = ctx.facts, ctx.rng
    hd = f.hd(d)
    opts = [f"on HD {hd}", f"on hospital day {hd}", f"on {deid_date(d, rng)}", f"HD{hd}"]
    if hd == 1:
        opts += ["on admission", "on presentation", "at admission"]
    if d == f.dischtime.date():
        opts += ["at discharge", "on day of discharge"]
    surgery = [p.start.date() for p in f.procedures if re.match(r"(?i)^or (received|sent)$", p.item.label.strip())]
    if surgery and 1 <= (d - min(surgery)).days <= 14:
        pod = (d - min(surgery)).days
        opts += [f"on POD {pod}", f"POD#{pod}", f"POD {pod}"]
    if ctx.note_type != "discharge_summary":
        if d == ctx.note_date:
            opts += ["today", "this AM", "overnight"]
        elif d == ctx.note_date - DAY:
            opts += ["yesterday"]
    return rng.choice(opts)


def _far_dates(ctx: Ctx, true_dates: Sequence[dt.date], min_gap: int = 3) -> list[dt.date]:
    """Dates inside the stay at least ``min_gap`` days from every true date."""
    f = ctx.facts
    out = []
    for hd in range(1, f.n_days + 1):
        d = f.admittime.date() + dt.timedelta(days=hd - 1)
        if ctx.note_type != "discharge_summary" and d > ctx.note_date:
            break  # a progress note cannot report what has not happened yet
        if all(abs((d - t).days) >= min_gap for t in true_dates):
            out.append(d)
    return out


def _claimed_date(ctx: Ctx, mode: str, true_date: dt.date, event_dates: Sequence[dt.date]) -> dt.date | None:
    """The date a statement gives: the true one, or for a time error one far from every event."""
    if mode != "time":
        return true_date
    cands = _far_dates(ctx, event_dates)
    return ctx.rng.choice(cands) if cands else None


def _missing_path(ctx: Ctx) -> tuple[str, ...]:
    """An annotator who finds nothing widens the search: synonyms, then the item's category."""
    extra = ("Analyze_Category_Trend",) if ctx.rng.random() < 0.5 else ()
    return P_LEX + P_SEM + extra + ("Get_Item_Status_History",)


def _iref(o: Obs) -> ItemRef:
    return ItemRef(o.table, o.item.label, o.item.itemid)


def _rows(obs: Sequence[Obs]) -> tuple[RowRef, ...]:
    return tuple(RowRef(o.table, o.row_id) for o in obs)


def _incon(mode: str, columns: Sequence[str]) -> Inconsistency | None:
    if mode == "ok":
        return None
    if mode == "missing":
        return Inconsistency("missing", (), None)
    return Inconsistency("column", tuple(columns), mode)  # type: ignore[arg-type]


def _label(mode: str) -> str:
    return "consistent" if mode == "ok" else "inconsistent"


def _main_item(rows: Sequence[Obs]) -> list[Obs]:
    """Rows of the item with most rows (a concept may span several items)."""
    if not rows:
        return []
    counts: dict[Any, int] = {}
    for o in rows:
        counts[o.item.itemid] = counts.get(o.item.itemid, 0) + 1
    best = sorted(counts, key=lambda k: (-counts[k], str(k)))[0]
    return [o for o in rows if o.item.itemid == best]


# --- numeric point values (labs) -----------------------------------------------------------

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
        rows = [o for o in _main_item(f.series.get(key, ())) if o.valuenum is not None]
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
        value = r.valuenum
        columns = ["valuenum"]
        if mode == "time":
            cands = [d for d in _far_dates(ctx, [o.time.date() for o in same_item if o.valuenum is not None
                                                 and abs(o.valuenum - value) <= VALUE_TOLERANCE * abs(o.valuenum)])
                     if not any(_in(o.time, day_window(d)) for o in same_item)]
            if not cands:
                continue
            claim_date = rng.choice(cands)
            columns = ["charttime"]
        window = day_window(claim_date) if explicit else ctx.default_window
        in_win = [o.valuenum for o in same_item if _in(o.time, window)]
        if mode == "value":
            w = _wrong_number(value, in_win, rng, concept.decimals)
            if w is None:
                continue
            value = w
        elif mode not in ("ok", "time"):
            return None
        surf = rng.choice(concept.surfaces)
        val = _fmt(value, concept.decimals)
        unit = concept.unit if rng.random() < 0.4 else ""
        flag = "*" if (r.flag or "").lower().startswith("abn") and mode == "ok" and rng.random() < 0.5 else ""
        entity = rng.choice((f"{surf} {val}{flag}", f"{surf} {val} {unit}".strip(), f"{surf} of {val}",
                             f"{surf}-{val}{flag}"))
        if panel:
            entity = f"{concept.surfaces[0]}-{val}{flag}"
        when = _anchor(ctx, claim_date) if explicit and not panel else ""
        text = rng.choice((f"{entity} {when}", f"{when} {entity}" if when else entity,
                           f"{entity} ({when})" if when else entity)).strip()
        if when.startswith("on ") and text.startswith(when):
            text = text[0].upper() + text[1:]
        evidence = _rows([r]) if mode in ("ok", "time") else _rows([o for o in same_item if _in(o.time, window)][:5])
        return Stmt("lab_value", text, entity, _label(mode), (_iref(r),), ("valuenum", "charttime"),
                    {"valuenum": float(val)}, val, window, _incon(mode, columns), evidence, "none", None,
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
        val = _fmt(_TYPICAL[concept.key] * rng.choice((0.8, 1.0, 1.3, 2.0)), concept.decimals)
        surf = rng.choice(concept.surfaces)
        d = panel_date or (f.admittime.date() if ctx.note_type == "discharge_summary" else ctx.note_date)
        explicit = ctx.note_type == "discharge_summary" or panel_date is not None
        entity = rng.choice((f"{surf} {val}", f"{surf} of {val}", f"{surf} {val} {concept.unit}".strip()))
        if panel_date is not None:
            entity = f"{concept.surfaces[0]}-{val}"
        text = f"{entity} {_anchor(ctx, d)}" if explicit and panel_date is None else entity
        window = day_window(d) if explicit else ctx.default_window
        return Stmt("lab_value", text, entity, "inconsistent", (ItemRef("labevents", it.label, it.itemid),),
                    ("valuenum", "charttime"), {"valuenum": float(val)}, val, window,
                    _incon("missing", ()), (), "none", None,
                    _missing_path(ctx))
    return None


# --- 24 h ranges (physician vitals) ---------------------------------------------------------

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
            rows = [o for o in f.series.get(c, ()) if _in(o.time, window) and o.valuenum is not None]
            rows = _main_item(rows)
            st = _stats(rows)
            if st is None:
                break
            picked.append((c, rows, st))
        if len(picked) != len(comps):
            continue
        if key == "temp":
            c, rows, st = picked[0]
            claims = [{"itemid": rows[0].item.itemid, "max": float(_fmt(st["max"], 1))}]
            if mode == "value":
                w = _wrong_number(st["max"], [o.valuenum for o in rows], rng, 1)
                if w is None or w > 110 or w < 90:
                    w = st["max"] + 4.5 if st["max"] < 104 else None
                if w is None:
                    continue
                claims[0]["max"] = w
            entity = f"Tmax: {_fmt(claims[0]['max'], 1)} F"
            text = entity + rng.choice(("", f"  Tcurrent: {_fmt(st['last'], 1)} F"))
        else:
            claims = [{"itemid": rows[0].item.itemid, **{k: float(round(v)) for k, v in st.items()}}
                      for c, rows, st in picked]
            if mode == "value":
                tgt = rng.choice(range(len(claims)))
                c, rows, st = picked[tgt]
                w = _wrong_number(st["max"], [o.valuenum for o in rows], rng, 0)
                if w is None or w < st["max"]:
                    w = round(st["max"] * 1.6 + 10)
                claims[tgt]["max"] = float(w)
            if key == "bp":
                s, d_, m = claims

                def trip(k: str) -> str:
                    return f"{s[k]:.0f}/{d_[k]:.0f}({m[k]:.0f})"
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
        items = tuple(_iref(rows[0]) for _, rows, _ in picked)
        evidence = tuple(r for _, rows, _ in picked for r in _rows(rows[:3] + rows[-2:]))
        return Stmt("vital_range", text, entity if key != "temp" else entity, _label(mode), items,
                    ("valuenum", "charttime"), {"stats": claims}, text.split(": ", 1)[1], window,
                    _incon(mode, ["valuenum"]), evidence, "none", None,
                    P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
    return None


# --- interpretations -----------------------------------------------------------------------

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
            v, thr = o.valuenum, t.threshold
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
        extreme = max(tested, key=lambda o: o.valuenum if upward else -o.valuenum)
        return False, [extreme]
    return None, []


_INTERP_TEXT = {
    True: ("{w}", "Pt {w}", "noted to be {w}", "{w} {when}", "{W} {when}"),
    False: ("{w}", "Pt remained {w}", "{W} {when}", "{w} {when}", "{W}"),
}


def interpretation(ctx: Ctx, mode: str, crit_id: str | None = None, keys: Sequence[str] | None = None,
                   on_date: dt.date | None = None) -> Stmt | None:
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
        rows = [o for o in rows_all if _in(o.time, window)]
        truth, support = _judge(crit, rows, f.gender)
        if truth is None:
            continue
        said = truth if mode == "ok" else not truth
        word = rng.choice(crit.names if said else (crit.negations or ("no " + crit.names[0],)))
        when = _anchor(ctx, d) if explicit else ""
        adjective = " " not in word and word.lower().endswith(("ic", "ive", "ile", "ed", "ent"))
        tmpl = rng.choice([t for t in _INTERP_TEXT[said] if ("{when}" in t) == bool(when)
                           and (adjective or not re.search(r"remained|noted to be|^Pt ", t))] or ["{w}"])
        text = tmpl.format(w=word, W=word[:1].upper() + word[1:], when=when).strip()
        if "{W}" in tmpl:
            word = word[:1].upper() + word[1:]
        items = tuple(dict.fromkeys(_iref(o) for o in rows))
        return Stmt("interpretation", text, word, _label(mode), items, ("valuenum", "charttime"),
                    {"criterion": cid, "holds": said}, word, window,
                    _incon(mode, ["valuenum"]), _rows(support[:5]), "medical", crit.source,
                    P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History"))
    return None


def _aki(ctx: Ctx, crit: Criterion, mode: str) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    rows = [o for o in _main_item(f.series.get("cr", ())) if o.valuenum is not None]
    if len(rows) < 3:
        return None
    window = ctx.default_window if ctx.note_type == "discharge_summary" else TimeSpan(
        iso(dt.datetime.combine(ctx.note_date - 2 * DAY, dt.time())), ctx.default_window.end)
    rows = [o for o in rows if _in(o.time, window)]
    best_rise, best_ratio, support = 0.0, 1.0, None
    for i, b in enumerate(rows):
        earlier = rows[:i]
        if not earlier:
            continue
        base = min(o.valuenum for o in earlier)
        ratio = b.valuenum / base if base > 0 else 1.0
        rise = max((b.valuenum - a.valuenum for a in earlier if (b.time - a.time).total_seconds() <= 48 * 3600),
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
    return Stmt("interpretation", text, word, _label(mode), (_iref(rows[0]),), ("valuenum", "charttime"),
                {"criterion": "aki", "holds": said}, word, window, _incon(mode, ["valuenum"]),
                _rows([support] if support else rows[:1]), "medical", crit.source,
                P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History", "Analyze_Value_Trend"))


def _day_span(d: dt.date) -> TimeSpan:
    """The exact calendar day (24 h totals and ranges are not widened)."""
    start = dt.datetime.combine(d, dt.time())
    return TimeSpan(iso(start), iso(start + DAY - dt.timedelta(seconds=1)))


def _urine_day(ctx: Ctx, key: str) -> tuple[TimeSpan, list[Obs]] | None:
    """Urine rows of the note day (progress notes) or of a busy day (discharge summaries)."""
    source = ctx.facts.outputs if key == "urine" else ctx.facts.series.get(key, ())
    rows = [o for o in source if o.valuenum is not None]
    if ctx.note_type == "discharge_summary":
        days = sorted({o.time.date() for o in rows})
        if not days:
            return None
        d = ctx.rng.choice(days)
    else:
        d = ctx.note_date
    span = _day_span(d)
    rows = [o for o in rows if _in(o.time, span)]
    return (span, rows) if len(rows) >= 3 else None


def _oliguria(ctx: Ctx, crit: Criterion, mode: str) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    got = _urine_day(ctx, "crit:" + crit.id)
    if got is None:
        return None
    span, rows = got
    weights = [o for o in f.series.get(f"crit:{crit.id}:weight", ()) if o.valuenum and o.valuenum > 0]
    weight = weights[0].valuenum if weights else float(crit.default_weight_kg or 70)
    rate = sum(o.valuenum for o in rows) / (weight * 24.0)
    thr = crit.tests[0].threshold
    if rate < 0.7 * thr:
        truth = True
    elif rate > 1.4 * thr:
        truth = False
    else:
        return None
    said = truth if mode == "ok" else not truth
    word = rng.choice(crit.names if said else crit.negations)
    when = "" if ctx.note_type != "discharge_summary" else " " + _anchor(ctx, dt.date.fromisoformat(span.start[:10]))
    items = tuple(dict.fromkeys(_iref(o) for o in rows + weights[:1]))
    return Stmt("interpretation", f"{word}{when}", word, _label(mode), items, ("value", "charttime"),
                {"criterion": crit.id, "holds": said}, word, span, _incon(mode, ["value"]),
                _rows(rows[:5] + weights[:1]), "medical", crit.source,
                P_SEM + ("Get_Clinical_Criterion", "Get_Item_Value_History", "Analyze_Value_Trend"))


def urine_output(ctx: Ctx, mode: str) -> Stmt | None:
    """'UOP 1,240 mL' over the note day: the sum of the urine rows of that day."""
    rng = ctx.rng
    if mode not in ("ok", "value"):
        return None
    got = _urine_day(ctx, "urine")
    if got is None:
        return None
    span, rows = got
    total = round(sum(o.valuenum for o in rows))
    if mode == "value":
        total = round(total * rng.choice((0.3, 2.2, 2.6))) + 100
    forms = [f"{total:,} mL", f"{total} cc"] + ([f"{total / 1000:.2f} L"] if total >= 1000 else [])
    shown = rng.choice(forms)  # litres only where 10 mL of rounding stays within the 2 % tolerance
    claimed = float(shown.split()[0].replace(",", "")) * (1000 if shown.endswith(" L") else 1)
    name = rng.choice(("UOP", "urine output", "U/O", "foley output"))
    entity = f"{name} {shown}"
    when = "" if ctx.note_type != "discharge_summary" else " " + _anchor(ctx, dt.date.fromisoformat(span.start[:10]))
    text = rng.choice((f"{entity} over 24h{when}", f"{entity}{when}"))
    return Stmt("output", text, entity, _label(mode), tuple(dict.fromkeys(_iref(o) for o in rows)),
                ("value", "charttime"), {"sum": claimed}, shown, span, _incon(mode, ["value"]), _rows(rows[:5]),
                "commonsense", None, P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))


# --- trends --------------------------------------------------------------------------------

def trend(ctx: Ctx, mode: str, concept_key: str | None = None, keys: Sequence[str] | None = None) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "trend"):
        return None
    keys = [concept_key] if concept_key else list(keys or ("cr", "wbc", "lactate", "hgb", "plt", "bun", "tbili"))
    rng.shuffle(keys)
    for key in keys:
        concept = CONCEPTS[key]
        rows = [o for o in _main_item(f.series.get(key, ())) if o.valuenum is not None]
        if ctx.note_type != "discharge_summary":
            lo = dt.datetime.combine(ctx.note_date - 2 * DAY, dt.time())
            window = TimeSpan(iso(lo), ctx.default_window.end)
        else:
            window = ctx.default_window
        rows = [o for o in rows if _in(o.time, window)]
        if len(rows) < 3 or rows[0].valuenum <= 0:
            continue
        first, last = rows[0].valuenum, rows[-1].valuenum
        change = (last - first) / abs(first)
        peak = max(rows, key=lambda o: o.valuenum)
        surf = rng.choice(concept.surfaces)
        if (mode == "ok" and peak is not rows[0] and peak is not rows[-1] and first <= 0.8 * peak.valuenum
                and last <= 0.8 * peak.valuenum and rng.random() < 0.5):
            val = _fmt(peak.valuenum, concept.decimals)
            entity = f"{surf} peaked at {val}"
            text = rng.choice((f"{entity} {_anchor(ctx, peak.time.date())} then improved",
                               f"{entity} {_anchor(ctx, peak.time.date())}, subsequently downtrended"))
            return Stmt("trend", text, entity, "consistent", (_iref(peak),), ("valuenum", "charttime"),
                        {"trend": "peak", "peak": float(val)}, val, window, None,
                        _rows([rows[0], peak, rows[-1]]), "commonsense", None,
                        P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
        if abs(change) < 0.25:
            continue
        truth = "up" if change > 0 else "down"
        said = truth if mode == "ok" else ("down" if truth == "up" else "up")
        word = rng.choice(("uptrending", "rising", "trending up", "increased") if said == "up"
                          else ("downtrending", "improving", "trending down", "decreased"))
        if rng.random() < 0.4 and mode == "ok":
            entity = f"{surf} {word} ({_fmt(first, concept.decimals)} -> {_fmt(last, concept.decimals)})"
        else:
            entity = f"{surf} {word}"
        return Stmt("trend", entity, entity, _label(mode), (_iref(rows[0]),), ("valuenum", "charttime"),
                    {"trend": said}, word, window, _incon(mode, ["valuenum"]), _rows([rows[0], rows[-1]]),
                    "commonsense", None, P_LEX + ("Get_Item_Status_History", "Analyze_Value_Trend"))
    return None


# --- categorical findings (nursing) --------------------------------------------------------

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
    f, rng = ctx.facts, ctx.rng
    if mode not in ("ok", "value", "missing"):
        return None
    concept = CONCEPTS[concept_key]
    window = ctx.default_window
    rows = [o for o in f.categorical.get(concept_key, ()) if o.value and _in(o.time, window)
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
        item_ref, evidence = ItemRef("chartevents", it.label, it.itemid), ()
    else:
        if not rows:
            return None
        r = rng.choice(rows)
        item_rows = [o for o in f.categorical[concept_key] if o.item.itemid == r.item.itemid and _in(o.time, window)]
        claimed = r.value
        if mode == "value":
            seen = {(o.value or "").strip().lower() for o in item_rows}
            alts = [v for v in _distribution(ctx, r.item.itemid) if v.strip().lower() not in seen]
            if not alts:
                return None
            claimed = rng.choice(alts)
            evidence = _rows(item_rows[:5])
        else:
            evidence = _rows([r])
        item_ref = _iref(r)
    surf = category_surface(claimed, rng)
    name = rng.choice(concept.surfaces)
    bare_ok = concept_key in ("loc", "abd", "skin", "rhythm")  # values that name their system
    entity = rng.choice((f"{name} {surf}", f"{surf}" if bare_ok else f"{name} {surf}", f"{name}: {surf}"))
    reasoning = "none" if surf.lower() == claimed.lower() else "commonsense"
    path = P_SEM + ("Get_Item_Value_Distribution", "Get_Item_Status_History")
    return Stmt("finding", entity, entity, _label(mode), (item_ref,), ("value", "charttime"),
                {"value": claimed}, claimed, window, _incon(mode, ["value"]), evidence, reasoning, None, path)


_ABX = re.compile(r"(?i)cillin|^cef|vanc|mycin|floxacin|penem|tazo|metronidazole|sulfameth|bactrim|linezolid|"
                  r"daptomycin|fluconazole|clindamycin|doxycycline|aztreonam|micafungin|acyclovir")


# --- medications -----------------------------------------------------------------------------

#: drugs a note may claim although never ordered, with a usual adult dose, unit and route
_MISSING_DRUGS = {
    "Linezolid": (600, "mg", "IV"), "Meropenem": (1, "g", "IV"), "Fluconazole": (400, "mg", "PO"),
    "Acyclovir": (700, "mg", "IV"), "Haloperidol": (2, "mg", "IV"), "Digoxin": (0.125, "mg", "PO"),
    "Diltiazem": (30, "mg", "PO"), "Amiodarone": (200, "mg", "PO"), "Warfarin": (5, "mg", "PO"),
    "Azithromycin": (500, "mg", "IV"), "Cefepime": (2, "g", "IV"), "Levofloxacin": (750, "mg", "PO"),
    "Clopidogrel": (75, "mg", "PO"), "Allopurinol": (100, "mg", "PO"), "Prednisone": (40, "mg", "PO"),
    "Lorazepam": (1, "mg", "IV"), "Daptomycin": (500, "mg", "IV"), "Micafungin": (100, "mg", "IV"),
    "Rifaximin": (550, "mg", "PO"), "Octreotide": (100, "mcg", "SC"),
}
_ROUTES = ("IV", "PO", "SC", "IM", "PR", "NG")
_FREQ = ("", " daily", " q12h", " q8h", " BID", " TID", " q6h", " qHS")


def _dose_num(s: str | None) -> float | None:
    try:
        return float(str(s).replace(",", ""))
    except (TypeError, ValueError):
        return None


def medication(ctx: Ctx, mode: str, antibiotics: bool = False, on_date: dt.date | None = None) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    if mode == "missing":
        return _missing_drug(ctx, antibiotics)
    orders = [m for m in f.meds if m.start is not None and _dose_num(m.dose) is not None and m.route
              and m.dose_unit and len(m.drug) < 40 and not re.search(r"(?i)syringe|bag|sodium chloride|d5w|"
                                                                         r"flush|neb|\bsw\b|dextrose", m.drug)]
    if antibiotics:
        orders = [m for m in orders if _ABX.search(m.drug)]
    if on_date is not None:
        orders = [m for m in orders if m.start.date() == on_date]
    elif ctx.note_type != "discharge_summary":
        orders = [m for m in orders if _in(m.start, day_window(ctx.note_date))]
    rng.shuffle(orders)
    for m in orders:
        same = [o for o in f.meds if o.drug.lower() == m.drug.lower() and o.start is not None]
        dose, route, columns = _dose_num(m.dose), m.route, ["startdate"]
        claim_date = _claimed_date(ctx, mode, m.start.date(), [o.start.date() for o in same])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        in_win = [o for o in same if _in(o.start, window)]
        if mode == "value":
            others = [d for d in (_dose_num(o.dose) for o in in_win) if d is not None]
            w = _wrong_number(dose, others, rng, 0 if dose >= 10 else 1)
            if w is None:
                continue
            dose, columns = w, ["dose_val_rx"]
        elif mode == "other":
            used = {(o.route or "").upper() for o in in_win}
            alts = [r for r in _ROUTES if r not in used and not any(r in u for u in used)]
            if not alts:
                continue
            route, columns = rng.choice(alts), ["route"]
        elif mode not in ("ok", "time"):
            return None
        name = drug_surface(m.drug, rng)
        dose_s = f"{dose:g}"
        unit = m.dose_unit
        when = _anchor(ctx, claim_date)
        duration = ""
        claim: dict[str, Any] = {"drug": m.drug, "dose_val_rx": float(dose_s), "dose_unit_rx": unit, "route": route}
        cols = ["drug", "dose_val_rx", "dose_unit_rx", "route", "startdate"]
        if mode == "ok" and m.end is not None and (m.end - m.start).days >= 2 and rng.random() < 0.35:
            n = (m.end - m.start).days
            duration = rng.choice((f" x{n} days", f" x {n}d", f" for {n} days"))
            claim["duration_days"] = n
            cols.append("enddate")
        entity = f"{name} {dose_s} {unit} {route}"
        freq = "" if "DRIP" in (route or "").upper() else rng.choice(_FREQ)
        text = rng.choice((f"started on {entity}{freq} {when}{duration}",
                           f"{when[:1].upper() + when[1:]} started {entity}{freq}{duration}",
                           f"received {entity}{duration} ({when})",
                           f"{entity}{freq} was started {when}{duration}"))
        reasoning = "none" if name.lower() == m.drug.lower() else "commonsense"
        evidence = tuple(RowRef("prescriptions", o.row_id) for o in (in_win or [m])[:5])
        return Stmt("medication", text, entity, _label(mode),
                    (ItemRef("prescriptions", m.drug, None),), tuple(cols), claim, f"{dose_s} {unit} {route}",
                    window, _incon(mode, columns), evidence, reasoning, None,
                    P_LEX + ("Get_Item_Status_History",) + (("View_General_Timeline",) if mode == "time" else ()))
    return None


def _drug_present(ctx: Ctx, name: str) -> bool:
    token = name.split()[0].lower()
    if any(token in m.drug.lower() for m in ctx.facts.meds):
        return True
    return any(token in i.item.label.lower() for i in ctx.facts.inputs)


def _missing_drug(ctx: Ctx, antibiotics: bool = False) -> Stmt | None:
    f, rng = ctx.facts, ctx.rng
    names = [n for n in _MISSING_DRUGS if not _drug_present(ctx, n) and (not antibiotics or _ABX.search(n))]
    if not names:
        return None
    drug = rng.choice(names)
    d = rng.choice([f.admittime.date() + dt.timedelta(days=i) for i in range(f.n_days)]) \
        if ctx.note_type == "discharge_summary" else ctx.note_date
    dose, unit, route = _MISSING_DRUGS[drug]
    dose = float(dose)
    entity = f"{drug.lower() if rng.random() < 0.5 else drug} {dose:g} {unit} {route}"
    when = _anchor(ctx, d)
    text = rng.choice((f"started on {entity} {when}", f"{entity} was started {when}", f"received {entity} ({when})"))
    return Stmt("medication", text, entity, "inconsistent", (ItemRef("prescriptions", drug, None),),
                ("drug", "dose_val_rx", "dose_unit_rx", "route", "startdate"),
                {"drug": drug, "dose_val_rx": dose, "dose_unit_rx": unit, "route": route}, f"{dose:g} {unit} {route}",
                day_window(d), _incon("missing", ()), (), "none", None,
                _missing_path(ctx))


# --- infusions -------------------------------------------------------------------------------

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
        when = _anchor(ctx, d)
        text = rng.choice((f"started on {name} {when}", f"{name} started {when}", f"{name} initiated {when}"))
        return Stmt("infusion", text, name, "inconsistent", (ItemRef(tables[0], label, itemid),),
                    ("itemid", "starttime" if tables[0] == "inputevents_mv" else "charttime"), {"started": True},
                    None, day_window(d), _incon("missing", ()), (), "commonsense", None,
                    _missing_path(ctx))
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
                w = _wrong_number(rate, [x.rate for x in events if x.rate is not None and _in(x.start, window)],
                                  rng, 2)
                if w is None:
                    continue
                rate = w
            shown = f"{rate:.3g}"
            entity = f"{name} - {shown} {e.rate_unit}"
            return Stmt("infusion", entity, entity, _label(mode), (item_ref,), ("itemid", "rate", start_col),
                        {"rate": float(shown)}, shown, window, _incon(mode, ["rate"]), (RowRef(table, e.row_id),),
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
            claim_date = _claimed_date(ctx, mode, last.date(), [last.date()])
            if claim_date is None:
                continue
            when = _anchor(ctx, claim_date)
            text = rng.choice((f"{name} weaned off {when}", f"weaned off {name} {when}",
                               f"{name} off {when}", f"pressors ({name}) weaned off {when}"))
            last_row = max((e for e in events if e.end is not None), key=lambda e: (e.end, e.row_id))
            return Stmt("infusion", text, name, _label(mode), (item_ref,), ("itemid", "endtime"), {"stopped": True},
                        None, day_window(claim_date), _incon(mode, ["endtime"]), (RowRef(table, last_row.row_id),),
                        reasoning, None, path)
        first = events[0]
        if ctx.note_type != "discharge_summary":
            todays = [e for e in events if e.start.date() == ctx.note_date]
            if not todays:
                continue
            first = todays[0]
        claim_date = _claimed_date(ctx, mode, first.start.date(), [e.start.date() for e in events])
        if claim_date is None:
            continue
        when = _anchor(ctx, claim_date)
        text = rng.choice((f"started on {name} {when}", f"{name} started {when}",
                           f"{when[:1].upper() + when[1:]} required {name}", f"{name} initiated {when}"))
        return Stmt("infusion", text, name, _label(mode), (item_ref,), ("itemid", start_col), {"started": True}, None,
                    day_window(claim_date), _incon(mode, [start_col]), (RowRef(first.table, first.row_id),),
                    reasoning, None, path)
    return None


# --- procedures ------------------------------------------------------------------------------

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
        claim_date = _claimed_date(ctx, mode, p.start.date(), [q.start.date() for q in same])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        if mode == "other":
            if not loc:
                continue
            swapped = _swap_side(loc)
            used = {_norm_loc(q.location) for q in same if _in(q.start, window)}
            if not swapped or _norm_loc(swapped) in used:
                continue
            loc, columns = swapped, ["location"]
        when = _anchor(ctx, claim_date)
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
        return Stmt("procedure", text, entity, _label(mode),
                    (ItemRef("procedureevents_mv", label, p.item.itemid),), tuple(cols), claim, loc, window,
                    _incon(mode, columns), (RowRef("procedureevents_mv", p.row_id),),
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
        when = _anchor(ctx, d)
        entity = label.lower()
        return Stmt("procedure", f"s/p {entity} {when}", entity, "inconsistent",
                    (ItemRef("procedureevents_mv", label, itemid),), ("itemid", "starttime"), {"performed": True},
                    None, day_window(d), _incon("missing", ()), (), "none", None,
                    _missing_path(ctx))
    return None


# --- microbiology ------------------------------------------------------------------------------

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
        return Stmt("microbiology", f"{entity} {_anchor(ctx, d)}", entity, "inconsistent",
                    (ItemRef("microbiologyevents", spec, None),), ("spec_type_desc", "org_name", "charttime"),
                    {"spec_type_desc": spec, "org_name": org}, org, day_window(d), _incon("missing", ()), (), "none",
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
        same = [x for x in f.micro if x.specimen == m.specimen and x.organism == m.organism]
        interp, columns = m.interpretation, ["charttime"]
        claim_date = _claimed_date(ctx, mode, m.time.date(), [x.time.date() for x in same])
        if claim_date is None:
            continue
        window = day_window(claim_date)
        in_win = {x.interpretation for x in same if _in(x.time, window) and x.interpretation}
        has_ab = bool(m.antibiotic) and interp in ("S", "R", "I")
        pan = row_id is None and in_win and mode in ("ok", "value") and (
            (mode == "ok" and in_win == {"S"} and rng.random() < 0.35) or (mode == "value" and in_win != {"S"}))
        claim: dict[str, Any] = {"spec_type_desc": m.specimen, "org_name": m.organism}
        org = organism_surface(m.organism, rng).replace("pan-sensitive ", "")
        spec = specimen_surface(m.specimen, rng)
        if pan:
            entity = rng.choice((f"{spec} grew pan-sensitive {org}", f"pan-sensitive {org} in {spec.lower()}"))
            claim["all_sensitive"] = True
            cols, value, columns = ("spec_type_desc", "org_name", "interpretation", "charttime"), "S", \
                (["interpretation"] if mode == "value" else columns)
        elif has_ab and row_id is None:
            if mode == "value":
                flipped = "R" if interp == "S" else "S"
                if any(x.antibiotic == m.antibiotic and x.interpretation == flipped and _in(x.time, window)
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
        when = deid_date(claim_date, rng) if rng.random() < 0.6 else _anchor(ctx, claim_date)
        text = rng.choice((f"{entity} ({when})", f"{when} {entity}"))
        return Stmt("microbiology", text, entity, _label(mode), (ItemRef("microbiologyevents", m.specimen, None),),
                    cols, claim, value, window, _incon(mode, columns), (RowRef("microbiologyevents", m.row_id),),
                    "commonsense", None, P_LEX + ("Get_Item_Status_History", "View_General_Timeline"))
    return None


# --- event relations -------------------------------------------------------------------------



def relation_pair(ctx: Ctx) -> tuple[Any, Any, int] | None:
    """(culture row with an organism, first order of an antibiotic, days from culture to start),
    where the start is at least a day away from the culture so before/after is unambiguous."""
    f, rng = ctx.facts, ctx.rng
    firsts: dict[str, Any] = {}
    for m in f.meds:
        if m.start is not None and _ABX.search(m.drug) and _dose_num(m.dose) is not None:
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
    return Stmt("relation", text, name, _label(mode), (ItemRef("prescriptions", order.drug, None),),
                ("drug", "startdate"), claim, said, None, _incon(mode, ["startdate"]),
                (RowRef("microbiologyevents", anchor.row_id), RowRef("prescriptions", order.row_id)),
                "commonsense", None, P_LEX + ("Get_Item_Status_History", "View_General_Timeline"))


# --- diagnoses -----------------------------------------------------------------------------

_MISSING_DX = ("4280", "5849", "486", "0389", "5990", "42731", "2851", "25000", "4019", "5070", "2762", "78552")


def diagnosis(ctx: Ctx, mode: str, exclude: set | None = None) -> Stmt | None:
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
                        ("icd9_code",), {"icd9_code": code}, code, None, _incon("missing", ()), (),
                        "commonsense", None, _missing_path(ctx))
        return None
    if mode != "ok":
        return None
    dxs = [d for d in f.diagnoses if d.code not in exclude and (d.short_title or d.long_title)]
    if not dxs:
        return None
    d = rng.choice(dxs[:8])
    exclude.add(d.code)
    text = dx_surface(d.short_title, d.long_title, rng)
    return Stmt("diagnosis", text, text, "consistent", (ItemRef("diagnoses_icd", d.long_title or d.short_title, d.code),),
                ("icd9_code",), {"icd9_code": d.code}, d.code, None, None, (RowRef("diagnoses_icd", d.row_id),),
                "commonsense", None, P_LEX + P_SEM + ("Get_Item_Status_History",))


Builder = Callable[..., "Stmt | None"]
BUILDERS: dict[str, tuple[Builder, tuple[str, ...]]] = {
    # name: (builder, feasible column-inconsistency modes)
    "lab_value": (lab_value, ("time", "value")),
    "vital_range": (vital_range, ("value",)),
    "interpretation": (interpretation, ("interpretation",)),
    "trend": (trend, ("trend",)),
    "finding": (categorical, ("value",)),
    "medication": (medication, ("time", "value", "other")),
    "infusion": (infusion, ("time", "value")),
    "procedure": (procedure, ("time", "other")),
    "microbiology": (micro, ("time", "value")),
    "diagnosis": (diagnosis, ()),
    "relation": (relation, ("time",)),
    "output": (urine_output, ("value",)),
}
