"""Microbiology rules: specimen, organism (regex on ``org_name``), susceptibilities.

A culture result is reported days after the specimen was drawn, so an undated result in a
progress note may be about a specimen up to :data:`MICRO_LOOKBACK_DAYS` before its day (a
culture still pending, :data:`PENDING_LOOKBACK_DAYS`). A susceptibility statement restates its
culture's date and organism: when those are wrong, the culture's own statement says so, and
the susceptibility is left unverified rather than alarmed a second time.
Susceptibility claims (parsed by :mod:`ehrlib.pipeline.offline.microsens`) are checked on
the organism's rows: "S" is met by an S row of that antibiotic (first six letters of the
generic name), "R" by R; an antibiotic never tested is not judged; "pan-sensitive" is
contradicted by any R row but those of the resistances the report states with it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.pipeline.claims import MicrobiologyClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import at_row, nearest_in_time
from ehrlib.pipeline.offline.verification.events import stated_day_part
from ehrlib.pipeline.offline.verification.session import Case, decide, unverified, verdict
from ehrlib.pipeline.offline.verification.windows import core_window, in_window, parse_time, tool_spec, widened_back
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "CHAIN", "MICRO_LOOKBACK_DAYS", "PENDING_LOOKBACK_DAYS", "check_susceptibilities"]

#: a culture result is reported days after the specimen was drawn: a progress note's
#: "sputum grew E. coli" / "BCx NGTD" may be about a specimen up to this many days before its day
MICRO_LOOKBACK_DAYS = 4
#: a culture still "pending" has had no first read yet, which comes within about a day of
#: collection: an undated pending culture may have been drawn on the day before the note's day
PENDING_LOOKBACK_DAYS = 1

Rows = list[Mapping[str, Any]]
_K = ("microbiology",)


def _org(r: Mapping[str, Any]) -> str:
    """The organism of a microbiology row (the tools put org_name in the value column)."""
    return str((r.get("extra") or {}).get("organism") or r.get("value") or "")


def _antibiotic(row: Mapping[str, Any]) -> str:
    return str((row.get("extra") or {}).get("antibiotic") or "").lower()


def _interpretation(row: Mapping[str, Any]) -> str:
    return str((row.get("extra") or {}).get("interpretation") or "").upper()[:1]


def _same_drug(ab: str, row: Mapping[str, Any]) -> bool:
    """Whether a row tests the antibiotic (first six letters: MIMIC writes "PIPERACILLIN/TAZO")."""
    return ab[:6] in _antibiotic(row) or _antibiotic(row)[:6] in ab


def check_susceptibilities(rows: Sequence[Mapping[str, Any]], claims: Sequence[tuple[str, str]], pan: bool
                           ) -> tuple[bool, str, Rows]:
    """(consistent, reason, evidence) of the claims against one organism's rows."""
    tested = [r for r in rows if _antibiotic(r)]
    if pan:
        # "pan-sensitive (cefazolin R)": the resistances the report states are its exceptions,
        # each judged as its own statement
        excepted = [ab for ab, level in claims if level == "R"]
        claims = [(ab, level) for ab, level in claims if level != "R"]
        resistant = [r for r in tested if _interpretation(r) == "R" and not any(_same_drug(ab, r) for ab in excepted)]
        if resistant:
            names = sorted({_antibiotic(r) for r in resistant})
            return False, f"stated pan-sensitive, resistant to {', '.join(names[:4])}", resistant[:4]
    for ab, level in claims:
        ab_rows = [r for r in tested if _same_drug(ab, r)]
        if ab_rows and not any(_interpretation(r) == level for r in ab_rows):
            got = sorted({_interpretation(r) for r in ab_rows})
            return False, f"{ab}: stated {level}, recorded {'/'.join(got)}", ab_rows[:4]
    if not tested and (claims or pan):
        return True, "no susceptibility rows recorded; not judged", []
    return True, "susceptibilities as stated", tested[:4]


def _culture(c: Case) -> MicrobiologyClaim:
    return c.claim_as(MicrobiologyClaim)


def _specimen(c: Case) -> re.Pattern[str]:
    return re.compile(_culture(c).specimen or ".", re.I)


def _timeline(c: Case, time: str) -> Rows:
    res = c.session.call("View_General_Timeline", time=time, table="microbiologyevents")
    return list(res.rows) if res else []


def _so_far(c: Case, spec: re.Pattern[str]) -> Rows:
    """Every culture of the specimen in the admission up to the statement's window end
    ("all blood cultures no growth to date" is about each of them, not the note's day).
    """
    end = parse_time(c.entity.window.end) if c.entity.window else None
    return [r for r in _timeline(c, "during admission") if spec.search(str(r.get("item") or r.get("label") or ""))
            and (end is None or (t := parse_time(r.get("time"))) is None or t <= end)]


