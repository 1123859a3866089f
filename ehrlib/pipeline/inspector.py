"""Per-note orchestration of EHR-Inspector (paper §4): the unit of work of a run.

segment -> temporal anchors -> patient-specific extraction -> ontology-guided extraction
-> scope filter -> tool-augmented verification with a validation cache.

:func:`inspect_note` takes one note's context, a stage bundle and the per-note resources and
returns a :class:`NoteResult` holding every stage's output (for ``stages.jsonl``), the
verdicts and the predictions. It keeps no state between notes, so a runner may map it over
notes on threads, processes or a cluster.

Within a note, independent work (segments during extraction and scope filtering, cache
lanes during verification) is spread over an optional thread pool with :func:`pmap`, which
runs a not-yet-started task on the calling thread instead of waiting for it: nested use of
one bounded pool can then never deadlock, and total concurrency stays at the pool size.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ehrlib.corpus.records import Prediction, Usage
from ehrlib.errors import EhrlibError, EndpointUnreachable
from ehrlib.pipeline.cache import ValidationCache
from ehrlib.pipeline.offline.note_time import NoteTime, note_time_of, settle
from ehrlib.pipeline.records import Entity, ScopeDecision, Segment, Verdict
from ehrlib.pipeline.stages import (
    NoteContext,
    StageEnv,
    StageOutput,
    Stages,
    Timeline,
    add_usage,
    whole_note_segment,
)

__all__ = [
    "STAGE_NAMES",
    "StageRecord",
    "NoteResult",
    "inspect_note",
    "validate_segments",
    "pmap",
    "SegmentationError",
]

STAGE_NAMES: tuple[str, ...] = ("segmentation", "anchors", "patient_extraction", "ontology_extraction",
                                "scope", "verification")

A = TypeVar("A")
B = TypeVar("B")


class SegmentationError(EhrlibError):
    """Segments leave a gap, overlap, or run past the note."""


@dataclass(frozen=True, slots=True)
class StageRecord:
    """One stage call of one note: what it produced and what it cost."""

    stage: str
    wall_s: float
    usage: Usage = field(default_factory=Usage)
    prompt_ids: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    segment: int | None = None
    entity_id: str | None = None
    #: the stage's output (records), converted with ``ehrlib.corpus.to_dict`` when written
    output: Any = None
    raw: tuple[str, ...] = ()
    dropped: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class NoteResult:
    """Everything one note produced: segments, timeline, entities, scope, verdicts and stage records."""
    note_id: str
    segments: tuple[Segment, ...]
    timeline: Timeline
    entities: tuple[Entity, ...]
    scope: tuple[ScopeDecision, ...]
    verdicts: tuple[Verdict, ...]
    predictions: tuple[Prediction, ...]
    stage_records: tuple[StageRecord, ...]
    wall_s: float = 0.0

    @property
    def failures(self) -> tuple[tuple[str, str | None, str], ...]:
        """(stage, entity_id, message) of every recoverable failure in the note."""
        out: list[tuple[str, str | None, str]] = []
        for rec in self.stage_records:
            out.extend((rec.stage, rec.entity_id, f) for f in rec.failures)
        return tuple(out)

    @property
    def usage(self) -> Usage:
        """LLM usage over all stages."""
        return add_usage(*(r.usage for r in self.stage_records))

    @property
    def cache_hits(self) -> int:
        """Verdicts served from the validation cache."""
        return sum(1 for v in self.verdicts if v.from_cache)


def pmap(fn: Callable[[A], B], items: Sequence[A], pool: Executor | None) -> list[B]:
    """``[fn(x) for x in items]``, spread over ``pool``; results in input order.

    A task the pool has not started yet is cancelled and run on the calling thread, so a
    pool worker calling pmap never blocks on work queued behind itself.
    """
    if pool is None or len(items) <= 1:
        return [fn(x) for x in items]
    futures = [pool.submit(fn, x) for x in items]
    out: list[B] = []
    for fut, x in zip(futures, items, strict=True):
        out.append(fn(x) if fut.cancel() else fut.result())
    return out


def validate_segments(segments: Sequence[Segment], n_lines: int) -> tuple[Segment, ...]:
    """Segments sorted and re-indexed; raises SegmentationError unless every line in
    ``0..n_lines-1`` is covered exactly once.
    """
    if n_lines <= 0:
        return ()
    if not segments:
        raise SegmentationError("no segments")
    ordered = sorted(segments, key=lambda s: (s.start_line, s.end_line))
    expected = 0
    for seg in ordered:
        if seg.start_line > seg.end_line:
            raise SegmentationError(f"segment '{seg.title}' ends ({seg.end_line}) before it starts ({seg.start_line})")
        if seg.start_line > expected:
            raise SegmentationError(f"lines {expected}-{seg.start_line - 1} are in no segment")
        if seg.start_line < expected:
            raise SegmentationError(f"segment '{seg.title}' (lines {seg.start_line}-{seg.end_line}) "
                                    f"overlaps the previous one")
        expected = seg.end_line + 1
    if expected != n_lines:
        if expected < n_lines:
            raise SegmentationError(f"lines {expected}-{n_lines - 1} are in no segment")
        raise SegmentationError(f"segments run to line {expected - 1} but the note has {n_lines} lines")
    return tuple(dataclasses.replace(s, index=i) for i, s in enumerate(ordered))


def _timed(stage: str, fn: Callable[[], StageOutput[Any]], **where: Any) -> tuple[StageOutput[Any], StageRecord]:
    t0 = time.perf_counter()
    out = fn()
    rec = StageRecord(stage, time.perf_counter() - t0, out.usage, out.prompt_ids, out.failures,
                      output=out.value, raw=out.raw, dropped=out.dropped, **where)
    return out, rec


def _entity_key(e: Entity) -> tuple[int, str, tuple[str, ...]]:
    return (e.line, e.text.strip().lower(), tuple(sorted(e.item_keys)))


def _merge_entities(patient: Sequence[Entity], ontology: Sequence[Entity], segments: Sequence[Segment],
                    timeline: Timeline, note_id: str, when: NoteTime | None = None) -> tuple[Entity, ...]:
    """E_extract = E_patient ∪ E_ontology: duplicates dropped (first wins), sorted by line,
    given note-unique ids, their segment, and a time window when the extractor left none.
    With the note's time ``when``, every window is then settled against it once, for every
    backend and rule family alike (:func:`~ehrlib.pipeline.offline.note_time.settle`: a
    statement is judged on rows charted up to the note's time, and records its time basis).
    """
    seen: set[tuple[int, str, tuple[str, ...]]] = set()
    merged: list[Entity] = []
    for e in [*patient, *ontology]:
        key = _entity_key(e)
        if key in seen:
            continue
        seen.add(key)
        merged.append(e)
    merged.sort(key=lambda e: (e.line, e.span or (0, 0)))
    by_line: dict[int, Segment] = {}
    for seg in segments:
        for line in range(seg.start_line, seg.end_line + 1):
            by_line[line] = seg
    out = []
    for k, e in enumerate(merged):
        line_seg = by_line.get(e.line)
        window = e.window if e.window is not None else timeline.window_for_line(e.line, line_seg)
        new_id = f"{note_id}:e{k:03d}"
        e = dataclasses.replace(e, entity_id=new_id, segment=line_seg.index if line_seg else e.segment,
                                window=window)
        out.append(settle(e, when, line_seg) if when is not None else e)
    return tuple(out)


def _prediction(run_id: str, note_id: str, e: Entity, d: ScopeDecision, v: Verdict) -> Prediction:
    return Prediction(
        run_id=run_id, note_id=note_id, line=e.line, entity=e.text, label=v.label, items=e.items,
        value=e.value, temporal_status=d.status, time_window=e.window,
        inconsistency_type=v.inconsistency_type if v.label == "inconsistent" else None,
        reason=v.reason, evidence_row_ids=v.evidence_row_ids, from_cache=v.from_cache,
        tool_calls=v.tool_calls, usage=v.usage, entity_id=e.entity_id, prompt_id=v.prompt_id,
        failure=v.failure, rule_id=v.rule_id, time_basis=e.time_basis, deciding_row_ids=v.deciding_row_ids,
        confidence=v.confidence, confidence_source="logprobs" if v.confidence is not None else None,
    )


def _verify_lane(ctx: NoteContext, env: StageEnv, stages: Stages, lane: Sequence[Entity],
                 cache_size: int) -> list[tuple[Verdict, StageRecord]]:
    """Verify one lane's entities in order, each seeing the lane's cache as it stands.

    With a cache (m > 0) and a verifier that ``accepts_group``, the first entity of an
    observation group ("Abd: soft, distended") is verified together with its siblings:
    the verifier answers them from the same evidence in the same call, and each sibling
    is then a cache hit that costs no call of its own.
    """
    cache = ValidationCache(cache_size)
    grouped = bool(cache_size) and bool(getattr(stages.verifier, "accepts_group", False))
    answered: dict[str, Verdict] = {}
    members: dict[Any, list[int]] = {}   # group -> its entities' positions (no rescan of the lane per entity)
    if grouped:
        for k, x in enumerate(lane):
            if x.group is not None:
                members.setdefault(x.group, []).append(k)
    out = []
    for i, e in enumerate(lane):
        t0 = time.perf_counter()
        if e.entity_id in answered:
            v = dataclasses.replace(answered.pop(e.entity_id), entity_id=e.entity_id, from_cache=True,
                                    usage=Usage(), tool_calls=())
        else:
            siblings = tuple(lane[k] for k in members.get(e.group, ()) if k > i
                             and lane[k].entity_id not in answered) if e.group is not None else ()
            try:
                v = (stages.verifier(ctx, env, e, cache.snapshot(), group=siblings)  # type: ignore[call-arg]  # accepts_group
                     if siblings
                     else stages.verifier(ctx, env, e, cache.snapshot()))
            except EndpointUnreachable:
                raise  # the endpoint is down: every note would fail, the run stops
            except EhrlibError as exc:  # an expected failure of this entity; the note goes on
                v = Verdict(e.entity_id, "unverified", reason="verification failed",
                            failure=f"{type(exc).__name__}: {exc}")
            wanted = {x.entity_id for x in siblings}
            for sib in v.siblings:
                if sib.entity_id in wanted and sib.failure is None:
                    answered[sib.entity_id] = sib
            v = dataclasses.replace(v, siblings=())
        if v.entity_id != e.entity_id:
            v = dataclasses.replace(v, entity_id=e.entity_id)
        cache.add(e, v)
        rec = StageRecord("verification", time.perf_counter() - t0, v.usage,
                          (v.prompt_id,) if v.prompt_id else (), (v.failure,) if v.failure else (),
                          segment=e.segment, entity_id=e.entity_id, output=v)
        out.append((v, rec))
    return out


def inspect_note(ctx: NoteContext, stages: Stages, env: StageEnv, *, run_id: str = "",
                 cache_size: int = 5, cache_scope: str = "segment",
                 pool: Executor | None = None) -> NoteResult:
    """Run every stage on one note; recoverable failures are recorded, never raised."""
    t_note = time.perf_counter()
    records: list[StageRecord] = []
    n_lines = len(ctx.lines)
    note_id = ctx.note_id

    # 1. segmentation (a bad segmentation degrades to the whole note, recorded)
    if (segmenter := stages.segmenter) is not None:
        out, rec = _timed("segmentation", lambda: segmenter(ctx, env))
        try:
            segments = validate_segments(out.value, n_lines)
        except SegmentationError as exc:
            segments = (whole_note_segment(ctx),)
            rec = dataclasses.replace(rec, failures=(*rec.failures, f"segmentation rejected: {exc}"),
                                      output=segments)
        records.append(rec)
    else:
        segments = (whole_note_segment(ctx),)
    default = ctx.default_window()
    segments = tuple(s if s.default_window is not None else dataclasses.replace(s, default_window=default)
                     for s in segments)

    # 2. temporal anchors
    out, rec = _timed("anchors", lambda: stages.anchors(ctx, env, segments))
    timeline: Timeline = out.value
    records.append(rec)

    # 3. patient-specific extraction, per segment
    patient: list[Entity] = []
    if (patient_extractor := stages.patient_extractor) is not None:
        res = pmap(lambda s: _timed("patient_extraction",
                                    lambda: patient_extractor(ctx, env, s, timeline, ()), segment=s.index),
                   segments, pool)
        for (o, r) in res:
            patient.extend(o.value)
            records.append(r)

    # 4. ontology-guided extraction over L \ L_P, skipping what step 3 found in the segment
    ontology: list[Entity] = []
    if (ontology_extractor := stages.ontology_extractor) is not None:
        def _ont(s: Segment) -> tuple[StageOutput[Any], StageRecord]:
            known = tuple(e for e in patient if s.start_line <= e.line <= s.end_line)
            return _timed("ontology_extraction", lambda: ontology_extractor(ctx, env, s, timeline, known),
                          segment=s.index)
        for (o, r) in pmap(_ont, segments, pool):
            ontology.extend(o.value)
            records.append(r)
    entities = _merge_entities(patient, ontology, segments, timeline, note_id, note_time_of(ctx))

    # 5. scope filter, per segment
    by_segment = {s.index: tuple(e for e in entities if e.segment == s.index) for s in segments}
    decisions: dict[str, ScopeDecision] = {}
    if (scope_filter := stages.scope_filter) is not None:
        def _scope(s: Segment) -> tuple[StageOutput[Any], StageRecord]:
            return _timed("scope", lambda: scope_filter(ctx, env, s, timeline, by_segment[s.index]),
                          segment=s.index)
        busy = [s for s in segments if by_segment[s.index]]
        for s, (o, r) in zip(busy, pmap(_scope, busy, pool), strict=True):
            failures = list(r.failures)
            got = {d.entity_id: d for d in o.value}
            for e in by_segment[s.index]:
                d = got.get(e.entity_id)
                if d is None:
                    failures.append(f"no scope decision for {e.entity_id}; kept as active")
                    d = ScopeDecision(e.entity_id, "active", "no decision returned")
                decisions[e.entity_id] = d
            records.append(dataclasses.replace(r, failures=tuple(failures)))
    else:
        decisions = {e.entity_id: ScopeDecision(e.entity_id, "active", "scope filter off") for e in entities}
    scope = tuple(decisions[e.entity_id] for e in entities)

    # 6. verification with the validation cache, lane by lane
    active = [e for e in entities if decisions[e.entity_id].status == "active"]
    if cache_scope == "note":
        lanes: list[Sequence[Entity]] = [active] if active else []
    else:
        lanes = [lane for lane in (tuple(e for e in active if e.segment == s.index) for s in segments) if lane]
    verdicts: dict[str, Verdict] = {}
    for lane_out in pmap(lambda lane: _verify_lane(ctx, env, stages, lane, cache_size), lanes, pool):
        for v, r in lane_out:
            verdicts[v.entity_id] = v
            records.append(r)
    ordered = tuple(verdicts[e.entity_id] for e in active)
    predictions = tuple(_prediction(run_id, note_id, e, decisions[e.entity_id], verdicts[e.entity_id])
                        for e in active)
    return NoteResult(note_id, segments, timeline, entities, scope, ordered, predictions, tuple(records),
                      time.perf_counter() - t_note)
