"""Changes stated with their origin: "down to 1.1 from 2.3", "rose from 2.0 to 4.3", and a setting's
change with an arrow and a clock time ("PEEP decreased 8 -> 5 at 1400", "FiO2 weaned 60 -> 40%").

The claim (:data:`STATED_ORIGIN`, one of the trend rules): the new value is recorded in the
window (for a setting a clinician changes, on a progress or nursing note's own day), the origin
is one of the values recorded right before it, the direction word agrees with new - origin, and
a clock time told with the change lies between the last old and the first new charting, give
or take the clock tolerance. Values are put on the item's scale first (FiO2 60 % is 0.6).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.mention import concept_flags
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import num
from ehrlib.pipeline.offline.verification.item_scale import statement_scale
from ehrlib.pipeline.offline.verification.session import Case, Session, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, tolerance_of
from ehrlib.pipeline.offline.verification.trendwords import StatedOrigin, direction_of, parse_origin
from ehrlib.pipeline.offline.verification.values import value_matches
from ehrlib.pipeline.offline.verification.windows import core_window, in_window, parse_time, tool_spec, widened_back
from ehrlib.pipeline.records import Verdict

__all__ = ["STATED_ORIGIN", "changed_at", "numeric_rows"]

Rows = list[Mapping[str, Any]]
#: settings a clinician changes (ventilator, oxygen): a change told in a progress note is its day's
_SETTINGS = frozenset(concept_flags().get("setting_concepts", ()))


def numeric_rows(s: Session, keys: Sequence[str], window: TimeSpan | None) -> Rows:
    """The items' numeric rows of the window, in time order (the trend tool's)."""
    rows: Rows = []
    for key in keys[:4]:
        res = s.call("Analyze_Value_Trend", item=key, time=tool_spec(window))
        if res is None:
            continue
        rows += [r for r in res.rows if in_window(r, window) and r.get("valuenum") is not None]
    return sorted(rows, key=lambda r: str(r.get("time")))


def _stated_origin(c: Case) -> Verdict | None:
    """"down to 1.1 from 2.3" (:mod:`.trendwords`): the new value is recorded in the window,
    the origin is among the three values recorded before it (three-day look-back, the
    concept's tolerance; a discharge summary's origin may be any earlier value of the
    stay), and the direction word agrees with new - origin. None when the statement has
    no stated origin or the new value is not recorded (the value check then decides).
    """
    e, r = c.entity, c.claim_as(NumericClaim).reading
    line = c.line()
    if line is None or e.span is None:
        return None
    origin = parse_origin(line[e.span[0]:e.span[0] + 90])
    stated = {float(v) for v in (r.value, r.max, r.min) if v is not None}
    keys = c.keys()
    # the statement of the new value, or of the origin with the change written after it ("PEEP decreased 8 -> 5")
    if origin is None or not ({origin.new, origin.origin} & stated) or not keys:
        return None
    concept = concept_of(e.claim)
    window = e.window
    ds = c.ctx.note_type == "discharge_summary"
    rows = numeric_rows(c.session, keys, _look_back(window, c.ctx.admittime if ds else None))
    n = c.claim_as(NumericClaim)
    onto, _, factor = statement_scale([("value", origin.new, None)], n.unit, concept, rows)  # FiO2 60 -> 0.6
    tol = tolerance_of(concept) * factor
    origin = StatedOrigin(origin.word, onto(origin.new), onto(origin.origin), origin.clock)
    # a setting's change in a progress or nursing note is an act of the note's own day, not of the next
    core = core_window(window) if concept is not None and concept.cid in _SETTINGS and not ds else None
    hits = [r for r in rows if value_matches(origin.new, float(r["valuenum"]), tol) and in_window(r, core or window)]
    if not hits:
        return None
    claimed = direction_of(origin.word, concept.lower_is_worse if concept else None)
    actual = "rising" if origin.new > origin.origin else "falling" if origin.new < origin.origin else "stable"
    if claimed is not None and claimed != actual:
        return verdict(c, False, f"{e.text}: stated {origin.word} to {num(origin.new)} from {num(origin.origin)}, "
                       f"which is {actual}", hits[:2])
    for hit in hits:
        t_hit = parse_time(hit.get("time"))
        before = [r for r in rows if str(r.get("time")) < str(hit.get("time"))
                  and (ds or t_hit is None or (rt := parse_time(r.get("time"))) is None
                       or t_hit - rt <= timedelta(days=3))]
        if not ds:
            before = before[-3:]  # a progress note's "from" is the previous draw; a summary's spans the stay
        prior = [r for r in before if value_matches(origin.origin, float(r["valuenum"]), tol)]
        if prior and origin.clock is not None and not changed_at(origin.clock, prior[-1], hit):
            timed = f"{str(prior[-1].get('time'))[11:16]}-{str(hit.get('time'))[11:16]}"
            return verdict(c, False, f"{e.text}: {num(origin.origin)} -> {num(origin.new)} charted between {timed}, "
                           f"not at {origin.clock}", [prior[-1], hit], deciding=[prior[-1], hit])
        if prior:
            return verdict(c, True, f"{e.text}: {num(origin.origin)} -> {num(origin.new)} recorded in order",
                           [prior[-1], hit], deciding=[prior[-1], hit])
    prev = [float(r["valuenum"]) for r in rows if str(r.get("time")) < str(hits[0].get("time"))][-3:]
    return verdict(c, False, f"{e.text}: {num(origin.new)} recorded, but {num(origin.origin)} is not among the values "
                   f"before it ({', '.join(f'{num(x)}' for x in prev) or 'none'})", hits[:2])


def _look_back(window: TimeSpan | None, admitted: str | None) -> TimeSpan | None:
    """Where a stated origin is looked for: three days before the window, or, for a summary
    (``admitted``: its admission time), back to the admission: "bilirubin climbed from 17.1
    to a peak of 23" may start on the first day of a long stay.
    """
    back = widened_back(window, 3)
    start, adm = parse_time(back.start) if back else None, parse_time(admitted)
    if back is None or start is None or adm is None or adm >= start:
        return back
    return TimeSpan(adm.strftime("%Y-%m-%d %H:%M:%S"), back.end)


def changed_at(clock: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether a change told at ``clock`` ("decreased 8 -> 5 at 1400") lies between the last row of
    the old value and the first of the new one, give or take the clock tolerance (two hours).
    """
    t0, t1 = parse_time(before.get("time")), parse_time(after.get("time"))
    if t0 is None or t1 is None:
        return True
    slack = timedelta(hours=2)
    for day in {t0.date(), t1.date()}:
        moment = datetime.combine(day, datetime.min.time()).replace(hour=int(clock[:2]), minute=int(clock[2:]))
        if t0 - slack <= moment <= t1 + slack:
            return True
    return False


STATED_ORIGIN = Rule("trends.stated_origin", "A change stated with its origin (X to Y, from X to Y, X -> Y) claims "
                     "the new value, the origin charted shortly before it, a direction agreeing with their difference "
                     "and, when told at a clock time, the change at that time.", _stated_origin,
                     ("trend", "measurement", "range", "output"))
