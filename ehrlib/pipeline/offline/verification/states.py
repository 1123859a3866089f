"""State rules: interpretations ("febrile", "hypotensive", "AKI", "afebrile").

A state holds if a row of a criterion item in the window meets Get_Clinical_Criterion's
test (delta criteria: a rise of ``rise`` within ``within_hours`` or ``ratio`` x the lowest
earlier value; rate criteria: a calendar day's urine below 0.5 mL/kg/h x 24 h); states the
shared criteria lack use the lexicon's threshold. A negated state ("afebrile") is
inconsistent when the state holds. A contradiction the records cannot decide is unverified, with the reason
(:func:`_undecided`: a negated state timed only by the whole stay, a rate state's absence, a problem heading). A
state set off right after a value ("K 5.9,
hyperkalemic") interprets that value (:mod:`.qualifiers`).
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.criteria import criterion_holds
from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import InterpretationClaim
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.stay_problems import heading_span
from ehrlib.pipeline.offline.verification.deciding import at_row, num
from ehrlib.pipeline.offline.verification.periods import said_to_last
from ehrlib.pipeline.offline.verification.qualifiers import attached_value, normal_range, state_holds_on
from ehrlib.pipeline.offline.verification.session import Case, Session, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.values import in_fahrenheit, temp_match, value_matches
from ehrlib.pipeline.offline.verification.windows import in_window, parse_time
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "CHAIN", "ATTACHED_VALUE", "LEXICON_THRESHOLD", "CLINICAL_CRITERION"]

Rows = list[Mapping[str, Any]]


def _criterion_id(c: Case) -> str:
    return c.claim_as(InterpretationClaim).criterion


def _extra(c: Case) -> Mapping[str, Any] | None:
    return load_lexicon().extra_criteria.get(_criterion_id(c))


def _criterion_rows(c: Case, state: str) -> tuple[Mapping[str, Any] | None, list[dict[str, Any]]]:
    res = c.session.call("Get_Clinical_Criterion", state=state)
    if res is None:
        return None, []
    return res.summary, [dict(r) for r in res.rows]


def _attached_value(c: Case) -> Verdict | None:
    """"K 5.9, hyperkalemic" / "plt 95 (thrombocytopenic)": None when the word stands alone
    or the value is not an item the state is judged on.
    """
    e, line = c.entity, c.line()
    if line is None or e.span is None:
        return None
    lex = load_lexicon()
    found = attached_value(line, e.span[0], lex)
    if found is None:
        return None
    crit_id, extra = _criterion_id(c), _extra(c)
    cid, value = found
    if extra is not None:
        if extra.get("concept") != cid:
            return None
        holds: bool | None = criterion_holds(str(extra["operator"]), value, float(extra["threshold"]))
        src = str(extra.get("source", ""))
    else:
        summary, tests = _criterion_rows(c, crit_id)
        concept = lex.concepts.get(cid)
        holds = state_holds_on(value, concept.items if concept else None, tests)
        src = str((summary or {}).get("source", ""))
    if holds is None:
        return None
    ok = holds == (not c.entity.claim.negated)
    what = "meets" if holds else "does not meet"
    return verdict(c, ok, f"the stated value {num(value)} it qualifies {what} {crit_id} ({src})", ())


def _lexicon_threshold(c: Case) -> Verdict | None:
    """A state the shared criteria file lacks (hypokalemia...): the lexicon's reference
    range on the concept's items, with the same negation and missing rules.
    """
    extra = _extra(c)
    if extra is None:
        return None
    crit_id, negated = _criterion_id(c), c.entity.claim.negated
    inside, every = c.item_rows()
    numeric = [r for r in inside if r.get("valuenum") is not None]
    src = extra.get("source", "")
    if not numeric:
        return verdict(c, False, f"no {extra['concept']} values in the window to judge {crit_id}", every[:2],
                       missing=True)

    def value(r: Mapping[str, Any]) -> float:
        v = float(r["valuenum"])
        return in_fahrenheit(v, r) if extra["concept"] == "temperature" else v  # thresholds in the note's units

    meeting = [r for r in numeric if criterion_holds(str(extra["operator"]), value(r), float(extra["threshold"]))]
    holds = bool(meeting)
    what = "holds" if holds else "does not hold"
    # the value furthest toward the threshold's side decides: the highest for "above", the lowest for "below"
    pick = max if str(extra["operator"]).startswith(">") else min
    extreme = pick(meeting or numeric, key=value)
    seen = f"charted {'max' if pick is max else 'min'} {num(value(extreme))} {at_row(extreme)}"
    if holds == (not negated):
        return verdict(c, True, f"{crit_id} {what} in the window as stated: {seen} ({src})", meeting or numeric[:3],
                       deciding=[extreme])
    return verdict(c, False, f"note says {'no ' if negated else ''}{crit_id}, but it {what} in the window: "
                   f"{seen} ({src})", meeting or numeric[:4], deciding=[extreme])


def _clinical_criterion(c: Case) -> Verdict | None:
    e, ctx, stated = c.entity, c.ctx, c.claim_as(InterpretationClaim).reading
    crit_id, negated = _criterion_id(c), c.entity.claim.negated
    summary, tests = _criterion_rows(c, crit_id or e.text)
    if summary is None or not tests:
        return verdict(c, True, f"no clinical criterion for {e.text!r}; not judged", ())
    kind = summary.get("kind", "threshold")
    window = e.window
    s = c.session
    if kind == "delta":
        adm = TimeSpan(ctx.admittime, window.end if window else ctx.dischtime)
        holds, rows, any_rows = _delta_holds(s, tests, summary, adm, window)
    elif kind == "rate":
        holds, rows, any_rows = _rate_holds(s, tests, window)
    else:
        holds, rows, any_rows = _threshold_holds(s, tests, window)
    if not any_rows:  # nothing to judge the state on: an interpretation claims no record exists
        return unverified(c, f"no records of the items {crit_id} is judged on in the window; not judged")
    src = summary.get("source", "")
    if kind == "delta" and not holds and not negated:
        before = _baseline_unseen(any_rows)
        if before is not None:
            return unverified(c, f"{crit_id} not judged: the stay's first value {num(before['valuenum'])} "
                              f"{at_row(before)} is already above the reference, so the baseline the rise is "
                              f"measured from lies before the record", [before])
    what = "holds" if holds else "does not hold"
    if holds == (not negated):
        # a stated value ("febrile to 101.5") must also be recorded
        if (stated.value is not None or stated.max is not None or stated.min is not None) and \
                crit_id in terms()["valued_states"]:
            vals = [float(r["valuenum"]) for r in any_rows if r.get("valuenum") is not None]
            target = float(stated.value if stated.value is not None else stated.max if stated.max is not None else 0)
            upper = float(stated.max) if stated.max is not None and stated.min is not None else None
            ok = any((upper is not None and target - 1 <= v <= upper + 1) or value_matches(target, v, 1.0)
                     or (crit_id == "fever" and temp_match(target, r)) for v, r in zip(vals, any_rows, strict=False))
            if not ok:
                return verdict(c, False, f"{crit_id} holds but the stated value {num(target)} is not recorded",
                               any_rows[:4])
        return verdict(c, True, f"{crit_id} {what} in the window as stated ({src})", rows or any_rows[:4])
    why = _undecided(c, crit_id, kind, negated)
    if why is not None:
        return unverified(c, f"note says {'no ' if negated else ''}{crit_id}, but it {what} in the window; {why} "
                          f"({src})", rows or any_rows[:4])
    return verdict(c, False, f"note says {'no ' if negated else ''}{crit_id}, but it {what} in the window "
                   f"({src})", rows or any_rows[:4])


def _undecided(c: Case, crit_id: str, kind: str, negated: bool) -> str | None:
    """Why the window's records cannot refute the statement, or None when they can.

    A negated state timed only by the whole stay, not said to last, describes one moment the
    note does not name; a rate state (oliguria) holds over hours, so a day's total cannot show
    that no stretch of it was below the rate; a state named as a problem heading ("# Hypoxemic
    respiratory failure: ...") names the problem being treated, which treatment may have corrected.
    """
    e, line = c.entity, c.line() or ""
    if negated and e.time_basis == "hospitalization" and not said_to_last(
            c, load_data("finding_states.yaml")["whole_period"]["note"]):
        return ("its time resolves only to the whole stay and it does not say it lasted, so a row elsewhere in the "
                "stay cannot show it false at the moment described")
    if negated:
        return None
    if kind == "rate":
        return f"{crit_id} is a rate over hours, and a day's total cannot show that no stretch of it was below the rate"
    title = heading_span(line)
    if title is not None and e.span is not None and title[0] <= e.span[0] < title[1]:
        return "a problem heading names the problem being treated, which treatment may already have corrected"
    return None


def _baseline_unseen(rows: Rows) -> Mapping[str, Any] | None:
    """The stay's first row of a rise criterion when it is already above its concept's
    adult reference interval, else None.

    A rise criterion (AKI: creatinine up 0.3 in 48 h, or 1.5 times baseline) is measured
    from a baseline. When the first value the stay charted is already abnormal, the rise
    may have happened before admission, so the absence of a rise inside the record does
    not show the state is absent.
    """
    timed = sorted((r for r in rows if r.get("valuenum") is not None), key=lambda r: str(r.get("time")))
    if not timed:
        return None
    first = timed[0]
    lex = load_lexicon()
    label = str(first.get("label") or "")
    cid = next((k for k, con in lex.concepts.items() if con.items is not None and con.items.search(label)
                and str(first.get("table")) in con.tables), None)
    rng = normal_range(cid, float(first["valuenum"])) if cid is not None else None
    return first if rng is not None and float(first["valuenum"]) > rng[1] else None


def _test_rows(s: Session, test: Mapping[str, Any], window: TimeSpan | None) -> Rows:
    out: Rows = []
    for item in (test.get("items") or [])[:6]:
        if not item.get("has_records", True):
            continue
        inside, _ = s.rows(str(item["key"]), window)
        out += [r for r in inside if r.get("valuenum") is not None]
    return out


def _threshold_holds(s: Session, tests: list[dict[str, Any]], window: TimeSpan | None) -> tuple[bool, Rows, Rows]:
    meeting: Rows = []
    every: Rows = []
    for test in tests:
        if test.get("applies_to_patient") is False:
            continue
        rows = _test_rows(s, test, window)
        every += rows
        meeting += [r for r in rows if criterion_holds(str(test["operator"]), float(r["valuenum"]),
                                                       float(test["threshold"]))]
    return bool(meeting), meeting, every


def _delta_holds(s: Session, tests: list[dict[str, Any]], summary: Mapping[str, Any], span: TimeSpan,
                 window: TimeSpan | None) -> tuple[bool, Rows, Rows]:
    rise = float(summary.get("rise") or 0.3)
    hours = float(summary.get("within_hours") or 48)
    ratio = float(summary.get("ratio") or 1.5)
    rows = sorted(_test_rows(s, tests[0], span), key=lambda r: str(r.get("time")))
    for i, r in enumerate(rows):
        ti, vi = parse_time(r.get("time")), float(r["valuenum"])
        if window is not None and not in_window(r, TimeSpan(None, window.end)):
            continue
        for p in rows[:i]:
            tp, vp = parse_time(p.get("time")), float(p["valuenum"])
            if ti and tp and (ti - tp) <= timedelta(hours=hours) and vi - vp >= rise - 1e-9:
                return True, [p, r], rows
        earlier = [float(p["valuenum"]) for p in rows[:i]]
        if earlier and vi >= ratio * min(earlier) - 1e-9:
            return True, [r], rows
    return False, [], rows


#: the fewest hours of a calendar day a rate criterion is judged on
_MIN_RATE_HOURS = 6.0


def _hours_in(day: str, window: TimeSpan | None) -> float:
    """Hours of calendar ``day`` (``YYYY-MM-DD``) inside ``window`` (24 when it is open)."""
    start = parse_time(day)
    if start is None:
        return 24.0
    end = start + timedelta(days=1)
    lo = max(start, parse_time(window.start) or start) if window else start
    hi = min(end, parse_time(window.end) or end) if window else end
    return max(0.0, (hi - lo).total_seconds() / 3600)


def _rate_holds(s: Session, tests: list[dict[str, Any]], window: TimeSpan | None) -> tuple[bool, Rows, Rows]:
    rows = _test_rows(s, tests[0], window)
    by_day: dict[str, float] = {}
    for r in rows:
        by_day[str(r.get("time"))[:10]] = by_day.get(str(r.get("time"))[:10], 0.0) + float(r["valuenum"])
    # a day the window covers only in part (it ends at the note's time) is held to the rate over
    # the hours it covers; a few hours' charting says nothing of a daily rate
    hours = {d: _hours_in(d, window) for d in by_day}
    low = [d for d, total in by_day.items() if hours[d] >= _MIN_RATE_HOURS and total < 0.5 * 70 * hours[d]]
    return bool(low), [r for r in rows if str(r.get("time"))[:10] in low][:4], rows


ATTACHED_VALUE = Rule("states.attached_value", "A state word set off right after a value (K 5.9, hyperkalemic) "
                      "interprets that value, judged with the state's own threshold rather than the day's "
                      "records.", _attached_value, ("interpretation",))
LEXICON_THRESHOLD = Rule("states.lexicon_threshold", "A state defined by a reference limit on one concept "
                         "(hypokalemia) holds when a charted value in the window crosses it; a negated state claims "
                         "that none does.", _lexicon_threshold, ("interpretation",))
CLINICAL_CRITERION = Rule("states.clinical_criterion", "A clinical state holds when its published criterion "
                          "(threshold, rise over time, or daily rate) is met by the window's records; a negated state "
                          "claims it is not, and a value given with the state must itself be charted.",
                          _clinical_criterion, ("interpretation",))

CHAIN = (ATTACHED_VALUE, LEXICON_THRESHOLD, CLINICAL_CRITERION)
RULES = CHAIN
