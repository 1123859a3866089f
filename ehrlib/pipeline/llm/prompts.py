"""The pipeline's prompt files (``ehrlib/prompts/*.txt``), loaded once and identified.

Prompts are ``string.Template`` files with ``$name`` placeholders; every record a prompt
produces stores ``prompt_id = "<stem>@<sha8>"`` (sha8 of the file text), so a changed
prompt shows up in the run manifest and in every record it touched. The loader and id
scheme are shared with the judge and the ontology builder (:mod:`ehrlib.prompting`).
"""
from __future__ import annotations

from ehrlib.prompting import get_prompt

__all__ = ["PIPELINE_PROMPTS", "CHECKEHR_PROMPTS", "get_prompt", "prompt_ids"]

PIPELINE_PROMPTS: tuple[str, ...] = (
    "segmentation", "anchors_global", "anchors_relative", "extract_patient", "ontology_select_groups",
    "extract_ontology", "scope_filter", "verify_system", "verify_entity", "verify_push",
    "ontology_build_groups", "ontology_build_subgroups", "semantic_search",
)
CHECKEHR_PROMPTS: tuple[str, ...] = (
    "checkehr_ner", "checkehr_tables", "checkehr_time", "checkehr_pseudo_table", "checkehr_self_correct",
    "checkehr_reformat", "checkehr_sql",
)


def prompt_ids(stems: tuple[str, ...] = PIPELINE_PROMPTS) -> dict[str, str]:
    """{stem: prompt_id} of the given prompts (for the run manifest)."""
    return {s: get_prompt(s).prompt_id for s in stems}
