"""Offline stage 6: rule-based verification through the same tools the LLM uses.

Every table read goes through the patient's toolset (``Get_Item_Status_History``,
``Analyze_Value_Trend``, ``Get_Clinical_Criterion``, ``View_General_Timeline``,
``Lexical_Search``), so a verdict carries a tool trace comparable with an LLM's.

Rules (paper §4.4, Appendix B.4-B.8):

* **Windows.** The tools are asked for the entity's window by date ("A to B", which they
  widen one day each way); rows are then kept only inside the entity's own window
  (explicit date = that day; narrative anchor = ±1 day; default = note date ±1 day or
  the hospitalization).
* **Numeric tolerance by unit**: the concept's ``tol`` in ``offline_lexicon.yaml``
  (labs: half the reported precision, e.g. 0.05 for Cr; vitals 2-3 units; temperature
  0.3 °F). °F/°C are converted by the item's label/unit.
* **Ranges and min/max**: every number the note states (value, min, max, the BP mean,
  the braces' extremes) must be met by some row in the window; a decade ("120s") is met
  by any value in it.
* **Interpretations** (``febrile``, ``hypotensive``, ``AKI``) use Get_Clinical_Criterion:
  the state holds if a row of a criterion item in the window meets the test (delta
  criteria: a rise of ``rise`` within ``within_hours`` or ``ratio`` x the lowest earlier
  value; rate criteria: a calendar day's urine below 0.5 mL/kg/h x 24 h). A negated state
  ("afebrile") is inconsistent when the state holds.
* **Trends** use Analyze_Value_Trend's direction (or first-vs-last); "improving" /
  "worsening" are mapped through the concept's ``lower_is_worse``; an arrow series must
  appear in time order.
* **Medications/infusions**: interval overlap of orders with the window; dose, route and
  duration compared when stated; "started"/"stopped" compare the start/end dates.
* **Microbiology**: specimen, organism (regex on ``org_name``), susceptibility.
* **Diagnoses**: a billed ICD code of the admission among Lexical_Search's best matches.
* **Missing vs contradiction**: *missing* when the item has no record in the window at
  all; *contradiction* when records exist but disagree (including records only on
  other days: a time error).
* **Validation cache** (m = 5): an entity restating a cached claim on the same item and
  window (or the same observation group) reuses the cached verdict without tool calls.
* **General rule families** (modules of their own, each with its tolerance documented):
  clock times of starts/stops of drips, orders and procedures (:mod:`.clocktime`: ±2 h,
  "~" ±3 h, runs of rate rows, dates never confirm a clock time); value-attached
  qualifiers ("WBC 16.2 (WNL)", "K 5.9, hyperkalemic": :mod:`.qualifiers`); stated
  origins and day-over-day trend words (:mod:`.trendwords`); susceptibilities
  (:mod:`.microsens`); drip rates on the note's day; culture results looking back
  ``MICRO_LOOKBACK_DAYS`` for an undated specimen.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Sequence

from ehrlib.corpus.records import RowRef, TimeSpan, ToolCallRecord
from ehrlib.criteria import criterion_holds
from ehrlib.pipeline.cache import related_entries
from ehrlib.pipeline.offline.clocktime import edge_matches, parse_clock
from ehrlib.pipeline.offline.findings_data import DATA_CONCEPT, judge_data_finding
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.microsens import check_susceptibilities
from ehrlib.pipeline.offline.qualifiers import (
    attached_value,
    normal_range,
    qualifier_holds,
    reference_qualifier,
    state_holds_on,
)
from ehrlib.pipeline.offline.timex import parse_datetime
from ehrlib.pipeline.offline.trendwords import day_over_day, direction_of, parse_origin
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv
from ehrlib.tools.trend import trend_stats

__all__ = ["verify_entity", "verify_surface", "in_window", "tool_spec", "value_matches", "criterion_holds",
           "trend_direction", "intervals_overlap"]

_MAX_EVIDENCE = 8


# --- helpers (pure) ----------------------------------------------------------------------------------

def tool_spec(window: TimeSpan | None) -> str:
    """The tools' date-range spec covering a window (they widen it a day each way)."""
    if window is None or not (window.start and window.end):
        return ""
    return f"{window.start[:10]} to {window.end[:10]}"


def _t(v: Any) -> datetime | None:
    return parse_datetime(str(v)) if v else None


def in_window(row: Mapping[str, Any], window: TimeSpan | None) -> bool:
    """Whether a tool row falls in (point) or overlaps (interval) the window."""
    if window is None:
        return True
    ws, we = _t(window.start), _t(window.end)
    start = _t(row.get("time"))
    if start is None:
        return True  # time-less rows (billing codes) belong to the admission
    end = _t(row.get("end")) or start
    if ws is not None and end < ws:
        return False
    if we is not None and start > we:
        return False
    return True


