"""What every statement builder shares: the context, the statement record and its helpers.

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
independent checker can re-derive the label from the tables. The helpers here (windows,
anchors such as "on POD 2", clearly wrong numbers, row references) are shared by every
kind, so all of them write dates and errors the same way.
"""
from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ehrlib.corpus.records import Inconsistency, ItemRef, RowRef, TimeSpan
from ehrlib.schema import SchemaMap
from ehrlib.synth.notes_facts import (
    CATEGORICAL_CONCEPTS,
    LAB_CONCEPTS,
    MISSING_LAB_CONCEPTS,
    VITAL_CONCEPTS,
    AdmissionFacts,
    ItemIndex,
    Obs,
)
from ehrlib.synth.notes_templates import deid_date

__all__ = [
    "CONCEPTS",
    "DAY",
    "P_LEX",
    "P_SEM",
    "VALUE_TOLERANCE",
    "WRONG_MIN_REL",
    "Ctx",
    "Stmt",
    "anchor_phrase",
    "claimed_date",
    "day_window",
    "far_dates",
    "fmt_value",
    "in_span",
    "incon",
    "iref",
    "iso",
    "label_for",
    "main_item",
    "missing_path",
    "row_refs",
    "wrong_number",
]


DAY = dt.timedelta(days=1)
#: relative tolerance a copied number must meet (the checker uses the same contract);
#: generated wrong values are at least WRONG_MIN_REL away from every row in the window.
VALUE_TOLERANCE = 0.02
WRONG_MIN_REL = 0.4
CONCEPTS = {c.key: c for c in (*LAB_CONCEPTS, *MISSING_LAB_CONCEPTS, *VITAL_CONCEPTS, *CATEGORICAL_CONCEPTS)}

P_LEX = ("Lexical_Search",)
P_SEM = ("Semantic_Search",)


def iso(t: dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS``."""
    return t.strftime("%Y-%m-%d %H:%M:%S")


def day_window(d: dt.date) -> TimeSpan:
    """The protocol window for a narrative date: the day before to the day after."""
    start = dt.datetime.combine(d - DAY, dt.time())
    end = dt.datetime.combine(d + DAY, dt.time(23, 59, 59))
    return TimeSpan(iso(start), iso(end))


def in_span(t: dt.datetime | None, span: TimeSpan) -> bool:
    """Whether ``t`` falls in ``span`` (an open end is unbounded)."""
    return t is not None and (span.start is None or iso(t) >= span.start) and (span.end is None or iso(t) <= span.end)


@dataclass(slots=True)
class Ctx:
    """What every statement builder reads: database, facts, randomness and the note."""
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
        """The window an undated statement refers to: the stay, or the note's day."""
        if self.note_type == "discharge_summary":
            f = self.facts
            return TimeSpan(iso(dt.datetime.combine(f.admittime.date() - DAY, dt.time())),
                            iso(dt.datetime.combine(f.dischtime.date() + DAY, dt.time(23, 59, 59))))
        return day_window(self.note_date)

    def admission_window(self) -> tuple[dt.datetime, dt.datetime]:
        """The stay widened by a day each way."""
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


def fmt_value(v: float, decimals: int) -> str:
    """``v`` at ``decimals``; 4 significant digits where that rounding would exceed the tolerance."""
    s = f"{v:.{decimals}f}"
    if abs(float(s) - v) > VALUE_TOLERANCE * abs(v) / 2 + 1e-9:
        s = f"{v:.4g}"
    return s


def wrong_number(v: float, others: Sequence[float], rng: random.Random, decimals: int) -> float | None:
    """A number clearly different from every value in ``others``."""
    factors = [0.3, 0.45, 1.8, 2.2, 2.6]
    rng.shuffle(factors)
    for f in factors:
        w = float(fmt_value(v * f if v else f * 10, decimals))
        if w <= 0:
            continue
        if all(abs(w - o) > WRONG_MIN_REL * max(abs(o), 1e-6) for o in others):
            return w
    return None


def anchor_phrase(ctx: Ctx, d: dt.date) -> str:
    """A seeded way to say when ``d`` was: hospital day, date, POD, "today", ..."""
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


def far_dates(ctx: Ctx, true_dates: Sequence[dt.date], min_gap: int = 3) -> list[dt.date]:
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


def claimed_date(ctx: Ctx, mode: str, true_date: dt.date, event_dates: Sequence[dt.date]) -> dt.date | None:
    """The date a statement gives: the true one, or for a time error one far from every event."""
    if mode != "time":
        return true_date
    cands = far_dates(ctx, event_dates)
    return ctx.rng.choice(cands) if cands else None


def missing_path(ctx: Ctx) -> tuple[str, ...]:
    """An annotator who finds nothing widens the search: synonyms, then the item's category."""
    extra = ("Analyze_Category_Trend",) if ctx.rng.random() < 0.5 else ()
    return P_LEX + P_SEM + extra + ("Get_Item_Status_History",)


def iref(o: Obs) -> ItemRef:
    """The item a row belongs to."""
    return ItemRef(o.table, o.item.label, o.item.itemid)


def row_refs(obs: Sequence[Obs]) -> tuple[RowRef, ...]:
    """Evidence references to these rows."""
    return tuple(RowRef(o.table, o.row_id) for o in obs)


def incon(mode: str, columns: Sequence[str]) -> Inconsistency | None:
    """The gold inconsistency a mode makes (none for ``ok``)."""
    if mode == "ok":
        return None
    if mode == "missing":
        return Inconsistency("missing", (), None)
    return Inconsistency("column", tuple(columns), mode)  # type: ignore[arg-type]


def label_for(mode: str) -> str:
    """The gold label a mode makes."""
    return "consistent" if mode == "ok" else "inconsistent"


def main_item(rows: Sequence[Obs]) -> list[Obs]:
    """Rows of the item with most rows (a concept may span several items)."""
    if not rows:
        return []
    counts: dict[Any, int] = {}
    for o in rows:
        counts[o.item.itemid] = counts.get(o.item.itemid, 0) + 1
    best = sorted(counts, key=lambda k: (-counts[k], str(k)))[0]
    return [o for o in rows if o.item.itemid == best]
