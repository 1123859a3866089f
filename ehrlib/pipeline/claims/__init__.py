"""What an extracted statement claims, as small typed records: the contract between
extraction and verification.

Extraction (offline scanners, the LLM stages, the bench oracle) attaches one claim to every
:class:`~ehrlib.pipeline.records.Entity`; verification reads its typed fields. One claim type
per shape of statement the extractors actually produce:

* :class:`NumericClaim` — measurements, ranges, trends and outputs. These share one type
  because one statement often carries several of them ("Cr 1.4 -> 0.5" is a series with
  values, "peaked at 12.7" a maximum with a trend word) and the number checks apply to all;
  the parts are :class:`Reading` (value and bounds), :class:`BloodPressure` and
  :class:`Trend`.
* :class:`InterpretationClaim` — a state judged with a clinical criterion ("febrile to 101.5").
* :class:`FindingClaim` — a categorical exam finding ("abd soft, distended", "2+ edema").
* :class:`MedicationClaim` — an order, administration, infusion or transfusion.
* :class:`ProcedureClaim` — a line, tube or procedure with its action and side.
* :class:`MicrobiologyClaim` — a culture with its organism and susceptibilities.
* :class:`Claim` — nothing parsed beyond the concept (diagnoses, procedure codes, findings
  aligned through the patient's data, LLM-extracted entities).
* :class:`CheckEhrClaim` / :class:`OracleClaim` — what the CheckEHR baseline and the bench
  oracle carry.

On disk (``stages.jsonl`` entities, schema version 3) a claim is its fields with a ``type``
discriminator; :func:`claim_from_dict` reads that form and the flat ``attributes`` mapping of
earlier versions (:func:`claim_from_attributes`), which is also the short way to build a
claim in tests.
"""
from __future__ import annotations

from ehrlib.pipeline.claims.forms import (
    CLAIM_TYPES,
    claim_for,
    claim_from_attributes,
    claim_from_dict,
)
from ehrlib.pipeline.claims.parts import BloodPressure, Reading, Trend
from ehrlib.pipeline.claims.types import (
    CheckEhrClaim,
    Claim,
    FindingClaim,
    InterpretationClaim,
    MedicationClaim,
    MicrobiologyClaim,
    NumericClaim,
    OracleClaim,
    ProcedureClaim,
)

__all__ = [
    "Claim", "Reading", "BloodPressure", "Trend", "NumericClaim", "InterpretationClaim", "FindingClaim",
    "MedicationClaim", "ProcedureClaim", "MicrobiologyClaim", "CheckEhrClaim", "OracleClaim",
    "CLAIM_TYPES", "claim_from_attributes", "claim_from_dict", "claim_for",
]
