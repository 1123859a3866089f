"""Stage protocols of EHR-Inspector, the per-note context they share, and the backend registry.

A *stage* is a small synchronous callable. Each has an LLM-backed implementation (prompt
template + parser, :mod:`ehrlib.pipeline.llm`) and an offline rule-based one
(:mod:`ehrlib.pipeline.offline`); :func:`get_stages` picks one bundle by method and backend,
so the orchestration (:mod:`ehrlib.pipeline.inspector`) never knows which it runs.

Every stage returns a :class:`StageOutput`: the value plus what it cost (LLM usage, the
prompt ids it rendered, recoverable failures). Offline stages return ``StageOutput(value)``.
Verification returns a :class:`~ehrlib.pipeline.records.Verdict`, which already carries
usage, prompt id and failure.

Concurrency comes from the runner's thread pool, never from inside a stage: a stage gets
the calling thread's DuckDB cursor and toolset through :class:`StageEnv` and must not keep
per-note state between calls (the unit of work is one note with no shared mutable state).

Backends register themselves with :func:`register_backend`; :func:`get_stages` imports a
backend's module lazily the first time it is asked for, so importing this module never
imports an implementation (and the offline backend can be developed independently).
"""
from __future__ import annotations

import dataclasses
import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ehrlib.corpus.records import ItemRef, Note, TimeSpan, Usage
from ehrlib.errors import ConfigError, unknown_name
from ehrlib.pipeline.params import METHODS, RunParams
from ehrlib.pipeline.records import Anchor, CacheEntry, Entity, ScopeDecision, Segment, TimeRef, Verdict

if TYPE_CHECKING:  # types only: importing the stage protocols stays light
    from duckdb import DuckDBPyConnection

    from ehrlib.ontology import Ontology
    from ehrlib.tools.toolset import Toolset

__all__ = [
    "METHODS",
    "BACKENDS",
    "NoteContext",
    "StageEnv",
    "StageOutput",
    "Timeline",
    "Segmenter",
    "AnchorResolver",
    "Extractor",
    "ScopeFilter",
    "Verifier",
    "Stages",
    "BackendFactory",
    "register_backend",
    "registered_backends",
    "backend_factory",
    "get_stages",
    "apply_switches",
    "item_key",
    "split_item_key",
    "whole_note_segment",
    "add_usage",
    "unknown_backend_message",
]

#: The core backends and the package that registers each on import. Other backends (the
#: speed benchmark's gold oracle in :mod:`ehrlib.bench.pipeline`) register themselves
#: with :func:`register_backend` when their module is imported.
BACKENDS: Mapping[str, str] = {
    "offline": "ehrlib.pipeline.offline",
    "gemini": "ehrlib.pipeline.llm",
    "openai": "ehrlib.pipeline.llm",
    "scripted": "ehrlib.pipeline.llm",
    # the other LLM presets users type (ehrlib.llm.factory.PRESETS; a test keeps the two in step)
    **{name: "ehrlib.pipeline.llm" for name in ("vllm", "ollama", "sglang", "llamacpp", "azure", "vertex")},
}

#: backends that exist for tests: accepted, never offered to a user
TEST_BACKENDS = frozenset({"scripted"})

T = TypeVar("T")


def item_key(table: str, itemid: int | str) -> str:
    """The tool item key for one item, ``"<logical table>:<itemid or name>"``."""
    return f"{table}:{itemid}"


def split_item_key(key: str) -> tuple[str, str]:
    """Inverse of :func:`item_key`; raises ValueError on a key without a table."""
    table, sep, rest = key.partition(":")
    if not sep or not table or not rest:
        raise ValueError(f"item key {key!r} is not '<table>:<item>'")
    return table, rest


