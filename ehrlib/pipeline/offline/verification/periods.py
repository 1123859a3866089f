"""Finding states claimed for the whole period ("NSR throughout", "remains in SR").

A state said to hold all shift is a claim about every charted state of the window, not
only that the state was charted once: any charted state that excludes it (any other
state of a single-valued finding such as the heart rhythm) contradicts it. The cue words
are data (``finding_states.yaml``, ``whole_period``).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.records import Verdict

__all__ = ["whole_period_rule", "said_to_last"]


def _lead(c: Case) -> str:
    """The words of the statement's clause before its finding ("Remains in" NSR)."""
    e, lines = c.entity, c.ctx.lines
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    start = e.span[0] if e.span else max(line.find(e.text), 0)
    return re.split(r"[.;,:]", line[max(0, start - 30):start])[-1]


def said_to_last(c: Case, cue: str) -> bool:
    """Whether the statement's clause says its state lasted ("remained afebrile", "afebrile
    throughout"): the words from the clause's start to its end, searched for ``cue``.
    """
    e, lines = c.entity, c.ctx.lines
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    start = e.span[0] if e.span else max(line.find(e.text), 0)
    end = e.span[1] if e.span else start + len(e.text)
    clause = _lead(c) + line[start:end] + re.split(r"[.;]", line[end:])[0]
    return re.search(cue, clause, re.I) is not None


def whole_period_rule(vocab: Callable[[], Mapping[str, Any]], states: Callable[[str, str, str], set[str]],
                      stated_of: Callable[[Case], set[str]]) -> Rule[Any]:
    """The rule, bound to the finding vocabulary and its readers (``verification/findings.py``)."""

    def _whole_period(c: Case) -> Verdict | None:
        """"NSR throughout", "remains in SR": a state said to hold through the period is
        contradicted by a charted state that excludes it (any other state of a single-valued
        finding), even when the stated state is charted too.
        """
        e, concept = c.entity, str(c.entity.claim.concept)
        cue = vocab().get("whole_period")
        said = f"{_lead(c)} {e.text} {e.value or ''}"
        if not cue or c.claim_as(FindingClaim).negated or not re.search(
                cue["timed"] if concept in cue["spatial"] else cue["note"], said, re.I):
            return None
        stated = stated_of(c)
        if not stated:
            return None
        opposites = vocab()["opposites"]
        excluding = ({o for st in stated for o in opposites[concept].get(st, ())} if concept in opposites
                     else None)
        rows = [(r, got) for r in c.item_rows()[0]
                if (got := states(concept, str(r.get("value") or "").lower(), "chart"))]
        against = [r for r, got in rows if not got & stated and (excluding is None or got & excluding)]
        if not against:
            return None
        shown = ", ".join(sorted({str(r.get("value")) for r in against})[:4])
        return verdict(c, False, f"{e.text}: stated for the whole period, but the table also charts {shown}",
                       against[:4])

    return Rule("findings.whole_period", "A state said to hold through the whole period (throughout, all shift, "
                "remains) is contradicted by any charted state of the window that excludes it, even when it was "
                "charted as well.", _whole_period, ("finding",))
