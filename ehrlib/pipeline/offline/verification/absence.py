"""Whether a stated value can be missing from the record: the first number rule.

A value with no numeric row of its item in the statement's window is missing only when the
record could show it. An item with no row at all in the admission stays missing: that is the
benchmark's own definition of a missing record (a measurement the note states and the tables
never hold). A window in which the item's tables, or all of the
concept's home tables (``offline_lexicon.yaml``), hold no row of the patient at all: vital
signs before the ICU stay began, ventilator settings in a build without bedside chart rows
(read from the laboratory's gas items, which are recorded only with a gas).
"""
from __future__ import annotations

from datetime import datetime, timedelta

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.verification.coverage import uncharted_tables
from ehrlib.pipeline.offline.verification.draws import masked_draw
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, terms
from ehrlib.pipeline.offline.verification.windows import parse_time, tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["value_absent", "dated_after_note"]


def value_absent(c: Case) -> Verdict | None:
    """Missing when the window holds no number of the item and the record could show one; None
    when the window has one (the value rules compare it), unverified when the record could not.
    """
    inside, stay = c.item_rows()
    if [r for r in inside if r.get("valuenum") is not None] or masked_draw(c):
        return None  # a de-identified record's draw may lie outside the window (.draws)
    e = c.entity
    concept = concept_of(c.claim_as(NumericClaim))
    own = tuple(dict.fromkeys(k.partition(":")[0] for k in c.keys()[:6]))
    for tables in (own, tuple(concept.tables) if concept is not None else ()):
        bare = uncharted_tables(c, tables)
        if tables and len(bare) == len(tables):  # every table that would hold it is empty then
            return unverified(c, f"{e.text} not judged: {' and '.join(bare)} hold no row of this patient in the "
                              f"window {tool_spec(e.window)}, so nothing measured then could be on record",
                              (inside or stay)[:3])
    return verdict(c, False, f"no {e.text} record in the window {tool_spec(e.window)}", (inside or stay)[:3],
                   missing=True)


def dated_after_note(c: Case, part: tuple[datetime, datetime, str] | None) -> str | None:
    """Why a statement dated to a part of the note's day that begins after the note was written
    ("repeat CXR this afternoon" in a note signed at 10:40) cannot be missing: it tells what is
    to come, not what was done. ``part`` is the stated part of the day with its tolerance.
    """
    written = parse_time(getattr(c.ctx.note, "charttime", None))
    if part is None or written is None:
        return None
    begins = part[0] + timedelta(hours=float(terms()["day_part_tolerance_hours"]))  # the part's own start
    if begins <= written:
        return None
    return (f"{c.entity.text} not judged: dated {part[2]}, after the note was written ({written:%Y-%m-%d %H:%M}), "
            "so it is a plan or expectation, not a report")
