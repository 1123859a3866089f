"""Event rules: procedures, outputs without a value, findings, and anything else that is
claimed by a record existing in the window.

*Missing* when the item has no record in the admission at all; *contradiction* when
records exist only on other days (a time error). Only a procedure or device leaves a dated
record of its own: a finding's absence from its one mapped item is not judged. A procedure's clock time dates the start
of its record (or the end, for a removal; :mod:`.clocktime`), a stated side must match the
charted location, and a procedure with no bedside record may be confirmed by a billed code.
"""
from __future__ import annotations

import functools
import re
from datetime import timedelta

from ehrlib.pipeline.claims import ProcedureClaim
from ehrlib.pipeline.offline.line_sites import site_keys, site_rows
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification import findings
from ehrlib.pipeline.offline.verification.absence import dated_after_note
from ehrlib.pipeline.offline.verification.clocktime import edge_matches, parse_clock
from ehrlib.pipeline.offline.verification.deciding import at_row, nearest_in_time
from ehrlib.pipeline.offline.verification.diagnoses import billed_match
from ehrlib.pipeline.offline.verification.event_times import bounds_dwell, stated_day_part
from ehrlib.pipeline.offline.verification.event_times import ongoing_state as _ongoing_state
from ehrlib.pipeline.offline.verification.pauses import undated_pause
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import parse_time, row_interval, tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "CHAIN", "stated_day_part"]


def _procedure(c: Case) -> bool:
    return c.entity.kind == "procedure"


def _negated_absent(c: Case) -> Verdict | None:
    inside, every = c.item_rows()
    if c.entity.claim.negated and _procedure(c) and not inside:
        return verdict(c, True, f"no {c.entity.text} in the window, as stated", every[:2])
    return None


def _billed_procedure(c: Case) -> Verdict | None:
    """Bedside charting may miss a procedure; the billed procedure codes may not."""
    if c.item_rows()[1] or not _procedure(c):
        return None
    billed = billed_match(c)
    return billed if billed.label == "consistent" and billed.evidence_row_ids else None


def _unshown_device(c: Case) -> bool:
    """A procedure or device only the catalogue names (the patient has no item of it),
    stated outside a list of the admission's procedures: bedside charting of devices and
    procedures is sparse and differs by system ("Multi Lumen", "Gastric Tube" are charted
    for some stays, not others), so only the procedure list, which billing codes every
    admission, can show that one never happened.
    """
    e = c.entity
    return _procedure(c) and e.source == "ontology" and e.claim.section != "procedures"


def _no_record_in_window(c: Case) -> Verdict | None:
    e = c.entity
    inside, every = c.item_rows()
    if not inside and e.kind == "finding":
        return unverified(c, f"{e.text} not judged: an observation or standing state (stool, a device worn, code "
                          "status) is charted under many items and when reviewed, not when it holds, so no row of "
                          f"its item in {tool_spec(e.window) or 'the admission'} shows nothing", every[:2])
    if not inside and (later := dated_after_note(c, stated_day_part(c))) is not None:
        return unverified(c, later, every[:2])
    if not every and _unshown_device(c):
        return unverified(c, f"{e.text} not judged: the patient has no charted item of it, and outside the list "
                          f"of procedures its absence from bedside charting shows nothing")
    if not every:
        return verdict(c, False, f"no record of {e.text} in this admission", (), missing=True)
    if not inside:
        near = nearest_in_time(every, e.window)
        return verdict(c, False, f"{e.text} recorded in this admission but not in {tool_spec(e.window)}; nearest "
                       f"{at_row(near[0])}", every[:4], deciding=near)
    return None


@functools.cache
def _edge_words(which: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(terms()["procedure_edges"][which]) + r")\b", re.I)


