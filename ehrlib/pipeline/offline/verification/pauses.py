"""Negations that claim a pause from a moment on, not an absence over the whole window.

"Coumadin held", "no further FFP", "creatinine fell without further dialysis": the thing
was given or done before, and the statement says it stopped at some moment; "prn ativan not
needed", "lovenox refused" deny a need over the writer's own hours, which the note does not date. When the note
does not date that moment, rows of the drug or procedure earlier in the statement's window
are what such a sentence expects, so they cannot contradict it.
"""
from __future__ import annotations

import functools
import re

from ehrlib.pipeline.claims import MedicationClaim
from ehrlib.pipeline.offline.context import cue
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.terms import terms

__all__ = ["undated_pause"]

#: how far before the mention an onward negation may stand ("no further blood products")
_REACH = 40


@functools.cache
def _onward() -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(terms()["onward_negations"]) + r")\b[^.;,]*$", re.I)


def undated_pause(c: Case) -> str | None:
    """The words that make a negated statement an undated pause (an interruption action such
    as "held" with no stated time, or "no further" right before the mention), else None.
    """
    e = c.entity
    if not e.claim.negated:
        return None
    action = c.claim_as(MedicationClaim).action or ""
    if action in terms()["actions"]["interruptions"] and not e.time_text:
        return action
    line = c.line()
    if line is None or e.span is None:
        return None
    if not e.time_text and (need := cue("need_denied_after_drug").match(line[e.span[1]:])) is not None:
        return need.group(0).strip(" ,:;")  # "prn ativan not needed": of the writer's own, undated hours
    m = _onward().search(line[max(0, e.span[0] - _REACH):e.span[0]])
    return m.group(0).strip() if m else None
