"""The data files the verification rules read (``ehrlib/data/*.yaml``, schema-checked)."""
from __future__ import annotations

from typing import Any, Mapping

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.lexicon import Concept, load_lexicon

__all__ = ["terms", "concept_of", "tolerance_of"]


def terms() -> Mapping[str, Any]:
    """``verification_terms.yaml``: routes, dose units, action words, vital concepts..."""
    return load_data("verification_terms.yaml")


def concept_of(claim: Claim) -> Concept | None:
    """The lexicon concept a statement's claim names (None when unknown)."""
    return load_lexicon().concepts.get(str(claim.concept))


def tolerance_of(concept: Concept | None) -> float:
    """The concept's numeric tolerance (0.05 when the concept is unknown)."""
    return concept.tol if concept else 0.05