def _procedure_clock(c: Case) -> Verdict | None:
    """"CVL placed ~9pm" / "A-line pulled at 0300" / "thoracentesis at 1500": a record of
    the item starts (or, for a removal, ends) at that clock time (.clocktime tolerance;
    each row is its own event, lines are not merged). A bare time on a long-lived device
    (a line's whole dwell) is not judged.
    """
    e = c.entity
    if not _procedure(c) or c.entity.claim.negated:
        return None
    clock = parse_clock(e.time_text)
    if clock is None:
        return None
    said = f"{e.text} {c.claim_as(ProcedureClaim).action or ''}"
    # the procedure records (start/end columns), not observations charted along a line's dwell
    course = [r for k in c.keys() if k.startswith("procedureevents") for r in c.session.rows(k, None)[0]]
    if not course:
        return None
    point = all((iv := row_interval(r)) is not None and iv[1] - iv[0] <= timedelta(hours=1) for r in course)
    edge = "end" if _edge_words("removal").search(said) else "start" if (
        _edge_words("placement").search(said) or point) else None
    if edge is None:
        return None
    ok, evidence, detail = edge_matches(clock, e.window, course, edge, merge=False)
    if ok is False:
        return verdict(c, False, f"{e.text}: stated {e.time_text} (±{clock.tolerance.seconds // 3600} h), "
                       f"{detail}", evidence)
    return None


def _procedure_day_part(c: Case) -> Verdict | None:
    """"TTE this AM", "EGD yesterday morning": a procedure dated by a part of the day claims
    a record starting in that part of that day; records that all start at other times of
    the admission are a time error. A removal ("cordis pulled early this AM") dates the
    record's end, as in the clock rule.
    """
    e = c.entity
    if not _procedure(c) or e.claim.negated or e.window is None:
        return None
    part = stated_day_part(c)
    if part is None:
        return None
    edge = 1 if _edge_words("removal").search(f"{e.text} {c.claim_as(ProcedureClaim).action or ''}") else 0
    course = [(iv[edge], r) for k in c.keys() if k.startswith("procedureevents") for r in c.session.rows(k, None)[0]
              if (iv := row_interval(r)) is not None]
    if not course or any(part[0] <= t <= part[1] for t, _ in course):
        return None
    starts = ", ".join(sorted({t.strftime("%m-%d %H:%M") for t, _ in course})[:3])
    return verdict(c, False, f"{e.text}: stated {e.time_text}, recorded {starts}", [r for _, r in course][:4],
                   deciding=nearest_in_time([r for _, r in course], e.window))


def _procedure_edge_day(c: Case) -> Verdict | None:
    """"extubated on hospital day 2", "intubated on arrival": a placement or removal dated by
    a day claims that edge of the device's dwell (its start or end; a point event's time)
    in the statement's window, not merely a dwell that spans it.
    """
    e = c.entity
    if not _procedure(c) or e.claim.negated or not e.time_text or parse_clock(e.time_text) is not None:
        return None
    if bounds_dwell(c):
        return None  # "intubated until 11-1", "since 11-1": the date bounds the dwell, not this edge
    if _ongoing_state(c):
        return None  # "remained intubated ... extubated on HD 5": the day is the removal's, not the state's
    said = f"{e.text} {c.claim_as(ProcedureClaim).action or ''}"
    edge = 1 if _edge_words("removal").search(said) else 0 if _edge_words("placement").search(said) else None
    window = (parse_time(e.window.start), parse_time(e.window.end)) if e.window is not None else (None, None)
    if edge is None or window[0] is None or window[1] is None:
        return None
    course = [(iv, r) for k in c.keys() if k.startswith("procedureevents") for r in c.session.rows(k, None)[0]
              if (iv := row_interval(r)) is not None]
    moments = [(iv[0] if iv[1] - iv[0] <= timedelta(hours=1) else iv[edge], r) for iv, r in course]
    if not moments or any(window[0] <= t <= window[1] for t, _ in moments):
        return None
    when = ", ".join(sorted({t.strftime("%m-%d %H:%M") for t, _ in moments})[:3])
    return verdict(c, False, f"{e.text}: stated {e.time_text}, {'ended' if edge else 'started'} {when}",
                   [r for _, r in moments][:4], deciding=nearest_in_time([r for _, r in moments], e.window))