@dataclass(frozen=True, slots=True)
class NoteContext:
    """Everything a stage may know about one note besides its text: read from the DB.

    ``patient_items`` is L_P, the items this admission has rows for (with
    ``patient_item_keys`` the same items as tool keys, aligned by position). Times are
    ISO-8601 strings as the database renders them.
    """

    note: Note
    subject_id: int
    hadm_id: int
    admittime: str | None = None
    dischtime: str | None = None
    sex: str | None = None
    chartdate: str | None = None
    #: physical layout of the database: mimic3 | mimic4 | perturbed | synthetic
    flavor: str = "mimic3"
    #: data source kind from the DB build manifest (e.g. synthetic, demo, credentialed);
    #: the PHI guard decides from it whether note text may go to an endpoint
    source_kind: str = "synthetic"
    patient_items: tuple[ItemRef, ...] = ()
    patient_item_keys: tuple[str, ...] = ()
    db_path: str | None = None
    #: age at admission in years when the DB has a date of birth
    age: float | None = None
    #: ICU stays of the admission as (start, end) windows
    icu_windows: tuple[TimeSpan, ...] = ()
    #: start of the admission's first operation (an OR event of the procedure table), the
    #: anchor of "POD n" when the note writes no operation date
    surgery_time: str | None = None

    @property
    def note_id(self) -> str:
        """The note's id."""
        return self.note.note_id

    @property
    def note_type(self) -> str:
        """The note's type."""
        return self.note.note_type

    @property
    def lines(self) -> list[str]:
        """The note's lines."""
        return self.note.lines

    @property
    def admission(self) -> TimeSpan:
        """The hospitalization window (the protocol's default for discharge summaries)."""
        return TimeSpan(self.admittime, self.dischtime)

    def default_window(self) -> TimeSpan:
        """The protocol's window for a statement without its own time: the note date for
        physician and nursing notes, the hospitalization for discharge summaries.
        """
        if self.note.note_type == "discharge_summary":
            return self.admission
        day = (self.note.charttime or self.chartdate or self.note.chartdate or "")[:10] or None
        return TimeSpan(day, day)


@dataclass(frozen=True, slots=True)
class Timeline:
    """Stage 2's output: global anchors and per-segment relative expressions resolved."""

    anchors: tuple[Anchor, ...] = ()
    time_refs: tuple[TimeRef, ...] = ()

    def anchor(self, name: str) -> Anchor | None:
        """The anchor with this name (case-insensitive), or None."""
        low = name.strip().lower()
        return next((a for a in self.anchors if a.name.lower() == low), None)

    def refs_on_line(self, line: int) -> tuple[TimeRef, ...]:
        """The time expressions found on ``line``."""
        return tuple(r for r in self.time_refs if r.line == line)

    def window_for_line(self, line: int, segment: Segment | None = None) -> TimeSpan | None:
        """The window of a statement on ``line`` without its own time: a resolved
        expression on that line, else the segment's default window. An expression does not
        carry over to later lines (a day-structured course is segmented by day instead).
        """
        refs = self.refs_on_line(line)
        if refs:
            return refs[0].window
        return segment.default_window if segment is not None else None


@dataclass(frozen=True, slots=True)
class StageOutput(Generic[T]):
    """A stage's value and its cost.

    ``failures`` are recoverable problems (a malformed reply after one repair); the stage still returns
    its best value.
    """

    value: T
    usage: Usage = field(default_factory=Usage)
    prompt_ids: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    #: raw model replies, kept for error analysis (written to stages.jsonl)
    raw: tuple[str, ...] = ()
    #: candidates an extraction stage filtered out, each with the rule id that dropped it
    #: (written to stages.jsonl, for error analysis)
    dropped: tuple[Any, ...] = ()


class StageEnv:
    """Per-note resources a stage may use; built by the runner, one per note.

    ``con`` is the calling thread's DuckDB cursor (read-only) and ``toolset`` the tools
    bound to the note's patient on that cursor (``ehrlib.tools.make_toolset``): both are
    created lazily per thread from the ``connect``/``make_tools`` factories, because a
    DuckDB connection must not be shared between threads. Passing ``con``/``toolset``
    directly (tests, single thread) uses them everywhere. ``ontology`` is the item
    ontology of the database (``ehrlib.ontology.Ontology``); ``item_profile(key)`` returns
    TopV(l), the global top-K values of an item key (empty when unknown).
    """

    def __init__(self, *, con: DuckDBPyConnection | None = None, toolset: Toolset | None = None,
                 connect: Callable[[], DuckDBPyConnection] | None = None,
                 make_tools: Callable[[DuckDBPyConnection], Toolset] | None = None,
                 ontology: Ontology | None = None,
                 item_profile: Callable[[str], Sequence[str]] | None = None,
                 params: RunParams | None = None) -> None:
        self._con = con
        self._toolset = toolset
        self._connect = connect
        self._make_tools = make_tools
        self.ontology = ontology
        self.item_profile: Callable[[str], Sequence[str]] = item_profile or (lambda key: ())
        self.params = params
        self._local = threading.local()
        self._opened: list[DuckDBPyConnection] = []
        self._lock = threading.Lock()

    @property
    def con(self) -> DuckDBPyConnection | None:
        """This thread's database connection (opened on first use), or None."""
        if self._con is not None or self._connect is None:
            return self._con
        cur = getattr(self._local, "con", None)
        if cur is None:
            cur = self._connect()
            self._local.con = cur
            with self._lock:
                self._opened.append(cur)
        return cur

    @property
    def toolset(self) -> Toolset | None:
        """This thread's toolset (built on first use), or None."""
        if self._toolset is not None or self._make_tools is None:
            return self._toolset
        tools = getattr(self._local, "toolset", None)
        if tools is None:
            con = self.con
            if con is None:
                raise ConfigError("StageEnv: make_tools needs a database (give con= or connect=)")
            tools = self._make_tools(con)
            self._local.toolset = tools
        return tools

    def close(self) -> None:
        """Close the cursors this env opened (not one passed in)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for cur in opened:
            try:
                cur.close()
            except Exception:  # noqa: BLE001 - closing a cursor of a closed connection
                pass


class Segmenter(Protocol):
    """Stage 1: topic-coherent segments covering every line of the note exactly once."""

    def __call__(self, ctx: NoteContext, env: StageEnv) -> StageOutput[tuple[Segment, ...]]:
        """The note's segments."""


