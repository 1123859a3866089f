"""Registration of the ``offline`` backend: the inspector and surface stage bundles.

``inspector``: every stage rule-based (sections -> anchors -> patient + ontology
extraction -> ConText scope -> tool-based verification with the validation cache).
``surface``: the same segmentation, anchors and extraction, no scope filter, and
:func:`~ehrlib.pipeline.offline.verification.verify_surface` (explicit values and times only).
``checkehr`` needs an LLM writing SQL and has no offline form.
"""
from __future__ import annotations

from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.extract import (
    offline_anchors,
    offline_segmenter,
    ontology_extractor,
    patient_extractor,
)
from ehrlib.pipeline.offline.scope import decide_all
from ehrlib.pipeline.offline.verification import verify_entity, verify_surface
from ehrlib.pipeline.records import Entity, ScopeDecision, Segment
from ehrlib.pipeline.stages import NoteContext, StageEnv, StageOutput, Stages, Timeline, register_backend

__all__ = ["offline_stages", "offline_scope_filter"]

MODEL_NAME = "offline-rules"


def offline_scope_filter(ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                         entities: tuple[Entity, ...]) -> StageOutput[tuple[ScopeDecision, ...]]:
    """Stage 5: section scope + ConText cues + the entity's own time (:mod:`.scope`)."""
    return StageOutput(decide_all(entities, ctx.lines, segment, ctx.admission, ctx.note_type))


def offline_stages(method: str, params: Any) -> Stages:
    """The full stage bundle for ``method`` (inspector | surface); the ablation switches
    are applied once, by :func:`ehrlib.pipeline.stages.get_stages`."""
    if method not in ("inspector", "surface"):
        raise ConfigError(f"the offline backend implements methods inspector and surface, not {method!r}")
    if method == "surface":
        return Stages(method, "offline", offline_anchors, verify_surface, offline_segmenter,
                      patient_extractor, ontology_extractor, None, concurrency=2, model=MODEL_NAME)
    return Stages(method, "offline", offline_anchors, verify_entity, offline_segmenter, patient_extractor,
                  ontology_extractor, offline_scope_filter, concurrency=2, model=MODEL_NAME)


register_backend("offline", offline_stages)