def _procedure_side(c: Case) -> Verdict | None:
    side = c.claim_as(ProcedureClaim).side
    if side not in ("r", "l") or not _procedure(c):
        return None
    located = [r for r in c.item_rows()[0] if (r.get("extra") or {}).get("location")]
    want = "right" if side == "r" else "left"
    if not located:  # a CareVue line slot charts its site as an item of its own ("INV Line#1 [Site]")
        line = c.line() or c.entity.text
        a, b = c.entity.span or (0, len(line))
        charted = [r for k in site_keys(c.entity.items, c.entity.item_keys)
                   for r in c.session.rows(k, c.entity.window)[0]]
        sites = site_rows(line[max(0, a - 25):b], line[b:b + 20], charted)
        if sites and not [r for r in sites if want in str(r.get("value")).lower()]:
            return verdict(c, False, f"{c.entity.text}: side {want} not charted at that site (charted "
                           f"{', '.join(sorted({str(r.get('value')) for r in sites}))})", sites[:4])
    if located and not [r for r in located if want in str(r["extra"]["location"]).lower()
                        or str(r["extra"]["location"]).lower().startswith(want[0] + " ")]:
        return verdict(c, False, f"{c.entity.text}: side {want} not recorded (recorded "
                       f"{', '.join(sorted({str(r['extra']['location']) for r in located}))})", located[:4])
    return None


def _negated_recorded(c: Case) -> Verdict | None:
    if not c.entity.claim.negated:
        return None
    if (pause := undated_pause(c)) is not None:
        return unverified(c, f"{c.entity.text} not judged: \"{pause}\" claims none after a moment the note does not "
                          "date, and the window's records may all precede it", c.item_rows()[0][:4])
    return verdict(c, False, f"note says no {c.entity.text}, but it is recorded in the window", c.item_rows()[0][:4])


def _record_in_window(c: Case) -> Verdict | None:
    return verdict(c, True, f"{c.entity.text} recorded in the window", c.item_rows()[0])


NEGATED_ABSENT = Rule("events.negated_absent", "A procedure said not done is confirmed when the window holds no "
                      "record of it.", _negated_absent)
BILLED_PROCEDURE = Rule("events.billed_procedure", "A procedure with no bedside record in the admission is "
                        "confirmed by a billed procedure code of the admission whose title matches it.",
                        _billed_procedure)
NO_RECORD_IN_WINDOW = Rule("events.no_record_in_window", "A procedure with no record in the admission is missing, "
                           "one recorded only on other days a time error (a catalogue-only device only in the "
                           "procedure list); a finding's absence from its one item is not judged.",
                           _no_record_in_window)
PROCEDURE_CLOCK = Rule("events.procedure_clock", "A procedure stated to the hour claims a record starting (ending, "
                       "for a removal) within two hours of it; a long-lived device's bare time is not judged.",
                       _procedure_clock)
PROCEDURE_DAY_PART = Rule("events.procedure_day_part", "A procedure dated by a part of the day (this AM, yesterday "
                          "morning, overnight) claims a record starting (ending, for a removal) in that part of "
                          "that day.",
                          _procedure_day_part)
PROCEDURE_EDGE_DAY = Rule("events.procedure_edge_day", "A placement or removal dated by a day claims that edge of "
                          "the dwell (its start or end) in the statement's window, not a dwell spanning it.",
                          _procedure_edge_day)
PROCEDURE_SIDE = Rule("events.procedure_side", "A stated body side must match the location charted for the "
                      "procedure, or the charted site of a line stated with its vessel (L radial A-line).",
                      _procedure_side)
NEGATED_RECORDED = Rule("events.negated_recorded", "An event said absent is contradicted by a record of it in the "
                        "window, unless it is said absent only from an undated moment on (no further dialysis).",
                        _negated_recorded)
RECORD_IN_WINDOW = Rule("events.record_in_window", "An event claimed without further detail is confirmed by a "
                        "record of its item in the window.", _record_in_window)

CHAIN = (NEGATED_ABSENT, BILLED_PROCEDURE, NO_RECORD_IN_WINDOW, PROCEDURE_CLOCK, PROCEDURE_DAY_PART, PROCEDURE_EDGE_DAY,
         PROCEDURE_SIDE, *findings.CHAIN, NEGATED_RECORDED, RECORD_IN_WINDOW)
RULES = (NEGATED_ABSENT, BILLED_PROCEDURE, NO_RECORD_IN_WINDOW, PROCEDURE_CLOCK, PROCEDURE_DAY_PART, PROCEDURE_EDGE_DAY,
         PROCEDURE_SIDE, NEGATED_RECORDED, RECORD_IN_WINDOW)