class AnchorResolver(Protocol):
    """Stage 2: global anchors of the note, then relative expressions per segment."""

    def __call__(self, ctx: NoteContext, env: StageEnv,
                 segments: tuple[Segment, ...]) -> StageOutput[Timeline]:
        """The note's timeline."""


class Extractor(Protocol):
    r"""Stages 3/4: table-alignable entities of one segment.

    ``known`` are entities already extracted from this note (by the patient-specific step,
    or earlier segments); an extractor must not return them again. The patient-specific
    extractor aligns to L_P (``ctx.patient_items``) with TopV(l) from ``env.item_profile``;
    the ontology-guided one narrows group -> subgroup -> item over L \ L_P.
    """

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        """Entities of one segment (``known``: what an earlier step already found there)."""


class ScopeFilter(Protocol):
    """Stage 5: past / active / plan for each entity of one segment (one decision each, same order as ``entities``)."""

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 entities: tuple[Entity, ...]) -> StageOutput[tuple[ScopeDecision, ...]]:
        """One scope decision per entity of the segment."""


class Verifier(Protocol):
    """Stage 6: verify one active entity against the tables.

    ``cache`` is the validation cache, oldest first, at most m entries; the verifier
    consults it first and returns ``Verdict(from_cache=True)`` when an entry settles the
    entity. ``env.toolset`` holds the patient-bound tools. Failures go into
    ``Verdict.failure``; a verifier raises only on bugs.

    Optional: a verifier whose ``accepts_group`` attribute is true is also called with
    ``group=`` (the not-yet-verified entities of the same observation group) and may
    return their verdicts in ``Verdict.siblings``; the orchestrator then records them as
    cache hits without calling the verifier again.
    """

    def __call__(self, ctx: NoteContext, env: StageEnv, entity: Entity,
                 cache: tuple[CacheEntry, ...]) -> Verdict:
        """The verdict on one active entity."""


@dataclass(frozen=True, slots=True)
class Stages:
    """One method's stage bundle.

    ``None`` means the stage is switched off: no segmenter -> the whole note is one segment; no scope
    filter -> every entity is active; a missing extractor is skipped.
    """

    method: str
    backend: str
    anchors: AnchorResolver
    verifier: Verifier
    segmenter: Segmenter | None = None
    patient_extractor: Extractor | None = None
    ontology_extractor: Extractor | None = None
    scope_filter: ScopeFilter | None = None
    #: upper bound on concurrent calls this backend tolerates (LLM rate limits)
    concurrency: int = 1
    #: model/backbone name for the manifest ("offline-rules", "gemini-2.5-flash", ...)
    model: str = ""
    #: URL the backend sends note text to; the runner passes it through the PHI guard
    #: (``ehrlib.llm.check_phi``) before the first call. None = nothing leaves the machine.
    endpoint: str | None = None
    #: counters the backend keeps (LLM response-cache hits/misses ...), for the manifest
    stats: Callable[[], Mapping[str, Any]] | None = None
    #: ranker for the tools' Semantic_Search (the paper's LLM variant); None = offline engine
    semantic_ranker: Callable[[str, Sequence[Any], int], Sequence[tuple[str, float]]] | None = None

    def __post_init__(self) -> None:
        if self.patient_extractor is None and self.ontology_extractor is None:
            raise ConfigError(f"{self.method}/{self.backend}: at least one extractor is required")


