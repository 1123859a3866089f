"""Bedside states that are also billed as status codes: a code status the note states.

A code status ("DNR", "DNR/DNI", "made CMO") is charted in the ICU flowsheet (a Code
Status item), and the admission's billing codes it as a status as well: ICD-9 V49.86 "Do
not resuscitate status" / ICD-10 Z66, and comfort-measures-only care as V66.7 / Z51.5
"Encounter for palliative care". Where the flowsheet table is absent from the database (a
hospital-only admission, a discharge summary's stay), the statement is no longer
unverifiable: it is checked against the admission's billed diagnosis codes, consistent
when one of them names it and missing otherwise. Which concepts are such states, and the
ICD titles of their billed states, are data (``offline_concept_flags.yaml``:
``billed_status_findings``); the ICD wording of their shorthand is in
``terminology_synonyms.yaml``. A state none of those titles names ("full code", the bare
word "code") stays unverifiable.
"""
from __future__ import annotations

import functools
from dataclasses import replace

from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.mention import Mention, concept_flags
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.terminology import Terminology, Title

__all__ = ["BILLED_STATUS", "billed_status_mention"]


@functools.lru_cache(maxsize=1)
def _status_titles() -> dict[str, Terminology]:
    """Per billed-status concept, the ICD titles of its billed states."""
    return {concept: Terminology([Title("diagnoses_icd", str(k), t) for k, t in enumerate(titles)])
            for concept, titles in concept_flags().get("billed_status_findings", {}).items()}


def billed_status_mention(m: Mention) -> Mention | None:
    """``m`` as a diagnosis statement checked against the billed codes, when its concept is a
    billed status (``billed_status_findings``) and one of that concept's status titles names
    its words ("DNR/DNI": "Do not resuscitate"); else None (a denied status too).
    """
    titles = _status_titles().get(m.concept)
    phrase = m.text.strip()
    if titles is None or m.claim.negated or not phrase or not titles.match(phrase, threshold=90.0):
        return None
    return replace(m, kind="diagnosis", concept="diagnosis", value=phrase, claim=Claim())


BILLED_STATUS = Rule("extract.billed_status", "A state the billing also codes as a status (a code status: DNR, CMO) "
                     "whose chart table is absent is checked against the admission's billed status codes instead: "
                     "consistent when one names it, missing otherwise.", billed_status_mention)
