"""Whether a drug is there at all: the first medication rules, before any detail is compared.

A drug said not to be given must have no row in the window; one said to be given needs a
row there, and its absence is judged only where the records could show it
(:mod:`.coverage`) and the statement claims the window (a plan's bare regimen does not).
"""
from __future__ import annotations

from ehrlib.pipeline.offline.scope import listed_bare
from ehrlib.pipeline.offline.verification.coverage import unshown_absence
from ehrlib.pipeline.offline.verification.deciding import at_row, nearest_in_time
from ehrlib.pipeline.offline.verification.medrows import done_before
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.pauses import undated_pause
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.offline.verification.windows import tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["negated", "record_in_window"]


def negated(c: Case) -> Verdict | None:
    """"no transfusion today", "not on pressors": consistent when nothing is given in the window; an
    undated pause ("held", "no further FFP") is not contradicted by rows that may precede it.
    """
    if not c.entity.claim.negated:
        return None
    inside, every = c.item_rows()
    if inside and (pause := undated_pause(c)) is not None:
        return unverified(c, f"{_names(c)} not judged: \"{pause}\" claims a pause from a moment the note does not "
                          "date, and the window's rows may all precede it", inside[:4])
    if inside:
        return verdict(c, False, f"note says no {_names(c)}, but it was given in the window", inside)
    return verdict(c, True, f"no {_names(c)} in the window, as stated", every[:2])


def record_in_window(c: Case) -> Verdict | None:
    """A drug said given needs a row in the window: none in the admission is missing, rows only
    on other days a time error; a completed course's rows lie before the window.
    """
    inside, every = c.item_rows()
    if not inside and listed_bare(c.entity, c.line() or "", c.entity.claim.section, c.ctx.note_type):
        return unverified(c, f"{_names(c)} listed bare in a problem entry: the problem's regimen from the note on, "
                          "whose orders the record may not hold in the note's window")
    if not every and (why := unshown_absence(c)) is not None:
        return unverified(c, why)
    if not every:
        return verdict(c, False, f"no order or administration of {_names(c)} in this admission", (), missing=True)
    if not inside and (done := done_before(c, every)):
        return verdict(c, True, f"{_names(c)} course recorded before the window, as completed", done[-2:])
    if not inside:
        near = nearest_in_time(every, c.entity.window)
        return verdict(c, False, f"{_names(c)} given in this admission but not in the window "
                       f"{tool_spec(c.entity.window)}; nearest {at_row(near[0])}", every[:4], deciding=near)
    return None