def _specimen_in_window(c: Case) -> Verdict | None:
    e, a, spec = c.entity, _culture(c), _specimen(c)
    if a.every and (a.negative or a.positive):
        rows = _so_far(c, spec)
    else:
        rows = [r for r in _timeline(c, tool_spec(e.window) or "during admission") if in_window(r, e.window)]
        rows = [r for r in rows if spec.search(str(r.get("item") or r.get("label") or ""))]
    if not rows and not e.time_text and core_window(e.window) is not None:
        # a stated date is the specimen's: no look-back then
        if a.organism or a.negative or a.positive:
            rows = _lookback(c, spec, MICRO_LOOKBACK_DAYS)
        elif a.pending:
            rows = _lookback(c, spec, PENDING_LOOKBACK_DAYS)
    if not rows:
        any_spec = [r for r in _timeline(c, "during admission") if spec.search(str(r.get("item") or r.get("label")
                                                                                   or ""))]
        if any_spec and _susceptibility_statement(c):
            return unverified(c, f"{e.text}: a susceptibility of a culture drawn on another day than "
                              f"{tool_spec(e.window)}; the date is the culture statement's to judge", any_spec[:2])
        if any_spec:
            near = nearest_in_time(any_spec, e.window)
            return verdict(c, False, f"{e.text} collected in this admission but not in {tool_spec(e.window)}; "
                           f"nearest {at_row(near[0])}", any_spec[:4], deciding=near)
        bedside = _bedside_collection(c, spec)
        if bedside is not None:
            return bedside
        return verdict(c, False, f"no {a.specimen} culture in this admission", (), missing=True)
    c.narrowed = rows
    return None


def _bedside_collection(c: Case, spec: re.Pattern[str]) -> Verdict | None:
    """A culture's collection charted at the bedside ("Wound Culture" as a procedure event)
    when the microbiology table holds no such specimen: a collection statement without a
    result is checked on it; a stated result still needs the microbiology rows.
    """
    e, a = c.entity, _culture(c)
    if a.organism or a.negative or a.positive or not a.specimen:
        return None
    keys = [k for it, k in zip(c.ctx.patient_items, c.ctx.patient_item_keys, strict=False)
            if it.table.startswith("procedureevents") and re.search(r"\bcultur", it.label or "", re.I)
            and spec.search(it.label or "")]
    inside: Rows = []
    every: Rows = []
    for k in keys[:3]:
        rows_in, rows_all = c.session.rows(k, e.window)
        inside += rows_in
        every += rows_all
    if inside:
        return verdict(c, True, f"{e.text} collected in the window (charted as a bedside procedure)", inside[:4])
    if every:
        near = nearest_in_time(every, e.window)
        return verdict(c, False, f"{e.text} collected in this admission but not in {tool_spec(e.window)}; nearest "
                       f"{at_row(near[0])}", every[:4], deciding=near)
    return None


def _susceptibility_statement(c: Case) -> bool:
    """Whether a culture statement reports a susceptibility ("oxacillin S", "pan-sensitive"): it
    restates its culture's specimen, date and organism, which the culture's own statement judges.
    Extraction gives such a statement its interpretation as value (S, R, I or pan-sensitive);
    a culture's value is its result clause.
    """
    value = (c.entity.value or "").strip().lower()
    return value in ("s", "r", "i") or (_culture(c).pan_sensitive and value == "pan-sensitive")


def _lookback(c: Case, spec: re.Pattern[str], days: int) -> Rows:
    window = c.entity.window
    if window is None or parse_time(window.start) is None:
        return []
    back = widened_back(window, days)
    return [r for r in _timeline(c, tool_spec(back)) if in_window(r, back)
            and spec.search(str(r.get("item") or r.get("label") or ""))]


def _organism(c: Case) -> Verdict | None:
    e, a = c.entity, _culture(c)
    if not a.organism:
        return None
    rows = c.narrowed or []
    orgs = [r for r in rows if _org(r)]
    opat = re.compile(a.organism, re.I)
    hit = [r for r in orgs if opat.search(_org(r))]
    if not hit and _susceptibility_statement(c):
        # "E. coli, pan-sensitive": whether E. coli grew is the culture statement's claim, judged there
        return unverified(c, f"{e.text}: {a.organism_text} not grown from the culture it reports on; "
                          "the organism is the culture statement's to judge", rows[:2])
    if not hit:
        grown = sorted({_org(r) for r in orgs})
        return verdict(c, False, f"{e.text}: {a.organism_text} not grown"
                       + (f" (grew {', '.join(grown[:3])})" if grown else " (no growth recorded)"), rows[:4],
                       missing=not orgs, deciding=nearest_in_time(orgs, e.window))
    c.narrowed = hit
    refined = decide(c, (SUSCEPTIBILITY, ANTIBIOTIC))
    if refined is not None:
        return refined
    return verdict(c, True, f"{e.text} grew {a.organism_text}", hit)