#: ``factory(method, params) -> Stages``; raises ConfigError for a method it lacks.
BackendFactory = Callable[[str, "RunParams"], Stages]

_REGISTRY: dict[str, BackendFactory] = {}
_LOCK = threading.Lock()


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``factory`` answer :func:`get_stages` for ``backend == name`` (last wins)."""
    with _LOCK:
        _REGISTRY[name] = factory


def registered_backends() -> tuple[str, ...]:
    """Names of the registered backends."""
    return tuple(sorted(_REGISTRY))


def backend_factory(name: str) -> BackendFactory | None:
    """The factory registered for ``name`` in this process (None when none is). Executors
    hand it to worker processes, where a backend registered at run time (a test's fake,
    the bench oracle) is not registered yet.
    """
    with _LOCK:
        return _REGISTRY.get(name)


def unknown_backend_message(backend: str) -> str:
    """One line naming the user-facing backends, with the closest one when it looks like a typo."""
    return unknown_name("backend", backend, sorted(set(BACKENDS) - TEST_BACKENDS))


def get_stages(method: str, backend: str, params: RunParams) -> Stages:
    """The stage bundle for ``method`` on ``backend``, built from ``params``."""
    if method not in METHODS:
        raise ConfigError(unknown_name("method", method, METHODS))
    with _LOCK:
        factory = _REGISTRY.get(backend)
    if factory is None:
        module = BACKENDS.get(backend)
        if module is None:
            raise ConfigError(unknown_backend_message(backend))
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                raise ConfigError(f"backend {backend!r} is not available in this build "
                                  f"({module} is missing)") from None
            raise
        with _LOCK:
            factory = _REGISTRY.get(backend)
        if factory is None:
            raise ConfigError(f"{module} did not register backend {backend!r}")
    stages = factory(method, params)
    return apply_switches(stages, params, lambda: factory("checkehr", params))


#: the module of the ``extraction="ner"`` stage (imported by name: it imports this module)
NER_EXTRACTOR = "ehrlib.ner.extractor"


def apply_switches(stages: Stages, params: RunParams, checkehr: Callable[[], Stages] | None = None) -> Stages:
    """The ablation switches every backend shares (paper Tables 3-5, 11): segmentation
    and scope filtering on/off, and which extraction steps run. Backends build the full
    bundle; verifier-side switches (tools, evidence guard, cache size) are theirs or the
    runner's. This is the one place these switches are applied.
    """
    changes: dict[str, Any] = {}
    if not params.segmentation:
        changes["segmenter"] = None
    if not params.scope_filter:
        changes["scope_filter"] = None
    if stages.method == "inspector":
        if params.extraction == "patient_only":
            changes["ontology_extractor"] = None
        elif params.extraction == "ontology_only":
            changes["patient_extractor"] = None
        elif params.extraction == "checkehr":
            if checkehr is None:
                raise ConfigError("extraction 'checkehr' needs the backend's checkehr bundle")
            changes["patient_extractor"] = checkehr().patient_extractor
            changes["ontology_extractor"] = None
        elif params.extraction == "ner":
            # loaded by name, as backends are (it builds on this module's stage types), and
            # only when asked for (numpy arrays)
            ner_extractor = importlib.import_module(NER_EXTRACTOR).ner_extractor
            # offline: the framework's steps read each tagged span; other backends get bare spans
            readers = tuple(x for x in (stages.patient_extractor, stages.ontology_extractor) if x is not None) \
                if stages.backend == "offline" else ()
            changes["patient_extractor"] = ner_extractor(params.ner_model, readers)
            changes["ontology_extractor"] = None
    return dataclasses.replace(stages, **changes) if changes else stages


def whole_note_segment(ctx: NoteContext) -> Segment:
    """The single segment used when segmentation is switched off."""
    return Segment(0, 0, max(len(ctx.lines) - 1, 0), "note", "other", ctx.default_window())


def add_usage(*usages: Usage) -> Usage:
    """Sum of usages (records are frozen, so this builds a new one)."""
    return Usage(
        calls=sum(u.calls for u in usages),
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        thinking_tokens=sum(u.thinking_tokens for u in usages),
        cost_usd=sum(u.cost_usd for u in usages),
    )
