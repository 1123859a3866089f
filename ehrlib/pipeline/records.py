"""Intermediate records passed between the EHR-Inspector stages.

segment -> temporal anchors -> extraction (patient-specific + ontology-guided) -> scope
filter -> tool-augmented verification. Every stage, LLM-backed or offline, consumes and
produces these, so stages can be swapped for ablations and each stage's output is written
to ``stages.jsonl`` for error analysis (convert with ``ehrlib.corpus.to_dict``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ehrlib.corpus.records import ItemRef, RecordError, RowRef, TimeBasis, TimeSpan, ToolCallRecord, Usage
from ehrlib.pipeline.claims import Claim

__all__ = [
    "Segment",
    "Anchor",
    "TimeRef",
    "Entity",
    "ScopeDecision",
    "Verdict",
    "CacheEntry",
    "EntityKind",
    "TemporalStatus",
]

EntityKind = Literal[
    "measurement",     # a value of an item: "WBC 20", "HR 110s", "T 101.2"
    "range",           # min-max or (mean) ranges: "BP 100/60(80) {90/50(65) - 140/100(120)}"
    "finding",         # a categorical/qualitative finding: "abd soft, distended", "2+ edema"
    "interpretation",  # a state judged with a clinical criterion: "febrile", "anemic", "AKI"
    "trend",           # a change over time: "lactate downtrending", "Cr peaked at 2.3 then improved"
    "medication",      # an order or administration: drug, dose, route, start/stop, duration
    "infusion",        # a continuous input: "levophed gtt", "NS 2L bolus"
    "output",          # urine, drains
    "procedure",       # lines, tubes, intubation, imaging with site
    "microbiology",    # specimen, organism, susceptibility
    "diagnosis",       # a billed diagnosis / procedure code statement
    "event",           # other charted events
]
TemporalStatus = Literal["past", "active", "plan"]


@dataclass(frozen=True, slots=True)
class Segment:
    """A topic-coherent, contiguous range of lines (inclusive), covering each line once."""

    index: int
    start_line: int
    end_line: int
    title: str
    #: normalised section kind, e.g. chief_complaint, hpi, past_history, admission_medications,
    #: hospital_course, results, discharge_medications, discharge_diagnosis, instructions,
    #: followup, events, vitals, exam, labs, assessment_plan, nursing_system, other
    section: str = "other"
    #: the protocol's default window for statements without their own time: the note date
    #: for physician/nursing notes, the hospitalization for discharge summaries.
    default_window: TimeSpan | None = None


@dataclass(frozen=True, slots=True)
class Anchor:
    """A global temporal reference with an absolute time (admission, surgery, ...)."""

    name: str
    time: str
    line: int | None = None
    source: Literal["note", "table", "context"] = "note"


@dataclass(frozen=True, slots=True)
class TimeRef:
    """A temporal expression inside a segment resolved to an absolute window."""

    line: int
    text: str
    window: TimeSpan
    anchor: str | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Entity:
    """An extracted, table-alignable statement (the verification unit).

    ``claim`` carries what the statement claims in parsed, typed form
    (:mod:`ehrlib.pipeline.claims`): a :class:`~ehrlib.pipeline.claims.NumericClaim` for
    "WBC 20" or "BP 100/60(80)", a ``MedicationClaim`` for "lasix 40 mg IV", and so on.
    """

    entity_id: str
    line: int
    text: str
    kind: EntityKind
    segment: int = 0
    value: str | None = None
    claim: Claim = field(default_factory=Claim)
    items: tuple[ItemRef, ...] = ()
    #: tool item keys (e.g. "labevents:51301") the retrieval tools accept
    item_keys: tuple[str, ...] = ()
    time_text: str | None = None
    window: TimeSpan | None = None
    #: which extraction step found it: "patient" (L_P) or "ontology" (L \\ L_P)
    source: Literal["patient", "ontology", "baseline"] = "patient"
    span: tuple[int, int] | None = None
    #: a shared id for entities from one observation ("Abd: soft, distended")
    group: str | None = None
    #: how ``window`` was resolved (see :data:`ehrlib.corpus.records.TIME_BASES`)
    time_basis: TimeBasis | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.claim, Claim):
            raise RecordError(f"Entity {self.entity_id}: claim must be a claim record (ehrlib.pipeline.claims), "
                              f"got {type(self.claim).__name__}")


@dataclass(frozen=True, slots=True)
class ScopeDecision:
    """Temporal status of one entity with the note evidence for it."""

    entity_id: str
    status: TemporalStatus
    reason: str = ""
    cues: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """The verification outcome for one entity."""

    entity_id: str
    #: "unverified" when verification failed (``failure`` says why): never counted as consistent
    label: Literal["consistent", "inconsistent", "unverified"]
    inconsistency_type: Literal["contradiction", "missing"] | None = None
    reason: str = ""
    evidence_row_ids: tuple[RowRef, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    from_cache: bool = False
    usage: Usage = field(default_factory=Usage)
    prompt_id: str | None = None
    #: set when the unit of work failed (malformed LLM output after one repair, tool crash);
    #: the note goes on and the failure is counted apart.
    failure: str | None = None
    #: the offline rule that produced the verdict (``<family>.<name>``, see
    #: :mod:`ehrlib.pipeline.offline.verification`); None for LLM verdicts
    rule_id: str | None = None
    #: the rows that decided the verdict, before any context rows of ``evidence_row_ids``
    deciding_row_ids: tuple[RowRef, ...] = ()
    #: the model's own probability of its label, from the reply's token log-probabilities
    #: (LLM verdicts with ``llm.logprobs``); None otherwise, and the calibrator decides
    confidence: float | None = None
    #: verdicts for the other entities of the same observation group, answered from the
    #: same evidence in the same call (a verifier with ``accepts_group``); the orchestrator
    #: uses them as cache hits for those entities and never writes this field out.
    siblings: tuple[Verdict, ...] = ()


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One validation-cache slot: a verified entity, its time context and evidence."""

    entity: Entity
    verdict: Verdict
    items: tuple[ItemRef, ...] = ()
    window: TimeSpan | None = None
