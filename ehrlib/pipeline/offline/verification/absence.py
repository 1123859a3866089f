"""Whether a stated value can be missing from the record: the first number rule.

A value with no numeric row of its item in the statement's window is missing only when the
record could show it. An item with no row at all in the admission was matched by name to an
item this record does not use (a fuzzy catalogue match: "D5" read as the lab "D", NG tube
output read as a chest tube's), or lives in a source this database lacks: the absence then
says nothing about the value. Nor does a window in which the tables that chart the item
(the item's own and the concept's home table) hold no row of the patient at all: vital signs
before the ICU stay began, ventilator settings in a build without bedside chart rows.
"""
from __future__ import annotations

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.verification.coverage import uncharted_tables
from ehrlib.pipeline.offline.verification.draws import masked_draw
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of
from ehrlib.pipeline.offline.verification.windows import tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["value_absent"]


def value_absent(c: Case) -> Verdict | None:
    """Missing when the window holds no number of the item and the record could show one; None
    when the window has one (the value rules compare it), unverified when the record could not.
    """
    inside, stay = c.item_rows()
    if [r for r in inside if r.get("valuenum") is not None] or masked_draw(c):
        return None  # a de-identified record's draw may lie outside the window (.draws)
    e = c.entity
    if not inside and not stay:
        return unverified(c, f"{e.text} not judged: its item ({', '.join(c.keys()[:3]) or 'none'}) has no record in "
                          "this admission at all, so the absence shows a mapping or source the record lacks, not a "
                          "wrong value")
    concept = concept_of(c.claim_as(NumericClaim))
    home = (*(concept.tables if concept is not None else ()), *(k.partition(":")[0] for k in c.keys()[:6]))
    bare = uncharted_tables(c, home)
    if bare:
        return unverified(c, f"{e.text} not judged: {', '.join(bare)} has no row of this patient in the window "
                          f"{tool_spec(e.window)}, so nothing measured then could be on record", (inside or stay)[:3])
    return verdict(c, False, f"no {e.text} record in the window {tool_spec(e.window)}", (inside or stay)[:3],
                   missing=True)
