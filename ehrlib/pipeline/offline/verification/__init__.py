"""Offline verification: a small rule engine and the rule families it applies.

Every table read goes through the patient's toolset (``Get_Item_Status_History``,
``Analyze_Value_Trend``, ``Get_Clinical_Criterion``, ``View_General_Timeline``,
``Lexical_Search``), so a verdict carries a tool trace comparable with an LLM's, and every
verdict names the rule that decided it (``rule_id``, ``<family>.<name>``).

* :mod:`.session` — the claim under verification, its tool session, verdict building and
  :func:`~.session.decide`, which applies a chain of rules; :mod:`.windows` and
  :mod:`.values` — windows, tolerances, thresholds and units.
* :mod:`.engine` — which chain a statement's kind gets, with the validation cache
  (:mod:`.cache`) first; :mod:`.surface` — the surface baseline.
* Rule families, each exporting ``RULES``: :mod:`.numbers` (values, ranges, daily totals,
  series, reference words), :mod:`.trends` (direction words, stated origins),
  :mod:`.states` (interpretations and criteria), :mod:`.medications` (orders, infusions,
  doses, clock times), :mod:`.events` (procedures and other records), :mod:`.findings`
  (categorical exam states), :mod:`.microbiology`, :mod:`.diagnoses` (billed codes).
* Vocabularies are data: ``ehrlib/data/finding_states.yaml``, ``verification_terms.yaml``,
  ``diagnosis_wording.yaml`` (with ``abbreviations.yaml``), each schema-checked on load.
"""
from __future__ import annotations

from ehrlib.pipeline.offline.verification.engine import ALL_RULES, chain_for, verify_entity
from ehrlib.pipeline.offline.verification.surface import verify_surface

__all__ = ["verify_entity", "verify_surface", "chain_for", "ALL_RULES"]