def _susceptibility(c: Case) -> Verdict | None:
    e, a, hit = c.entity, _culture(c), c.narrowed or []
    if not (a.sensitivities or a.pan_sensitive):
        return None
    ok, why, ev = check_susceptibilities(hit, list(a.sensitivities), a.pan_sensitive)
    if not ok:
        return verdict(c, False, f"{e.text}: {why}", ev)
    return verdict(c, True, f"{e.text}: {a.organism_text} {why}", ev or hit)


def _antibiotic_interpretation(c: Case) -> Verdict | None:
    e, a, hit = c.entity, _culture(c), c.narrowed or []
    if not a.antibiotics:
        return None
    want = a.susceptibility or "S"
    for ab in a.antibiotics:
        ab_rows = [r for r in hit if ab[:6] in str((r.get("extra") or {}).get("antibiotic") or "").lower()]
        if ab_rows and not any(str(r["extra"].get("interpretation") or "").upper().startswith(want) for r in ab_rows):
            return verdict(c, False, f"{e.text}: {ab} not {'resistant' if want == 'R' else 'sensitive'}", ab_rows[:4])
    return None


def _result_sign(c: Case) -> Verdict | None:
    e, a, rows = c.entity, _culture(c), c.narrowed or []
    orgs = [r for r in rows if _org(r)]
    if a.positive and not orgs:
        return verdict(c, False, f"{e.text} stated positive, nothing grew", rows[:4])
    if a.negative and orgs:
        return verdict(c, False, f"{e.text} stated negative, grew {', '.join(sorted({_org(r) for r in orgs})[:3])}",
                       orgs[:4])
    return None


def _collection_day_part(c: Case) -> Verdict | None:
    """"Blood cultures sent this AM": a collection dated by a part of the day claims a
    specimen drawn in that part of that day; specimens that were all drawn at other hours
    (date-only rows, charted at midnight, say nothing of the hour) are a time error.
    """
    a = _culture(c)
    if a.organism or a.negative or a.positive or a.every:
        return None
    part = stated_day_part(c)
    timed = [(t, r) for r in c.narrowed or [] if (t := parse_time(r.get("time"))) is not None
             and (t.hour, t.minute, t.second) != (0, 0, 0)]
    if part is None or not timed or any(part[0] <= t <= part[1] for t, _ in timed):
        return None
    drawn = ", ".join(sorted({t.strftime("%m-%d %H:%M") for t, _ in timed})[:3])
    return verdict(c, False, f"{c.entity.text}: stated {part[2]}, drawn {drawn}", [r for _, r in timed][:4],
                   deciding=nearest_in_time([r for _, r in timed], c.entity.window))


def _collected(c: Case) -> Verdict | None:
    return verdict(c, True, f"{c.entity.text} collected in the window", c.narrowed or [])


SPECIMEN_IN_WINDOW = Rule("microbiology.specimen_in_window", "A culture statement needs its specimen in its "
                          "window (an undated result looks back days, a pending one a day; all cultures span the stay "
                          "so far; a bare collection may be bedside); none in the stay is missing, one on other days "
                          "a time error.",
                          _specimen_in_window, _K)
ORGANISM_GROWN = Rule("microbiology.organism_grown", "A stated organism must have grown from the specimen (a "
                      "susceptibility statement leaves that to its culture's statement: unverified).", _organism, _K)
SUSCEPTIBILITY = Rule("microbiology.susceptibility", "A stated susceptibility (S, R, pan-sensitive) must match the "
                      "interpretation recorded for that antibiotic on the organism; an untested one is not judged.",
                      _susceptibility, _K)
ANTIBIOTIC = Rule("microbiology.antibiotic_interpretation", "An antibiotic named as covering the organism must not be "
                  "recorded with the opposite interpretation.", _antibiotic_interpretation, _K)
RESULT_SIGN = Rule("microbiology.result_sign", "A culture stated positive needs growth and one stated negative "
                   "needs none.", _result_sign, _K)
COLLECTION_DAY_PART = Rule("microbiology.collection_day_part", "A culture collection dated by a part of the day "
                           "(this AM, overnight) claims a specimen drawn in that part of that day.",
                           _collection_day_part, _K)
COLLECTED = Rule("microbiology.collected", "A culture statement without a result is confirmed by the specimen's "
                 "collection in the window.", _collected, _K)

CHAIN = (SPECIMEN_IN_WINDOW, ORGANISM_GROWN, RESULT_SIGN, COLLECTION_DAY_PART, COLLECTED)
RULES = (SPECIMEN_IN_WINDOW, ORGANISM_GROWN, SUSCEPTIBILITY, ANTIBIOTIC, RESULT_SIGN, COLLECTION_DAY_PART, COLLECTED)
