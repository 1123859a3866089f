"""Negated finding states ("not sedated", "holding off BiPAP").

A negated state of a concept with no absence state of its own (``finding_states.yaml``,
``absence_states``: "no edema" claims the state none) claims only that the state did not
hold. It is confirmed when the window charts other states and never the denied one. It is
contradicted only when every charted state of the window is the denied one and the
negation stands in the state's own list item. Both charted means the note speaks of one
moment of the window it does not name; a negation reaching the word only across a comma
("no tachycardia, ST/SR") may have ended before it: both are unverified.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.records import Verdict

__all__ = ["denied_state_rule", "negated_in_own_item"]


def negated_in_own_item(line: str, span: tuple[int, int] | None) -> bool:
    """Whether a negation cue stands in the statement's own list item, no comma between."""
    return span is not None and negated_before(re.split(r"[,;]", line[:span[0]])[-1])


def denied_state_rule(vocab: Callable[[], Mapping[str, Any]], states: Callable[[str, str, str], set[str]],
                      stated_of: Callable[[Case], set[str]]) -> Rule[Any]:
    """The rule, bound to the finding vocabulary and its readers (``verification/findings.py``)."""

    def _denied_state(c: Case) -> Verdict | None:
        e, concept = c.entity, str(c.entity.claim.concept)
        if not c.claim_as(FindingClaim).negated or concept in (vocab().get("absence_states") or {}):
            return None
        denied = stated_of(c)
        charted = [(r, got) for r in c.item_rows()[0]
                   if (got := states(concept, str(r.get("value") or "").lower(), "chart"))]
        if not denied or not charted:
            return None
        said = f"{e.text}: note says not {', '.join(sorted(denied))}"
        shown = ", ".join(sorted(set().union(*(got for _, got in charted))))
        against = [r for r, got in charted if got & denied]
        if not against:
            return verdict(c, True, f"{said}; table charts {shown}", [r for r, _ in charted][:4])
        if not negated_in_own_item(c.line() or "", e.span):
            return unverified(c, f"{said} only by a negation before a comma, which may end before it; the window "
                              f"charts it ({shown})", against[:4])
        if len(against) == len(charted):
            return verdict(c, False, f"{said}; table charts only {shown}", against[:4])
        return unverified(c, f"{said}; the window charts it ({shown}) and the note does not say when it did not hold",
                          against[:4])

    return Rule("findings.denied_state", "A negated exam state (\"not sedated\") claims only that the state did not "
                "hold: confirmed by other charted states, contradicted only when every charted state is the denied "
                "one, unverified when the window charts both.", _denied_state, ("finding",))