def intervals_overlap(a: tuple[datetime, datetime], b: tuple[datetime, datetime]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def value_matches(stated: float, observed: float, tol: float) -> bool:
    return abs(stated - observed) <= tol + 1e-9 or (abs(stated) >= 50 and abs(stated - observed) <= 0.01 * abs(stated))


def _is_celsius(row: Mapping[str, Any]) -> bool:
    text = f"{row.get('label', '')} {row.get('unit', '')}".lower()
    return bool(re.search(r"\bc\b|celsius|°c|\?c|deg c", text)) or (
        row.get("valuenum") is not None and float(row["valuenum"]) < 50)


def _convert_temp(value: float, unit: str | None, row: Mapping[str, Any]) -> tuple[float, float]:
    """(note value in the row's unit, tolerance scale)."""
    row_c = _is_celsius(row)
    note_c = (unit or "").upper() == "C" or value < 50
    if note_c and not row_c:
        return value * 9 / 5 + 32, 1.0
    if not note_c and row_c:
        return (value - 32) * 5 / 9, 5 / 9
    return value, 1.0 if not row_c else 5 / 9


def trend_direction(values: Sequence[float]) -> str:
    """first-vs-last direction with a 5 % dead band (as the trend tool's stability rule)."""
    if len(values) < 2:
        return "insufficient data"
    first, last = values[0], values[-1]
    if abs(last - first) <= 0.05 * max(abs(first), abs(last), 1e-9):
        return "stable"
    return "rising" if last > first else "falling"


# --- the tool session of one entity ---------------------------------------------------------------------

@dataclass
class _Session:
    tools: Any
    start: int = 0
    used: list[Mapping[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start = len(self.tools.tracer.records) if self.tools is not None else 0

    def call(self, name: str, **args: Any) -> Any:
        if self.tools is None or name not in self.tools.names:
            return None
        res = self.tools.call(name, args)
        return None if res.error else res

    def rows(self, key: str, window: TimeSpan | None) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """(rows in the window, rows of the admission) of one item key.

        The admission's rows are fetched only when the window has none (to tell a time
        error from a missing record); otherwise the second list is the first.
        """
        spec = tool_spec(window)
        res = self.call("Get_Item_Status_History", item=key, time=spec)
        got = list(res.rows) if res is not None else []
        inside = [r for r in got if in_window(r, window)]
        if inside or not spec:
            return inside, got if not spec else inside
        res = self.call("Get_Item_Status_History", item=key, time="")
        return inside, list(res.rows) if res is not None else []

    def records(self) -> tuple[ToolCallRecord, ...]:
        if self.tools is None:
            return ()
        return tuple(self.tools.tracer.records[self.start:])


def _evidence(rows: Iterable[Mapping[str, Any]]) -> tuple[RowRef, ...]:
    out: list[RowRef] = []
    seen: set[tuple[str, Any]] = set()
    for r in rows:
        if "row_id" not in r or r.get("row_id") is None:
            continue
        key = (str(r.get("table")), r["row_id"])
        if key in seen:
            continue
        seen.add(key)
        out.append(RowRef(str(r.get("table")), r["row_id"]))
        if len(out) >= _MAX_EVIDENCE:
            break
    return tuple(out)


def _verdict(e: Entity, s: _Session, ok: bool | None, reason: str, rows: Iterable[Mapping[str, Any]] = (),
             missing: bool = False) -> Verdict:
    if ok:
        return Verdict(e.entity_id, "consistent", None, reason, _evidence(rows), s.records())
    return Verdict(e.entity_id, "inconsistent", "missing" if missing else "contradiction", reason,
                   _evidence(rows), s.records())


def _keys(e: Entity) -> list[str]:
    return [k for k in e.item_keys if k]


def _all_rows(s: _Session, e: Entity) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    inside: list[Mapping[str, Any]] = []
    every: list[Mapping[str, Any]] = []
    for k in _keys(e)[:6]:
        a, b = s.rows(k, e.window)
        inside += a
        every += b
    return inside, every


# --- per-kind rules ---------------------------------------------------------------------------------------

_NUMERIC_KEYS = ("value", "min", "max", "systolic", "diastolic", "mean", "systolic_min", "systolic_max",
                 "diastolic_min", "diastolic_max", "mean_min", "mean_max")


def _bp_part(label: str) -> str | None:
    low = label.lower()
    if "systolic" in low:
        return "systolic"
    if "diastolic" in low:
        return "diastolic"
    if "mean" in low:
        return "mean"
    return None


def _intervals(a: Mapping[str, Any], prefix: str = "") -> list[tuple[float, float | None]]:
    """(low, high) of every number claimed under ``prefix`` (""/"systolic_"/...): an exact
    value has high None; a decade ("60s") or a "min in the 60s" gives its bounds."""
    def get(k: str) -> float | None:
        v = a.get(prefix + k)
        return float(v) if v is not None else None
    out: list[tuple[float, float | None]] = []
    lo, lo_hi, hi_lo, hi = get("min"), get("min_hi"), get("max_lo"), get("max")
    value = get("value") if not prefix else get("")
    if lo is not None and hi is not None and lo_hi is None and hi_lo is None and hi - lo == 9 and value in (lo, None):
        return [(lo, hi)]  # "SBP 80s", "tachycardic to the 120s"
    if lo is not None and lo_hi is not None and hi is not None and hi_lo is not None and (lo, lo_hi) == (hi_lo, hi):
        return [(lo, lo_hi)]
    if lo is not None:
        out.append((lo, lo_hi))
    if hi is not None:
        out.append((hi_lo, hi) if hi_lo is not None and hi_lo != hi else (hi, None))
    if value is not None and (value, None) not in out and not any(x == value for x, _ in out):
        out.append((value, None))
    return out


def _stated_numbers(e: Entity) -> list[tuple[str, float, float | None]]:
    """(component, low, high) of every number the entity claims."""
    a = e.attributes
    if any(k.startswith("systolic") for k in a):
        out: list[tuple[str, float, float | None]] = []
        for part in ("systolic", "diastolic", "mean"):
            out += [(part, lo, hi) for lo, hi in _intervals(a, part + "_")]
            if part in a and a[part] is not None and not any(lo == float(a[part]) for p, lo, _ in out if p == part):
                out.append((part, float(a[part]), None))
        return out
    return [("value", lo, hi) for lo, hi in _intervals(a)]


def _verify_numbers(e: Entity, s: _Session) -> Verdict:
    lex = load_lexicon()
    concept = lex.concepts.get(str(e.attributes.get("concept")))
    tol = concept.tol if concept else 0.05
    inside, every = _all_rows(s, e)
    numeric = [r for r in inside if r.get("valuenum") is not None]
    if not numeric:
        if not [r for r in every if r.get("valuenum") is not None]:
            return _verdict(e, s, False, f"no {e.text} record for this admission", (), missing=True)
        return _verdict(e, s, False, f"no {e.text} record in the window {tool_spec(e.window)}", every[:3],
                        missing=True)
    if e.attributes.get("per_day"):
        return _verify_daily_totals(e, s, numeric, tol)
    if e.attributes.get("approx"):
        tol = max(tol, 0.1 * float(e.attributes.get("value") or 0))
    matched: list[Mapping[str, Any]] = []
    failed: list[str] = []
    for part, value, upper in _stated_numbers(e):
        cands = numeric
        if part != "value":
            cands = [r for r in numeric if _bp_part(str(r.get("label", ""))) in (part, None)] or numeric
        hit = None
        for r in cands:
            obs = float(r["valuenum"])
            v, scale = (value, 1.0)
            if concept is not None and concept.cid == "temperature":
                v, scale = _convert_temp(value, e.attributes.get("unit"), r)
            if upper is not None:
                u = upper if scale == 1.0 else _convert_temp(upper, e.attributes.get("unit"), r)[0]
                if v - tol * scale <= obs <= u + tol * scale:
                    hit = r
                    break
            elif value_matches(v, obs, tol * scale):
                hit = r
                break
        if hit is None:
            failed.append(f"{part} {value:g}" + (f"-{upper:g}" if upper else ""))
        else:
            matched.append(hit)
    if failed:
        near = sorted({float(r["valuenum"]) for r in numeric})[:12]
        return _verdict(e, s, False, f"{e.text}: stated {', '.join(failed)} not found in the window; recorded "
                        f"{', '.join(f'{x:g}' for x in near)}", numeric[:5])
    extremes = _verify_extremes(e, numeric, concept, tol)
    if extremes is not None:
        return _verdict(e, s, False, extremes, numeric[:5])
    series = e.attributes.get("series")
    if series:
        return _verify_series(e, s, numeric, [float(x) for x in series], tol, matched)
    return _verdict(e, s, True, f"{e.text} {e.value or ''} matches the table", matched)


def core_window(window: TimeSpan | None) -> TimeSpan | None:
    """The day a widened window was built around: a note date or anchor widened one day
    each side (3 days) gives its middle day; a single day is itself; longer spans (the
    hospitalization) have no core."""
    if window is None:
        return None
    a, b = _t(window.start), _t(window.end)
    if a is None or b is None:
        return None
    days = (b - a).total_seconds() / 86400
    if days <= 1.01:
        return window
    if days <= 3.01:
        mid = a + timedelta(days=1)
        return TimeSpan(mid.strftime("%Y-%m-%d 00:00:00"), mid.strftime("%Y-%m-%d 23:59:59"))
    return None


def _verify_extremes(e: Entity, numeric: list[Mapping[str, Any]], concept: Any, tol: float) -> str | None:
    """A stated range or maximum is a claim about the extremes of its day (flowsheet
    "HR 85-130", "Tmax 102.3", "peaked at 12.7"): the charted minimum/maximum of the core
    window must match, not only appear. Returns the reason when they do not."""
    a = e.attributes
    if concept is None or (concept.cid not in _VITALS and not ("max_lo" in a and "min" not in a)):
        return None  # lab and output ranges summarise typical values; vitals ranges are min..max
    core = core_window(e.window)
    if core is not None and str(a.get("trend_word") or "").startswith(("peak", "nadir")):
        # "lactate peaked at 12.7" tells the course up to the note's day, not that day's maximum
        rows = [r for r in numeric if str(r.get("time"))[:10] <= str(core.end)[:10]]
    else:
        rows = [r for r in numeric if in_window(r, core)] if core is not None else (
            numeric if "max_lo" in a and "min" not in a else [])
    if not rows:
        return None
    is_temp = concept is not None and concept.cid == "temperature"
    checks: list[tuple[str, float, float | None, str]] = []
    if "systolic_min" in a or "systolic_max" in a:
        for part in ("systolic", "diastolic", "mean"):
            if f"{part}_min" in a and f"{part}_max" in a:
                checks.append(("min", float(a[f"{part}_min"]), a.get(f"{part}_min_hi"), part))
                checks.append(("max", float(a.get(f"{part}_max_lo", a[f"{part}_max"])), float(a[f"{part}_max"]), part))
    elif "min" in a and "max" in a and a.get("max") != a.get("min") and not (
            a.get("max") is not None and float(a["max"]) - float(a["min"]) == 9 and "max_lo" not in a):
        checks.append(("min", float(a["min"]), a.get("min_hi"), "value"))
        checks.append(("max", float(a.get("max_lo", a["max"])), float(a["max"]), "value"))
    elif "max_lo" in a and "min" not in a:
        checks.append(("max", float(a["max_lo"]), float(a["max"]), "value"))
    if concept.cid == "blood_pressure" and checks and checks[0][3] == "value":
        part_of = "mean" if re.search(r"map|mean", e.text, re.I) else "systolic"
        checks = [(k, lo, hi, part_of) for k, lo, hi, _ in checks]
    lo_ok = float(concept.lo) if concept.lo is not None else float("-inf")
    if any(lo < lo_ok for _, lo, _, _ in checks):
        lo_ok = float("-inf")  # the note itself reports the artefact ("RR 12 (0 - 17)")
    for kind, lo, hi, part in checks:
        vals = [float(r["valuenum"]) for r in rows
                if (part == "value" or _bp_part(str(r.get("label", ""))) == part) and float(r["valuenum"]) >= lo_ok]
        if not vals:
            continue
        if is_temp:  # every row in the note's unit (a stay may chart C and F items)
            note_c = str(a.get("unit") or "").upper() == "C" or lo < 50
            vals = [(_in_c(float(r["valuenum"]), r) if note_c else _in_f(float(r["valuenum"]), r)) for r in rows]
        observed = min(vals) if kind == "min" else max(vals)
        top = hi if hi is not None else lo
        slack = max(tol, 0.02 * abs(observed)) if not is_temp else 0.3
        if not (lo - slack <= observed <= float(top) + slack):
            label = f"{lo:g}" + (f"-{float(hi):g}" if hi is not None and hi != lo else "")
            return (f"{e.text}: stated {part if part != 'value' else ''} {kind} {label}, charted {kind} "
                    f"{observed:g} in {tool_spec(core) if core else 'the window'}").replace("  ", " ")
    return None


_VITALS = ("heart_rate", "blood_pressure", "respiratory_rate", "spo2", "temperature", "cvp")


def _in_c(v: float, row: Mapping[str, Any]) -> float:
    return v if _is_celsius(row) else (v - 32) * 5 / 9


def _in_f(v: float, row: Mapping[str, Any]) -> float:
    return v * 9 / 5 + 32 if _is_celsius(row) else v


def _verify_daily_totals(e: Entity, s: _Session, numeric: list[Mapping[str, Any]], tol: float) -> Verdict:
    """"UOP ~200 cc over 24h" / "100-350 cc per day": calendar-day sums of the item."""
    days: dict[str, float] = {}
    for r in numeric:
        days[str(r.get("time"))[:10]] = days.get(str(r.get("time"))[:10], 0.0) + float(r["valuenum"])
    ordered = [days[d] for d in sorted(days)]
    full = ordered[1:-1] if len(ordered) > 2 else ordered  # first and last days are partial
    totals = sorted(days.values())
    slack = 0.15
    misses = []
    a = e.attributes
    if a.get("min") is not None and a.get("max") is not None and "min_hi" not in a:
        lo, hi = float(a["min"]) * (1 - slack), float(a["max"]) * (1 + slack)
        inside_share = sum(lo <= t <= hi for t in full) / max(len(full), 1)
        if inside_share < 0.6:
            misses.append(f"{float(a['min']):g}-{float(a['max']):g} on most days")
    else:
        for _, value, upper in _stated_numbers(e):
            lo, hi = value * (1 - slack), (upper if upper is not None else value) * (1 + slack)
            if not any(lo <= t <= hi for t in totals):
                misses.append(f"{value:g}" + (f"-{upper:g}" if upper else ""))
    shown = ", ".join(f"{t:g}" for t in totals[:8])
    if misses:
        return _verdict(e, s, False, f"{e.text}: daily totals {shown} do not include {', '.join(misses)}", numeric[:4])
    return _verdict(e, s, True, f"{e.text}: daily totals {shown} as stated", numeric[:4])


def _verify_series(e: Entity, s: _Session, numeric: list[Mapping[str, Any]], series: list[float], tol: float,
                   matched: list[Mapping[str, Any]]) -> Verdict:
    """An arrow series: each value recorded in the window, in the stated order."""
    times: list[datetime] = []
    hits: list[Mapping[str, Any]] = []
    ordered = sorted(numeric, key=lambda r: str(r.get("time")))
    last: datetime | None = None
    for value in series:
        cands = [r for r in ordered if value_matches(value, float(r["valuenum"]), tol)]
        if not cands:
            return _verdict(e, s, False, f"{e.text}: {value:g} of the stated series not recorded in the window",
                            ordered[:5])
        later = [r for r in cands if last is None or (_t(r.get("time")) or datetime.min) >= last]
        if not later:
            return _verdict(e, s, False, f"{e.text}: series {' -> '.join(f'{x:g}' for x in series)} is not in "
                            "time order in the table", cands[:3])
        hits.append(later[0])
        last = _t(later[0].get("time"))
        if last is not None:
            times.append(last)
    return _verdict(e, s, True, f"{e.text} series {' -> '.join(f'{x:g}' for x in series)} recorded in order", hits)


def _claimed_direction(e: Entity) -> str | None:
    d = e.attributes.get("direction")
    if d in ("up", "down", "stable"):
        return {"up": "rising", "down": "falling", "stable": "stable"}[d]
    concept = load_lexicon().concepts.get(str(e.attributes.get("concept")))
    lower_is_worse = concept.lower_is_worse if concept else None
    if d in ("improving", "worsening") and lower_is_worse is not None:
        worse = "falling" if lower_is_worse else "rising"
        better = "rising" if lower_is_worse else "falling"
        return worse if d == "worsening" else better
    return None


def _trend_window(e: Entity, ctx: NoteContext) -> TimeSpan | None:
    """A progress note's trend looks back from its date ("plts downtrending" = the last
    days up to today), not forward into the next day the default window admits."""
    window = e.window
    if ctx.note_type == "discharge_summary" or window is None:
        return window
    day = _t((ctx.note.charttime or ctx.chartdate or ctx.note.chartdate or "")[:10])
    end = _t(window.end)
    if day is None or end is None:
        return window
    note_end = day.replace(hour=23, minute=59, second=59)
    end = min(end, note_end)
    start = min(_t(window.start) or end, day - timedelta(days=2))
    return TimeSpan(start.strftime("%Y-%m-%d %H:%M:%S"), end.strftime("%Y-%m-%d %H:%M:%S"))


def _numeric_rows(s: _Session, keys: Sequence[str], window: TimeSpan | None) -> list[Mapping[str, Any]]:
    rows: list[Mapping[str, Any]] = []
    for key in keys[:4]:
        res = s.call("Analyze_Value_Trend", item=key, time=tool_spec(window))
        if res is None:
            continue
        rows += [r for r in res.rows if in_window(r, window) and r.get("valuenum") is not None]
    return sorted(rows, key=lambda r: str(r.get("time")))


def _stable(values: Sequence[float]) -> bool:
    if len(values) < 2:
        return True
    mean = sum(values) / len(values)
    return (max(values) - min(values)) <= 0.2 * max(abs(mean), 1e-9)


def _verify_trend(e: Entity, s: _Session, ctx: NoteContext) -> Verdict:
    a = e.attributes
    if a.get("series"):
        return _verify_numbers(e, s)
    keys = _keys(e)
    if not keys:
        return _verdict(e, s, False, f"no item for {e.text}", (), missing=True)
    claim = _claimed_direction(e)
    if "value" in a:
        num = _verify_numbers(e, s)
        if num.label == "inconsistent" or claim is None:
            return num
        return _verify_value_direction(e, s, claim, num)
    if claim is None:
        return _verdict(e, s, True, f"trend word {a.get('trend_word')!r} is not directional", ())
    window = _trend_window(e, ctx)
    rows = _numeric_rows(s, keys, window)
    if len(rows) < 2:
        ws = _t(window.start) if window else None
        if ws is not None and window is not None:
            wider = TimeSpan((ws - timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S"), window.end)
            rows = _numeric_rows(s, keys, wider)
    if len(rows) < 2:
        if rows or _all_rows(s, e)[1]:
            return _verdict(e, s, False, f"{e.text}: fewer than two values in the window, no trend to compare",
                            rows, missing=False)
        return _verdict(e, s, False, f"no {e.text} values in the window", (), missing=True)
    values = [float(r["valuenum"]) for r in rows]
    directions = {trend_direction(values)}
    if claim == "stable":
        day_vals = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] == str(rows[-1].get("time"))[:10]]
        if _stable(values) or _stable(day_vals):
            directions.add("stable")
    if a.get("normalized") and claim == "falling":
        directions.add("falling" if values[-1] < max(values) else "stable")
    # the tool's least-squares direction, as the LLM would read it
    fitted = _fitted_direction(rows)
    if fitted:
        directions.add(fitted)
    # a progress note's "drifting down" is about the latest day: the last 24 h of values
    last_t = _t(rows[-1].get("time"))
    if last_t is not None and ctx.note_type != "discharge_summary":
        recent = [float(r["valuenum"]) for r in rows if (rt := _t(r.get("time"))) and last_t - rt <= timedelta(hours=24)]
        if len(recent) >= 2:
            directions.add(trend_direction(recent))
    if ctx.note_type != "discharge_summary":
        # the latest draw against the previous day's (documented in .trendwords.day_over_day);
        # the window's least-squares fit may also carry the claim, a start-vs-end of an
        # arbitrary window may not
        # one item's own series: the first aligned item with values on two days ("WBC" may
        # also align a urine WBC, whose values are not this series)
        concept = load_lexicon().concepts.get(str(a.get("concept")))
        dod = next((d for k in keys if (d := day_over_day([r for r in rows if r.get("key") == k],
                                                           concept.tol if concept else 0.05)) is not None), None)
        if dod is not None:
            directions = {dod} | ({fitted} if fitted else set()) | (directions & {"stable"} if claim == "stable" else set())
    ev = [rows[0], rows[-1]]
    if claim in directions:
        return _verdict(e, s, True, f"{e.text} {claim} in the table as stated "
                        f"({values[0]:g} -> {values[-1]:g})", ev)
    return _verdict(e, s, False, f"{e.text} stated {claim}, table shows {', '.join(sorted(directions))} "
                    f"({values[0]:g} -> {values[-1]:g})", ev)


def _fitted_direction(rows: Sequence[Mapping[str, Any]]) -> str | None:
    stats = trend_stats([(r.get("time"), r.get("valuenum")) for r in rows])
    d = stats.get("direction")
    return d if d in ("rising", "falling", "stable") else None


def _verify_value_direction(e: Entity, s: _Session, claim: str, num: Verdict) -> Verdict:
    """"rose to 6.0" / "improved to 0.5" / "Hct 27.5 and stable": the value is recorded and the
    values before it (same window or the three days before) moved as stated."""
    concept = load_lexicon().concepts.get(str(e.attributes.get("concept")))
    tol = concept.tol if concept else 0.05
    value = float(e.attributes["value"])
    window = e.window
    ws = _t(window.start) if window else None
    wider = TimeSpan((ws - timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S"), window.end) if ws and window else window
    rows = _numeric_rows(s, _keys(e), wider)
    hits = [r for r in rows if value_matches(value, float(r["valuenum"]), tol) and in_window(r, window)]
    for hit in hits:
        t_hit = str(hit.get("time"))
        before = [float(r["valuenum"]) for r in rows if str(r.get("time")) < t_hit]
        if not before:
            continue
        if core_window(window) is not None and claim in ("rising", "falling"):
            # a progress note's "uptrending, 14.9": against the previous day's last draw
            # (the one before it when none), not the lowest value of the look-back
            prev_day = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] < t_hit[:10]]
            ref = prev_day[-1] if prev_day else before[-1]
            if (ref < value - tol) if claim == "rising" else (ref > value + tol):
                return _verdict(e, s, True, f"{e.text} {'rose' if claim == 'rising' else 'fell'} to {value:g} "
                                f"(from {ref:g} the previous draw day)", [hit])
            continue
        if claim == "rising" and min(before) < value - tol:
            return _verdict(e, s, True, f"{e.text} rose to {value:g} (from {min(before):g})", [hit])
        if claim == "falling" and max(before) > value + tol:
            return _verdict(e, s, True, f"{e.text} fell to {value:g} (from {max(before):g})", [hit])
        if claim == "stable" and _stable(before[-3:] + [value]):
            return _verdict(e, s, True, f"{e.text} stable around {value:g}", [hit])
    if claim == "stable" and hits:
        day = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] == str(hits[0].get("time"))[:10]]
        if _stable(day):
            return _verdict(e, s, True, f"{e.text} stable around {value:g} that day", hits[:2])
    if hits and not [r for r in rows if str(r.get("time")) < str(hits[0].get("time"))]:
        return num  # nothing earlier to compare with: the value alone decides
    return _verdict(e, s, False, f"{e.text} {value:g} recorded, but not {claim} before it", hits[:2] or rows[:2])


def _with_origin(e: Entity, s: _Session, ctx: NoteContext) -> Verdict | None:
    """"down to 1.1 from 2.3" (:mod:`.trendwords`): the new value is recorded in the window,
    the origin is among the three values recorded before it (three-day look-back, the
    concept's tolerance; a discharge summary's origin may be any earlier value of the
    stay), and the direction word agrees with new - origin. None when the
    statement has no stated origin or the new value is not recorded (the value check
    then decides)."""
    line = _line_of(e, ctx)
    if line is None or e.span is None:
        return None
    origin = parse_origin(line[e.span[0]:e.span[0] + 90])
    stated = {float(e.attributes[k]) for k in ("value", "max", "min") if e.attributes.get(k) is not None}
    keys = _keys(e)
    if origin is None or origin.new not in stated or not keys:
        return None
    concept = load_lexicon().concepts.get(str(e.attributes.get("concept")))
    tol = concept.tol if concept else 0.05
    window = e.window
    ws = _t(window.start) if window else None
    wider = TimeSpan((ws - timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S"), window.end) if ws and window else window
    rows = _numeric_rows(s, keys, wider)
    hits = [r for r in rows if value_matches(origin.new, float(r["valuenum"]), tol) and in_window(r, window)]
    if not hits:
        return None
    claimed = direction_of(origin.word, concept.lower_is_worse if concept else None)
    actual = "rising" if origin.new > origin.origin else "falling" if origin.new < origin.origin else "stable"
    if claimed is not None and claimed != actual:
        return _verdict(e, s, False, f"{e.text}: stated {origin.word} to {origin.new:g} from {origin.origin:g}, "
                        f"which is {actual}", hits[:2])
    ds = ctx.note_type == "discharge_summary"
    for hit in hits:
        t_hit = _t(hit.get("time"))
        before = [r for r in rows if str(r.get("time")) < str(hit.get("time"))
                  and (ds or t_hit is None or (rt := _t(r.get("time"))) is None or t_hit - rt <= timedelta(days=3))]
        if not ds:
            before = before[-3:]  # a progress note's "from" is the previous draw; a summary's spans the stay
        prior = [r for r in before if value_matches(origin.origin, float(r["valuenum"]), tol)]
        if prior:
            return _verdict(e, s, True, f"{e.text}: {origin.origin:g} -> {origin.new:g} recorded in order", [prior[-1], hit])
    prev = [float(r["valuenum"]) for r in rows if str(r.get("time")) < str(hits[0].get("time"))][-3:]
    return _verdict(e, s, False, f"{e.text}: {origin.new:g} recorded, but {origin.origin:g} is not among the values "
                    f"before it ({', '.join(f'{x:g}' for x in prev) or 'none'})", hits[:2])


def _criterion_rows(s: _Session, e: Entity, state: str) -> tuple[Mapping[str, Any] | None, list[dict[str, Any]]]:
    res = s.call("Get_Clinical_Criterion", state=state)
    if res is None:
        return None, []
    return res.summary, [dict(r) for r in res.rows]


def _verify_interpretation(e: Entity, s: _Session, ctx: NoteContext) -> Verdict:
    a = e.attributes
    crit_id = str(a.get("criterion"))
    negated = bool(a.get("negated"))
    extra = load_lexicon().extra_criteria.get(crit_id)
    attached = _attached_state(e, s, ctx, crit_id, extra, negated)
    if attached is not None:
        return attached
    if extra is not None:
        return _verify_lexicon_state(e, s, crit_id, extra, negated)
    summary, tests = _criterion_rows(s, e, crit_id if crit_id != "None" else e.text)
    if summary is None or not tests:
        return _verdict(e, s, True, f"no clinical criterion for {e.text!r}; not judged", ())
    kind = summary.get("kind", "threshold")
    window = e.window
    if kind == "delta":
        adm = TimeSpan(ctx.admittime, window.end if window else ctx.dischtime)
        holds, rows, any_rows = _delta_holds(s, tests, summary, adm, window)
    elif kind == "rate":
        holds, rows, any_rows = _rate_holds(s, tests, window)
    else:
        holds, rows, any_rows = _threshold_holds(s, tests, window, ctx.sex)
    if not any_rows:
        return _verdict(e, s, False, f"no records of the items {crit_id} is judged on in the window", (), missing=True)
    src = summary.get("source", "")
    if holds == (not negated):
        # a stated value ("febrile to 101.5") must also be recorded
        if any(k in a for k in ("value", "max", "min")) and crit_id in ("fever", "tachycardia", "hypotension",
                                                                        "hypoxia", "tachypnea", "bradycardia"):
            vals = [float(r["valuenum"]) for r in any_rows if r.get("valuenum") is not None]
            target = float(a.get("value", a.get("max", 0)))
            upper = float(a["max"]) if "max" in a and a.get("min") is not None else None
            ok = any((upper is not None and target - 1 <= v <= upper + 1) or value_matches(target, v, 1.0)
                     or (crit_id == "fever" and _temp_match(target, r)) for v, r in zip(vals, any_rows))
            if not ok:
                return _verdict(e, s, False, f"{crit_id} holds but the stated value {target:g} is not recorded",
                                any_rows[:4])
        what = "holds" if holds else "does not hold"
        return _verdict(e, s, True, f"{crit_id} {what} in the window as stated ({src})", rows or any_rows[:4])
    what = "holds" if holds else "does not hold"
    return _verdict(e, s, False, f"note says {'no ' if negated else ''}{crit_id}, but it {what} in the window "
                    f"({src})", rows or any_rows[:4])


def _line_of(e: Entity, ctx: NoteContext) -> str | None:
    lines = getattr(ctx, "lines", None) or ()
    return lines[e.line] if e.span is not None and 0 <= e.line < len(lines) else None


def _attached_state(e: Entity, s: _Session, ctx: NoteContext, crit_id: str, extra: Mapping[str, Any] | None,
                    negated: bool) -> Verdict | None:
    """"K 5.9, hyperkalemic" / "plt 95 (thrombocytopenic)": a state set off right after a
    value interprets that value (:mod:`.qualifiers`); None when the word stands alone or
    the value is not an item the state is judged on."""
    line = _line_of(e, ctx)
    if line is None or e.span is None:
        return None
    lex = load_lexicon()
    found = attached_value(line, e.span[0], lex)
    if found is None:
        return None
    cid, value = found
    if extra is not None:
        if extra.get("concept") != cid:
            return None
        holds: bool | None = criterion_holds(str(extra["operator"]), value, float(extra["threshold"]))
        src = str(extra.get("source", ""))
    else:
        summary, tests = _criterion_rows(s, e, crit_id)
        concept = lex.concepts.get(cid)
        holds = state_holds_on(value, concept.items if concept else None, tests)
        src = str((summary or {}).get("source", ""))
    if holds is None:
        return None
    ok = holds == (not negated)
    what = "meets" if holds else "does not meet"
    return _verdict(e, s, ok, f"the stated value {value:g} it qualifies {what} {crit_id} ({src})", ())


def _with_reference(e: Entity, s: _Session, ctx: NoteContext, v: Verdict) -> Verdict:
    """"WBC 16.2 (WNL)" / "Cr 2.1 (elevated)": a recorded value whose reference word
    contradicts the concept's adult reference interval is inconsistent."""
    line = _line_of(e, ctx)
    if v.label != "consistent" or line is None or e.span is None or e.attributes.get("value") is None:
        return v
    q = reference_qualifier(line, e.span[1])
    concept = str(e.attributes.get("concept"))
    if q is None:
        return v
    value = float(e.attributes["value"])
    holds = qualifier_holds(q, concept, value)
    if holds is None or holds:
        return v
    lo, hi = normal_range(concept, value) or (0.0, 0.0)
    return Verdict(e.entity_id, "inconsistent", "contradiction", f"{e.text}: {value:g} is recorded but not "
                   f"{q.text} (reference {lo:g}-{hi:g})", v.evidence_row_ids, v.tool_calls)


def _verify_lexicon_state(e: Entity, s: _Session, crit_id: str, extra: Mapping[str, Any], negated: bool) -> Verdict:
    """A state the shared criteria file lacks (hypokalemia...): the lexicon's reference
    range on the concept's items, with the same negation and missing rules."""
    inside, every = _all_rows(s, e)
    numeric = [r for r in inside if r.get("valuenum") is not None]
    src = extra.get("source", "")
    if not numeric:
        return _verdict(e, s, False, f"no {extra['concept']} values in the window to judge {crit_id}", every[:2],
                        missing=True)
    def value(r: Mapping[str, Any]) -> float:
        v = float(r["valuenum"])
        return _in_f(v, r) if extra["concept"] == "temperature" else v  # thresholds in the note's units

    meeting = [r for r in numeric if criterion_holds(str(extra["operator"]), value(r), float(extra["threshold"]))]
    holds = bool(meeting)
    what = "holds" if holds else "does not hold"
    if holds == (not negated):
        return _verdict(e, s, True, f"{crit_id} {what} in the window as stated ({src})", meeting or numeric[:3])
    return _verdict(e, s, False, f"note says {'no ' if negated else ''}{crit_id}, but it {what} in the window "
                    f"({src})", meeting or numeric[:4])


def _temp_match(target: float, row: Mapping[str, Any]) -> bool:
    v, scale = _convert_temp(target, None, row)
    return row.get("valuenum") is not None and abs(v - float(row["valuenum"])) <= 0.3 * scale


def _test_rows(s: _Session, test: Mapping[str, Any], window: TimeSpan | None) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for item in (test.get("items") or [])[:6]:
        if not item.get("has_records", True):
            continue
        inside, _ = s.rows(str(item["key"]), window)
        out += [r for r in inside if r.get("valuenum") is not None]
    return out


def _threshold_holds(s: _Session, tests: list[dict[str, Any]], window: TimeSpan | None,
                     sex: str | None) -> tuple[bool, list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    meeting: list[Mapping[str, Any]] = []
    every: list[Mapping[str, Any]] = []
    for test in tests:
        if test.get("applies_to_patient") is False:
            continue
        rows = _test_rows(s, test, window)
        every += rows
        meeting += [r for r in rows if criterion_holds(str(test["operator"]), float(r["valuenum"]),
                                                       float(test["threshold"]))]
    return bool(meeting), meeting, every


def _delta_holds(s: _Session, tests: list[dict[str, Any]], summary: Mapping[str, Any], span: TimeSpan,
                 window: TimeSpan | None) -> tuple[bool, list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    rise = float(summary.get("rise") or 0.3)
    hours = float(summary.get("within_hours") or 48)
    ratio = float(summary.get("ratio") or 1.5)
    rows = sorted(_test_rows(s, tests[0], span), key=lambda r: str(r.get("time")))
    for i, r in enumerate(rows):
        ti, vi = _t(r.get("time")), float(r["valuenum"])
        if window is not None and not in_window(r, TimeSpan(None, window.end)):
            continue
        for p in rows[:i]:
            tp, vp = _t(p.get("time")), float(p["valuenum"])
            if ti and tp and (ti - tp) <= timedelta(hours=hours) and vi - vp >= rise - 1e-9:
                return True, [p, r], rows
        earlier = [float(p["valuenum"]) for p in rows[:i]]
        if earlier and vi >= ratio * min(earlier) - 1e-9:
            return True, [r], rows
    return False, [], rows


def _rate_holds(s: _Session, tests: list[dict[str, Any]], window: TimeSpan | None
                ) -> tuple[bool, list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    rows = _test_rows(s, tests[0], window)
    by_day: dict[str, float] = {}
    for r in rows:
        by_day[str(r.get("time"))[:10]] = by_day.get(str(r.get("time"))[:10], 0.0) + float(r["valuenum"])
    low = [d for d, total in by_day.items() if total < 0.5 * 70 * 24]
    return bool(low), [r for r in rows if str(r.get("time"))[:10] in low][:4], rows


def _drug_rows(s: _Session, e: Entity) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    return _all_rows(s, e)


def _row_interval(r: Mapping[str, Any]) -> tuple[datetime, datetime] | None:
    a = _t(r.get("time"))
    if a is None:
        return None
    b = _t(r.get("end")) or a
    if b < a:
        b = a
    if r.get("table") == "prescriptions" and b.hour == 0 and b.minute == 0:
        b = b + timedelta(hours=23, minutes=59)  # dates: the whole end day
    return a, b


_ROUTE_WORDS = {"IV": ("iv", "intraven", "drip", "ivpb"), "PO": ("po", "oral", "ng", "tube"),
                "SC": ("sc", "subcut", "sq"), "IM": ("im", "intramusc"), "PR": ("pr", "rectal"),
                "SL": ("sl", "subling"), "INH": ("inh", "neb")}


def _verify_medication(e: Entity, s: _Session) -> Verdict:
    a = e.attributes
    inside, every = _drug_rows(s, e)
    names = ", ".join(a.get("drugs", ())[:3])
    if a.get("negated"):
        # "no transfusion today", "not on pressors": consistent when nothing is given in the window
        if inside:
            return _verdict(e, s, False, f"note says no {names}, but it was given in the window", inside)
        return _verdict(e, s, True, f"no {names} in the window, as stated", every[:2])
    action = str(a.get("action") or "")
    stopped = action.startswith(("off", "held", "hold", "stop", "discontinued", "d/c", "dc", "weaned"))
    if stopped and not e.time_text:
        # "off octreotide", "lasix held": not running at the end of the window
        we_ = _t(e.window.end) if e.window else None
        running = [r for r in inside if (iv := _row_interval(r)) and we_ and iv[1] >= we_]
        if running:
            return _verdict(e, s, False, f"note says {names} stopped, but it runs past the window", running[:4])
        return _verdict(e, s, True, f"{names} not running at the end of the window, as stated", inside[-2:] or every[-2:])
    if not every:
        return _verdict(e, s, False, f"no order or administration of {names} in this admission", (), missing=True)
    if not inside:
        return _verdict(e, s, False, f"{names} given in this admission but not in the window {tool_spec(e.window)}",
                        every[:4])
    units = a.get("units")
    if units is not None and str(a.get("concept")) == "transfusion" and e.time_text:
        # MIMIC splits one unit over several rows (rate changes): compare volume, ~300 mL a unit
        volume = sum(float(r["valuenum"]) for r in inside
                     if r.get("valuenum") is not None and "ml" in str(r.get("unit") or "").lower())
        if volume > 0:
            estimate = volume / 300.0
            if abs(estimate - float(units)) > max(1.0, 0.25 * float(units)):
                return _verdict(e, s, False, f"{e.text}: stated {int(units)} unit(s), recorded {volume:.0f} mL "
                                f"(~{estimate:.1f} units) in {tool_spec(e.window)}", inside[:6])
    clocked = _clock_edge(e, s, action, names)
    if clocked is not None:
        return clocked
    ws, we = (_t(e.window.start), _t(e.window.end)) if e.window else (None, None)
    if e.time_text and action in ("started", "start", "added", "initiated", "initiate", "begun", "began", "restarted"):
        starts = [r for r in inside if (iv := _row_interval(r)) and ws and we and ws <= iv[0] <= we]
        if not starts:
            return _verdict(e, s, False, f"{names}: no order started in {tool_spec(e.window)}", inside[:4])
        inside = starts
    if e.time_text and action.startswith(("stop", "discontinued", "d/c", "dc", "weaned", "held", "off")):
        ends = [r for r in inside if (iv := _row_interval(r)) and ws and we and ws <= iv[1] <= we]
        if not ends:
            return _verdict(e, s, False, f"{names}: no order ended in {tool_spec(e.window)}", inside[:4])
        inside = ends
    rate = a.get("rate")
    if rate is not None:
        rated = [r for r in inside if (r.get("extra") or {}).get("rate") is not None]
        # a drip rate in a progress note is the rate of its day, not of the widened window
        core = core_window(e.window)
        rated = ([r for r in rated if in_window(r, core)] or rated) if core is not None else rated
        ok = [r for r in rated if _rate_matches(float(rate), str(a.get("rate_unit") or ""), r)]
        clock = parse_clock(e.time_text)
        if ok and clock is not None:
            # "increased to 20 mg/hr at 1400": a row at that rate must start near that time
            timed, _, detail = edge_matches(clock, e.window, ok, "start")
            if timed is False:
                return _verdict(e, s, False, f"{names}: rate {float(rate):g} {a.get('rate_unit', '')} recorded, but "
                                f"not from {e.time_text} (±{clock.tolerance.seconds // 3600} h): {detail}", ok[:4])
        if rated and not ok:
            seen = sorted({round(float(r["extra"]["rate"]), 3) for r in rated})
            return _verdict(e, s, False, f"{names}: rate {float(rate):g} {a.get('rate_unit', '')} not recorded "
                            f"(recorded {', '.join(f'{x:g}' for x in seen[:6])})", rated[:4])
        inside = ok or inside
    dose = a.get("dose")
    if dose is not None:
        comparable = [r for r in inside if _same_dose_unit(str(a.get("dose_unit") or ""), r)]
        with_dose = [r for r in comparable if _dose_matches(float(dose), str(a.get("dose_unit") or ""), r)]
        if not with_dose and any(_row_dose(r) is not None for r in comparable):
            inside = comparable
            doses = sorted({f"{_row_dose(r):g}" for r in inside if _row_dose(r) is not None})
            return _verdict(e, s, False, f"{names}: dose {dose:g} {a.get('dose_unit', '')} not recorded "
                            f"(recorded {', '.join(doses[:6])})", inside[:4])
        inside = with_dose or inside
    route = a.get("route")
    if route and route in _ROUTE_WORDS:
        routed = [r for r in inside if _route_of(r)]
        if routed and not [r for r in routed if any(w in _route_of(r) for w in _ROUTE_WORDS[route])]:
            return _verdict(e, s, False, f"{names}: route {route} not recorded (recorded "
                            f"{', '.join(sorted({_route_of(r) for r in routed}))})", routed[:4])
    course_day = a.get("course_day")
    day = _t((e.window.end if e.window else "") or "")
    if course_day and day is not None:
        course = [r for k in _keys(e)[:6] for r in s.rows(k, None)[0]]
        starts = sorted(iv[0] for r in course if (iv := _row_interval(r)) and iv[0] <= day)
        note_day = core_window(e.window)
        ref = _t(note_day.start) if note_day else day
        if starts and ref is not None:
            # the course's first dose: the earliest start with no gap of more than 2 days after it
            first = starts[-1]
            for x in reversed(starts[:-1]):
                if (first - x).days > 2:
                    break
                first = x
            stated = ref - timedelta(days=int(course_day) - 1)
            if abs((first.date() - stated.date()).days) > 1:
                return _verdict(e, s, False, f"{names}: day {course_day} means started {stated.date()}, "
                                f"first dose {first.date()}", course[:4])
    duration = a.get("duration_days")
    if duration:
        course = [r for k in _keys(e)[:6] for r in s.rows(k, None)[0]]
        ivs = [iv for r in course if (iv := _row_interval(r))]
        if ivs:
            span = (max(b for _, b in ivs) - min(x for x, _ in ivs)).total_seconds() / 86400
            if abs(span - float(duration)) > max(1.5, 0.3 * float(duration)):
                return _verdict(e, s, False, f"{names}: stated {float(duration):g} days, recorded course "
                                f"{span:.1f} days", course[:4])
    return _verdict(e, s, True, f"{names} recorded in the window", inside)


_START_ACTIONS = ("started", "start", "added", "initiated", "initiate", "begun", "began", "restarted", "resumed",
                  "hung")


def _clock_edge(e: Entity, s: _Session, action: str, names: str) -> Verdict | None:
    """"started at 1600" / "off since 0400": a run of the drug must start/end at that clock
    time (:mod:`.clocktime`); a contradiction is returned, otherwise None (the other
    checks go on)."""
    clock = parse_clock(e.time_text)
    off = action.startswith(("off", "stop", "discontinued", "d/c", "dc", "held")) or (
        action.startswith("weaned") and "off" in e.text.lower())
    edge = "start" if action in _START_ACTIONS else "end" if off else None
    if clock is None or edge is None:
        return None
    course = [r for k in _keys(e)[:6] for r in s.rows(k, None)[0]]
    ok, evidence, detail = edge_matches(clock, e.window, course, edge)
    if ok is False:
        return _verdict(e, s, False, f"{names}: stated {edge} {e.time_text} (±{clock.tolerance.seconds // 3600} h), "
                        f"{detail}", evidence)
    return None


def _rate_matches(rate: float, unit: str, r: Mapping[str, Any]) -> bool:
    obs = float(r["extra"]["rate"])
    runit = str((r.get("extra") or {}).get("rate_unit") or "").lower()
    note_unit = unit.lower()
    if "mg" in note_unit and "mcg" in runit:
        rate *= 1000
    if "mcg" in note_unit and "mg" in runit and "mcg" not in runit:
        rate /= 1000
    if re.search(r"/h", note_unit) and "min" in runit:
        rate /= 60
    if re.search(r"/\s*min", note_unit) and re.search(r"/\s*h", runit) and "kg" not in note_unit:
        rate *= 60  # "vaso 0.04 u/min" charted as 2.4 units/hour
    return abs(obs - rate) <= max(0.05 * abs(rate), 0.01)


def _row_dose(r: Mapping[str, Any]) -> float | None:
    v = r.get("valuenum")
    if v is None:
        try:
            return float(str(r.get("value") or "").split("-")[0])
        except ValueError:
            return None
    return float(v)


_UNIT_FAMILY = {"mg": "mass", "mcg": "mass", "g": "mass", "gm": "mass", "grams": "mass", "gram": "mass",
                "units": "unit", "unit": "unit", "u": "unit", "meq": "meq", "ml": "volume", "cc": "volume",
                "l": "volume"}


def _same_dose_unit(unit: str, r: Mapping[str, Any]) -> bool:
    """Whether a row's dose can be compared with the note's (mg vs mcg yes, mg vs mL no)."""
    runit = re.sub(r"[^a-z]", "", str(r.get("unit") or "").lower())
    a, b = _UNIT_FAMILY.get(unit.lower()), _UNIT_FAMILY.get(runit)
    return a is not None and a == b


def _dose_matches(dose: float, unit: str, r: Mapping[str, Any]) -> bool:
    obs = _row_dose(r)
    if obs is None:
        return False
    runit = str(r.get("unit") or "").lower()
    if unit in ("g", "gm", "grams", "gram") and runit.startswith("mg"):
        dose *= 1000
    if unit == "mg" and runit in ("g", "gm"):
        dose /= 1000
    text = str(r.get("value") or "")
    if "-" in text:  # "40-80" ranges in orders
        try:
            lo, hi = (float(x) for x in text.split("-")[:2])
            return lo - 1e-9 <= dose <= hi + 1e-9
        except ValueError:
            pass
    return abs(obs - dose) <= max(0.01 * dose, 1e-6)


def _route_of(r: Mapping[str, Any]) -> str:
    if str(r.get("table", "")).startswith("inputevents"):
        return str((r.get("extra") or {}).get("route") or "iv").lower()  # infusions and IV boluses
    extra = r.get("extra") or {}
    return str(extra.get("route") or "").lower()


def _verify_event(e: Entity, s: _Session) -> Verdict:
    """Procedures, outputs without a value, findings: a record in the window."""
    inside, every = _all_rows(s, e)
    if e.attributes.get("negated") and e.kind == "procedure" and not inside:
        return _verdict(e, s, True, f"no {e.text} in the window, as stated", every[:2])
    if not every and e.kind == "procedure":
        billed = _verify_diagnosis(e, s)  # bedside charting may miss it; the billed procedure codes may not
        if billed.label == "consistent" and billed.evidence_row_ids:
            return billed
    if not every:
        return _verdict(e, s, False, f"no record of {e.text} in this admission", (), missing=True)
    if not inside:
        return _verdict(e, s, False, f"{e.text} recorded in this admission but not in {tool_spec(e.window)}",
                        every[:4])
    if e.kind == "procedure" and not e.attributes.get("negated"):
        clocked = _procedure_clock(e, s, inside)
        if clocked is not None:
            return clocked
    side = e.attributes.get("side")
    if side in ("r", "l") and e.kind == "procedure":
        located = [r for r in inside if (r.get("extra") or {}).get("location")]
        want = "right" if side == "r" else "left"
        if located and not [r for r in located if want in str(r["extra"]["location"]).lower()
                            or str(r["extra"]["location"]).lower().startswith(want[0] + " ")]:
            return _verdict(e, s, False, f"{e.text}: side {want} not recorded (recorded "
                            f"{', '.join(sorted({str(r['extra']['location']) for r in located}))})", located[:4])
    if e.kind == "finding":
        return _verify_finding(e, s, inside)
    if e.attributes.get("negated"):
        return _verdict(e, s, False, f"note says no {e.text}, but it is recorded in the window", inside[:4])
    return _verdict(e, s, True, f"{e.text} recorded in the window", inside)


_REMOVAL = re.compile(r"\b(?:pulled|removed|d/?c'?d?|discontinued|taken out|came out|out)\b", re.I)
_PLACEMENT = re.compile(r"\b(?:placed|inserted|put in|started|initiated|intubated|extubated|done|performed)\b", re.I)


def _procedure_clock(e: Entity, s: _Session, inside: list[Mapping[str, Any]]) -> Verdict | None:
    """"CVL placed ~9pm" / "A-line pulled at 0300" / "thoracentesis at 1500": a record of
    the item starts (or, for a removal, ends) at that clock time (.clocktime tolerance;
    each row is its own event, lines are not merged). A bare time on a long-lived device
    (a line's whole dwell) is not judged."""
    clock = parse_clock(e.time_text)
    if clock is None:
        return None
    said = f"{e.text} {e.attributes.get('action') or ''}"
    # the procedure records (start/end columns), not observations charted along a line's dwell
    course = [r for k in _keys(e) if k.startswith("procedureevents") for r in s.rows(k, None)[0]]
    if not course:
        return None
    point = all((iv := _row_interval(r)) is not None and iv[1] - iv[0] <= timedelta(hours=1) for r in course)
    edge = "end" if _REMOVAL.search(said) else "start" if (_PLACEMENT.search(said) or point) else None
    if edge is None:
        return None
    ok, evidence, detail = edge_matches(clock, e.window, course, edge, merge=False)
    if ok is False:
        return _verdict(e, s, False, f"{e.text}: stated {e.time_text} (±{clock.tolerance.seconds // 3600} h), "
                        f"{detail}", evidence)
    return None


#: Finding vocabulary: canonical state -> (how notes write it, how tables chart it). A note
#: state is confirmed by a charted value of the same state; it is contradicted when the
#: window's values use this vocabulary but never the stated state (MIMIC charts "Soft
#: Distended", "Hypoactive", "Arouse to Voice", "SR (Sinus Rhythm)", "Oriented x3").
_FINDING_VOCAB: Mapping[str, tuple[tuple[str, str, str], ...]] = {
    "abdomen": (
        ("soft", r"\bsoft\b", r"\bsoft\b"),
        ("distended", r"(?<!non)(?<!non-)(?<!not )\bdistended\b|(?<![n/])\bd\b(?!/)", r"(?<!non)(?<!non-)\bdistended\b"),
        ("nondistended", r"\bnd\b|non-?distended|not distended", r"non-?distended|\bsoft\b$"),
        ("tender", r"(?<!non)(?<!non-)(?<!not )\btender\b", r"(?<!non)(?<!non-)\btender\b"),
        ("firm", r"\bfirm\b|\brigid\b", r"\bfirm\b|\brigid\b"),
        ("obese", r"\bobese\b", r"\bobese\b"),
        ("open", r"\bopen\b", r"\bopen\b"),
    ),
    "bowel_sounds": (
        ("hypoactive", r"hypoactive|\bhypo\b|decreased", r"hypoactive"),
        ("hyperactive", r"hyperactive", r"hyperactive"),
        ("absent", r"absent|no (?:bowel sounds|bs)|\bbs\s*(?:-|neg)|\b-bs\b", r"absent"),
        ("present", r"(?<!hypo)(?<!hyper)\bactive\b|\+\s*bs|bs\s*\+|\bnabs\b|present|normoactive|bsx4|\bbs\b(?!.*(?:hypo|hyper|absent))",
         r"(?<!hypo)(?<!hyper)\bactive\b|present|normal"),
    ),
    "consciousness": (
        ("alert", r"\balert\b", r"\balert\b"),
        ("voice", r"(?:arous\w*|respond\w*) to voice|\bverbal\b", r"arouse to voice|voice"),
        ("pain", r"(?:arous\w*|respond\w*) to (?:pain|noxious|sternal)", r"arouse to pain|pain"),
        ("stimulation", r"(?:arous\w*|respond\w*) to (?:touch|stim\w*)", r"stimul"),
        ("sedated", r"\bsedated\b", r"sedated"),
        ("unresponsive", r"unresponsive|obtunded", r"unresponsive"),
        ("lethargic", r"lethargic|somnolent|drowsy", r"lethargic|dozing|drowsy"),
    ),
    "orientation": (
        ("x3", r"(?:a\s*&?\s*\+?\s*o|oriented)\s*x\s*3|alert and oriented(?! x ?[12])|aaox3", r"oriented x ?3"),
        ("x2", r"(?:a\s*&?\s*o|oriented)\s*x\s*2", r"oriented x ?2"),
        ("x1", r"(?:a\s*&?\s*o|oriented)\s*x\s*1|oriented to (?:self|person)", r"oriented x ?1"),
        ("unable", r"unable to assess|cannot assess|not assessable", r"unable to assess"),
        ("disoriented", r"disoriented|confused", r"disoriented|confused"),
    ),
    "heart_rhythm": (
        ("sinus", r"\bn?sr\b|sinus rhythm|\bnsr\b|normal sinus", r"\bsr\b|sinus rhythm|normal sinus"),
        ("sinus_tach", r"sinus tach|\bst\b", r"sinus tach|\bst\b"),
        ("sinus_brady", r"sinus brady|\bsb\b", r"sinus brady|\bsb\b"),
        ("af", r"\baf\b|a-?fib|atrial fib", r"\baf\b|a-?fib|atrial fib"),
        ("flutter", r"flutter", r"flutter"),
        ("paced", r"paced", r"paced"),
    ),
    "lung_sounds": (
        ("clear", r"\bclear\b|\bctab\b|\bcta\b", r"\bclear\b"),
        ("diminished", r"diminished|decreased", r"diminished"),
        ("crackles", r"crackles|rales", r"crackles|rales"),
        ("rhonchi", r"rhonch", r"rhonch"),
        ("wheezes", r"wheez", r"wheez"),
        ("coarse", r"coarse", r"coarse"),
    ),
    "code_status": (
        ("full", r"full\s*(?:code)?", r"full code|full"),
        ("dnr", r"\bdnr\b|do not resusc", r"\bdnr\b|do not resusc"),
        ("dni", r"\bdni\b|do not intubate", r"\bdni\b|do not intub"),
        ("cmo", r"\bcmo\b|comfort", r"\bcmo\b|comfort"),
    ),
    "o2_device": (
        ("nc", r"\bnc\b|nasal cannula", r"nasal cannula"),
        ("face_tent", r"face\s*tent", r"face tent"),
        ("mask", r"face\s*mask|facemask|venti|aerosol|shovel", r"mask"),
        ("nrb", r"\bnrb\b|non-?\s?rebreather", r"non-?rebreather"),
        ("hfnc", r"hfnc|high flow", r"high flow"),
        ("niv", r"bipap|cpap", r"bipap|cpap"),
        ("room_air", r"room air|\bra\b", r"^none$|room air"),
        ("trach", r"trach", r"trach"),
    ),
    "edema": (
        ("none", r"^no$|\bno edema\b|^none", r"^none$|^absent$|^0\b"),
        ("present", r"edema|\d\s*\+|\+\s*\d|trace|pitting|anasarca", r"\d\s*(?:mm|\+)|trace|pitting|general|\bleg|\barm|sacr|scrot|both|dependent|\+"),
    ),
}


def _finding_states(concept: str, text: str, column: int) -> set[str]:
    vocab = _FINDING_VOCAB.get(concept, ())
    return {name for name, *pats in vocab if re.search(pats[column - 1], text, re.I)}


def _verify_finding(e: Entity, s: _Session, inside: list[Mapping[str, Any]]) -> Verdict:
    concept = str(e.attributes.get("concept"))
    note = f"{e.value or ''}" if concept not in _SELF_NAMED else f"{e.text} {e.value or ''}"
    if concept == "edema" and e.attributes.get("negated"):
        note = "no"
    stated = _finding_states(concept, note.lower(), 1)
    if not stated:
        return _verdict(e, s, True, f"{e.text} charted in the window", inside)
    charted: set[str] = set()
    hits: list[Mapping[str, Any]] = []
    for r in inside:
        got = _finding_states(concept, str(r.get("value") or "").lower(), 2)
        charted |= got
        if got & stated:
            hits.append(r)
    grade = e.attributes.get("grade")
    if grade:
        g = re.sub(r"\D", "", str(grade)) or ("0" if "trace" in str(grade).lower() else "")
        graded = {x for r in inside if (x := _pitting_grade(str(r.get("value") or "")))}
        if graded and g and g not in graded:
            return _verdict(e, s, False, f"{e.text}: grade {grade} not recorded (charted {', '.join(sorted(graded))}+)",
                            inside[:4])
    if concept == "edema" and charted:
        # an amount ("4 mm", "Trace") or a location other than "None" means edema was present
        if "none" in stated:
            ok = "present" not in charted
        else:
            ok = "present" in charted
        if not ok:
            return _verdict(e, s, False, f"{e.text}: note says {'no edema' if 'none' in stated else 'edema'}, "
                            f"table charts {', '.join(sorted(charted))}", inside[:4])
        return _verdict(e, s, True, f"{e.text} as charted", inside[:4])
    if concept == "bowel_sounds" and len(stated) > 1:
        stated.discard("present")  # "hypoactive BS": the qualifier is the claim
    missing = stated - charted
    if not charted:
        return _verdict(e, s, True, f"{e.text}: charted values do not use the stated terms; not contradicted", inside[:3])
    against = {o for st in missing for o in _OPPOSITES.get(concept, {}).get(st, ())}
    if missing and concept in _OPPOSITES and not (charted & against):
        return _verdict(e, s, True, f"{e.text}: {', '.join(sorted(charted))} charted; not contradicted", inside[:3])
    if missing:
        return _verdict(e, s, False, f"{e.text}: note says {', '.join(sorted(missing))}; table charts "
                        f"{', '.join(sorted(charted))}", inside[:4])
    return _verdict(e, s, True, f"{e.text}: {', '.join(sorted(stated))} charted in the window", hits)


#: States that exclude each other, for concepts where several can be charted at once
#: (a sedated patient may still "arouse to voice"); single-valued concepts (rhythm,
#: orientation) are contradicted by any other charted state.
_OPPOSITES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "code_status": {"full": ("dnr", "dni", "cmo"), "dnr": ("full",), "dni": ("full",), "cmo": ("full",)},
    "consciousness": {"alert": ("unresponsive", "sedated", "lethargic", "pain"), "unresponsive": ("alert", "voice"),
                      "voice": ("unresponsive",), "lethargic": ("alert",), "sedated": ("alert",),
                      "pain": ("alert",), "stimulation": ("alert",)},
    "lung_sounds": {"clear": ("crackles", "rhonchi", "wheezes", "coarse"), "crackles": ("clear",),
                    "rhonchi": ("clear",), "wheezes": ("clear",), "coarse": ("clear",), "diminished": ("clear",)},
    "abdomen": {"soft": ("firm",), "firm": ("soft",), "distended": ("nondistended",),
                "nondistended": ("distended",), "tender": (), "obese": (), "open": ()},
    "bowel_sounds": {"present": ("absent",), "absent": ("present", "hypoactive", "hyperactive"),
                     "hypoactive": ("hyperactive", "present"), "hyperactive": ("hypoactive", "absent")},
}

_SELF_NAMED = ("orientation", "consciousness", "heart_rhythm", "lung_sounds", "bowel_sounds", "code_status",
               "o2_device")


def _org(r: Mapping[str, Any]) -> str:
    """The organism of a microbiology row (the tools put org_name in the value column)."""
    return str((r.get("extra") or {}).get("organism") or r.get("value") or "")


def _pitting_grade(value: str) -> str | None:
    """Pitting-edema grade of a charted value: "2+" -> 2; depth "4 mm" -> 2 (2 mm per
    grade, the usual 1+ to 4+ pitting scale); "Trace" -> 0."""
    m = re.search(r"([1-4])\s*\+|\+\s*([1-4])", value)
    if m:
        return m.group(1) or m.group(2)
    m = re.search(r"(\d+)\s*mm", value, re.I)
    if m:
        return str(min(4, max(1, round(int(m.group(1)) / 2))))
    return "0" if re.search(r"trace", value, re.I) else None


def _verify_micro(e: Entity, s: _Session) -> Verdict:
    a = e.attributes
    res = s.call("View_General_Timeline", time=tool_spec(e.window) or "during admission", table="microbiologyevents")
    rows = [r for r in (res.rows if res else ()) if in_window(r, e.window)]
    spec = re.compile(str(a.get("specimen") or "."), re.I)
    rows = [r for r in rows if spec.search(str(r.get("item") or r.get("label") or ""))]
    if not rows and not e.time_text and core_window(e.window) is not None and (
            a.get("organism") or a.get("negative") or a.get("positive")):
        rows = _micro_lookback(s, e, spec)  # a stated date is the specimen's: no look-back then
    if not rows:
        every = s.call("View_General_Timeline", time="during admission", table="microbiologyevents")
        any_spec = [r for r in (every.rows if every else ()) if spec.search(str(r.get("item") or r.get("label") or ""))]
        if any_spec:
            return _verdict(e, s, False, f"{e.text} collected in this admission but not in {tool_spec(e.window)}",
                            any_spec[:4])
        return _verdict(e, s, False, f"no {a.get('specimen')} culture in this admission", (), missing=True)
    orgs = [r for r in rows if _org(r)]
    if a.get("organism"):
        opat = re.compile(str(a["organism"]), re.I)
        hit = [r for r in orgs if opat.search(_org(r))]
        if not hit:
            grown = sorted({_org(r) for r in orgs})
            return _verdict(e, s, False, f"{e.text}: {a.get('organism_text')} not grown"
                            + (f" (grew {', '.join(grown[:3])})" if grown else " (no growth recorded)"), rows[:4],
                            missing=not orgs)
        if a.get("sensitivities") or a.get("pan_sensitive"):
            ok, why, ev = check_susceptibilities(hit, [tuple(c) for c in a.get("sensitivities") or ()],
                                                 bool(a.get("pan_sensitive")))
            if not ok:
                return _verdict(e, s, False, f"{e.text}: {why}", ev)
            return _verdict(e, s, True, f"{e.text}: {a.get('organism_text')} {why}", ev or hit)
        elif a.get("antibiotics"):
            want = str(a.get("susceptibility") or "S")
            for ab in a["antibiotics"]:
                ab_rows = [r for r in hit if ab[:6] in str((r.get("extra") or {}).get("antibiotic") or "").lower()]
                if ab_rows and not any(str(r["extra"].get("interpretation") or "").upper().startswith(want)
                                       for r in ab_rows):
                    return _verdict(e, s, False, f"{e.text}: {ab} not {'resistant' if want == 'R' else 'sensitive'}",
                                    ab_rows[:4])
        return _verdict(e, s, True, f"{e.text} grew {a.get('organism_text')}", hit)
    if a.get("positive") and not orgs:
        return _verdict(e, s, False, f"{e.text} stated positive, nothing grew", rows[:4])
    if a.get("negative") and orgs:
        return _verdict(e, s, False, f"{e.text} stated negative, grew {', '.join(sorted({_org(r) for r in orgs})[:3])}",
                        orgs[:4])
    return _verdict(e, s, True, f"{e.text} collected in the window", rows)


#: a culture result is reported days after the specimen was drawn: a progress note's
#: "sputum grew E. coli" / "BCx NGTD" may be about a specimen up to this many days before its day
MICRO_LOOKBACK_DAYS = 4


def _micro_lookback(s: _Session, e: Entity, spec: re.Pattern[str]) -> list[Mapping[str, Any]]:
    ws = _t(e.window.start) if e.window else None
    if ws is None or e.window is None:
        return []
    back = TimeSpan((ws - timedelta(days=MICRO_LOOKBACK_DAYS)).strftime("%Y-%m-%d %H:%M:%S"), e.window.end)
    res = s.call("View_General_Timeline", time=tool_spec(back), table="microbiologyevents")
    return [r for r in (res.rows if res else ()) if in_window(r, back)
            and spec.search(str(r.get("item") or r.get("label") or ""))]


_DX_ABBREV = {"chf": "congestive heart failure", "aki": "acute kidney failure", "arf": "acute kidney failure",
              "uti": "urinary tract infection", "pna": "pneumonia", "afib": "atrial fibrillation",
              "dm": "diabetes mellitus", "htn": "hypertension", "cad": "coronary atherosclerosis",
              "copd": "chronic obstructive pulmonary disease", "gib": "gastrointestinal hemorrhage",
              "ugib": "gastrointestinal hemorrhage", "esrd": "end stage renal disease", "ckd": "chronic kidney disease",
              "dvt": "deep vein thrombosis", "pe": "pulmonary embolism", "mi": "myocardial infarction",
              "nstemi": "subendocardial infarction", "stemi": "acute myocardial infarction",
              "ards": "acute respiratory distress", "egd": "esophagogastroduodenoscopy",
              "peg": "percutaneous endoscopic gastrostomy", "para": "percutaneous abdominal drainage",
              "paracentesis": "percutaneous abdominal drainage", "cvl": "venous catheter", "picc": "venous catheter",
              "central line": "venous catheter", "central venous catheter": "venous catheter",
              "variceal": "varices", "hemorrhage": "bleeding", "trach": "tracheostomy", "hd": "hemodialysis", "sbo": "intestinal obstruction", "etoh": "alcohol",
              "hcv": "hepatitis c", "osa": "obstructive sleep apnea", "cva": "cerebral infarction"}


def _verify_diagnosis(e: Entity, s: _Session) -> Verdict:
    text = e.text.lower()
    for k, v in _DX_ABBREV.items():
        text = re.sub(rf"\b{k}\b", v, text)
    res = s.call("Lexical_Search", query=text[:100], k=25)
    rows = [r for r in (res.rows if res else ()) if r.get("table") in ("diagnoses_icd", "procedures_icd")]
    if not rows:
        return _verdict(e, s, True, "no ICD title resembles this diagnosis; not judged", ())
    best = max(float(r.get("score") or 0) for r in rows)
    if best < 0.55:
        return _verdict(e, s, True, "no close ICD title; not judged", ())
    close = [r for r in rows if float(r.get("score") or 0) >= max(0.55, best - 0.35)]
    # has_records is per patient; a code billed on another admission is not this one's
    billed: list[Mapping[str, Any]] = []
    for r in [r for r in close if r.get("has_records")][:5]:
        got = s.call("Get_Item_Status_History", item=str(r["key"]), time="")
        if got is not None and got.rows:
            billed += list(got.rows[:1])
            break
    if billed:
        return _verdict(e, s, True, f"billed this admission: {billed[0].get('label')}", billed)
    return _verdict(e, s, False, f"no billed code of this admission resembles {e.text!r} (closest title: "
                    f"{close[0]['label']})", (), missing=True)


# --- the stage -----------------------------------------------------------------------------------------------

def _same_claim(e: Entity, c: Entity) -> bool:
    keys = ("concept", "value", "min", "max", "systolic", "criterion", "negated", "direction", "dose", "organism",
            "words", "action", "drugs", "units", "rate", "series")
    return (e.kind == c.kind and e.text.lower() == c.text.lower()
            and all(e.attributes.get(k) == c.attributes.get(k) for k in keys))


def _from_cache(e: Entity, cache: Sequence[CacheEntry]) -> Verdict | None:
    for entry in related_entries(e, cache):
        c = entry.entity
        same_group = e.group is not None and e.group == c.group
        same_item = bool(set(e.item_keys) & set(c.item_keys)) and e.window == c.window
        same_state = (e.kind == "interpretation" and e.window == c.window
                      and e.attributes.get("criterion") == c.attributes.get("criterion"))
        if (same_group or same_item or same_state) and _same_claim(e, c):
            v = entry.verdict
            return Verdict(e.entity_id, v.label, v.inconsistency_type, f"from the validation cache: {v.reason}",
                           v.evidence_row_ids, (), True)
    return None


def verify_entity(ctx: NoteContext, env: StageEnv, entity: Entity, cache: tuple[CacheEntry, ...]) -> Verdict:
    """Stage 6 of the offline inspector: every rule family above."""
    cached = _from_cache(entity, cache)
    if cached is not None:
        return cached
    s = _Session(env.toolset)
    kind = entity.kind
    if kind == "interpretation":
        return _verify_interpretation(entity, s, ctx)
    if kind == "trend":
        return _with_origin(entity, s, ctx) or _verify_trend(entity, s, ctx)
    if kind in ("measurement", "range") or (kind == "output" and any(k in entity.attributes for k in _NUMERIC_KEYS)):
        if kind == "output" and entity.attributes.get("per_hour"):
            return _verify_event(entity, s)
        return _with_origin(entity, s, ctx) or _with_reference(entity, s, ctx, _verify_numbers(entity, s))
    if kind in ("medication", "infusion"):
        return _verify_medication(entity, s)
    if kind == "microbiology":
        return _verify_micro(entity, s)
    if kind == "diagnosis":
        return _verify_diagnosis(entity, s)
    if kind == "finding" and entity.attributes.get("concept") == DATA_CONCEPT:
        ok, reason, rows = judge_data_finding(entity, _all_rows(s, entity)[0])
        return _verdict(entity, s, ok is not False, reason if ok is not None else f"{reason}; not contradicted", rows)
    return _verify_event(entity, s)


def verify_surface(ctx: NoteContext, env: StageEnv, entity: Entity, cache: tuple[CacheEntry, ...]) -> Verdict:
    """The surface-level baseline: explicit values and times only.

    Numbers are compared with numeric tolerance in the default (or explicit) window;
    everything else — interpretations, trend words, orders, events — is checked for the
    existence of an aligned record in the window, with no criterion, trend, dose, route,
    duration, organism or interval reasoning. Entities the extractor could not align are
    reported missing (no item, no record).
    """
    s = _Session(env.toolset)
    a = entity.attributes
    if entity.kind in ("measurement", "range", "trend", "output") and any(k in a for k in _NUMERIC_KEYS):
        return _verify_numbers(entity, s)
    if entity.kind == "diagnosis":
        return _verify_diagnosis(entity, s)
    if entity.kind == "interpretation" or not entity.item_keys:
        # surface matching aligns the words themselves: "afebrile" -> Lexical_Search
        res = s.call("Lexical_Search", query=entity.text, k=5, patient_only=True)
        keys = [r["key"] for r in (res.rows if res else ()) if float(r.get("score") or 0) >= 0.5][:2]
        if not keys:
            return _verdict(e=entity, s=s, ok=False, reason=f"no patient item matches {entity.text!r}", missing=True)
        inside: list[Mapping[str, Any]] = []
        for k in keys:
            inside += s.rows(k, entity.window)[0]
        return _verdict(entity, s, bool(inside), f"{entity.text}: {'a' if inside else 'no'} record in the window",
                        inside, missing=not inside)
    inside, _ = _all_rows(s, entity)
    return _verdict(entity, s, bool(inside), f"{entity.text}: {'a' if inside else 'no'} record in the window",
                    inside, missing=not inside)
