"""The record contracts shared by the corpus, the pipeline and the judge.

Field names follow DESIGN.md's data contracts and must stay stable: they are the JSONL
columns researchers load with ``pd.read_json(path, lines=True)``. Each record converts
to and from a plain dict; :func:`from_dict` validates and names the offending field, so
a loader can report "line 12, field 'label': ...".
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from ehrlib.errors import EhrlibError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "SCHEMA_VERSION",
    "NoteType",
    "Label",
    "TimeBasis",
    "TIME_BASES",
    "ItemRef",
    "RowRef",
    "TimeSpan",
    "Inconsistency",
    "Note",
    "GoldEntity",
    "ToolCallRecord",
    "Usage",
    "Prediction",
    "Judgement",
    "RecordError",
    "to_dict",
    "from_dict",
]

#: Bump when a field of any record changes meaning or name, or a field is added
#: (2: ``Prediction.rule_id``, the offline rule behind a verdict; 3: ``time_basis``,
#: ``deciding_row_ids``, ``confidence`` and ``abstained_from``, the fields a reviewer ranks
#: and trusts findings by).
SCHEMA_VERSION = 3

#: ``radiology`` (MIMIC-III Radiology, MIMIC-IV-Note RR/AR reports) is accepted so the
#: MIMIC importers keep those notes; the paper's benchmark types are the other three, and
#: the pipeline treats a radiology report like a physician note (docs/note_contract.md).
NoteType = Literal["discharge_summary", "physician", "nursing", "radiology"]
Label = Literal["consistent", "inconsistent"]
#: a prediction may also be "unverified": verification failed (a model call, a malformed
#: reply), so the entity was neither confirmed nor refuted and is never counted as consistent
PredictionLabel = Literal["consistent", "inconsistent", "unverified"]
NOTE_TYPES: tuple[str, ...] = get_args(NoteType)
#: the note types of the paper's benchmark: what a note import takes unless told otherwise
#: (radiology reports only on request: MIMIC-III has over 500 k and no table to check them on)
PAPER_NOTE_TYPES: tuple[str, ...] = ("discharge_summary", "physician", "nursing")
LABELS: tuple[str, ...] = get_args(Label)
PREDICTION_LABELS: tuple[str, ...] = get_args(PredictionLabel)
#: How a statement's time window was resolved, from the most to the least specific:
#: an explicit date with a clock time, an explicit calendar date, a relative day ("yesterday",
#: "POD 3", "on admission"), a part of a day ("overnight", "this shift"), a section's own
#: window (a results heading's time), the note's day (physician/nursing default) or the
#: whole hospitalization (discharge-summary default). ``later_time`` marks a statement that
#: itself names a time after the note's.
TimeBasis = Literal["explicit_time", "explicit_date", "relative_day", "part_of_day", "section_default",
                    "note_day", "hospitalization", "later_time"]
TIME_BASES: tuple[str, ...] = get_args(TimeBasis)


class RecordError(EhrlibError, ValueError):
    """A record does not match its contract; the message names the field.

    An :class:`~ehrlib.errors.EhrlibError` (the CLI prints one line) and a ValueError
    (callers that validate with ``except ValueError`` keep working).
    """


@dataclass(frozen=True, slots=True)
class ItemRef:
    """A table item an entity is aligned to (logical table name, item key, label)."""

    table: str
    label: str
    itemid: int | str | None = None


@dataclass(frozen=True, slots=True)
class RowRef:
    """One evidence row: logical table name and the row's id in that table."""

    table: str
    row_id: int | str


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A closed time window, ISO-8601 strings (date or timestamp)."""

    start: str | None = None
    end: str | None = None


@dataclass(frozen=True, slots=True)
class Inconsistency:
    """Why a gold entity is inconsistent.

    kind: ``column`` (a record exists but a column disagrees) or ``missing`` (no record).
    type: the paper's column-level taxonomy: time | value | interpretation | trend | other.
    """

    kind: Literal["column", "missing"]
    columns: tuple[str, ...] = ()
    type: Literal["time", "value", "interpretation", "trend", "other"] | None = None


@functools.lru_cache(maxsize=32)   # the notes in flight; str caches its hash, so a hit is O(1)
def _split_lines(text: str) -> list[str]:
    return text.split("\n")


@dataclass(frozen=True, slots=True)
class Note:
    """One clinical note of an admission, split into lines by ``lines``."""
    note_id: str
    subject_id: int
    hadm_id: int
    note_type: NoteType
    chartdate: str
    text: str
    charttime: str | None = None

    @property
    def lines(self) -> list[str]:
        """The note's lines; line numbers in every record index this list (from 0).

        Shared, do not modify: stages call this once per line they visit, and splitting
        the text on every call made a note of n lines cost O(n^2).
        """
        return _split_lines(self.text)


@dataclass(frozen=True, slots=True)
class GoldEntity:
    """One annotated statement of a note: its label, the table rows behind it and why."""
    note_id: str
    entity_id: str
    line: int
    entity: str
    label: Label
    items: tuple[ItemRef, ...] = ()
    columns: tuple[str, ...] = ()
    value: str | None = None
    time: TimeSpan | None = None
    inconsistency: Inconsistency | None = None
    evidence_row_ids: tuple[RowRef, ...] = ()
    reasoning: Literal["commonsense", "medical", "none"] = "none"
    medical_knowledge_source: str | None = None
    check_path: tuple[str, ...] = ()
    #: optional, machine-checkable form of what the note asserts, keyed by logical column
    #: or claim kind (e.g. {"valuenum": 2.3}, {"criterion": "fever", "holds": true},
    #: {"trend": "down"}); lets a checker or matcher re-derive the label from the tables.
    claim: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One traced tool call (the single source for trace graphs)."""

    tool: str
    args: Mapping[str, Any]
    n_rows: int = 0
    ms: float = 0.0
    error: str | None = None
    call_id: str | None = None
    step: int | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM calls, tokens and cost spent on one record (all zero offline)."""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True, slots=True)
class Prediction:
    """One method's verdict on one statement of a note, with its evidence rows and tool calls."""
    run_id: str
    note_id: str
    line: int
    entity: str
    label: PredictionLabel
    items: tuple[ItemRef, ...] = ()
    value: str | None = None
    temporal_status: Literal["past", "active", "plan"] = "active"
    time_window: TimeSpan | None = None
    inconsistency_type: Literal["contradiction", "missing"] | None = None
    reason: str = ""
    evidence_row_ids: tuple[RowRef, ...] = ()
    from_cache: bool = False
    tool_calls: tuple[ToolCallRecord, ...] = ()
    usage: Usage = field(default_factory=Usage)
    entity_id: str | None = None
    prompt_id: str | None = None
    failure: str | None = None
    #: the offline rule that decided (``<family>.<name>``); None for LLM verdicts
    rule_id: str | None = None
    #: how the statement's time window was resolved (:data:`TIME_BASES`); None when unknown
    time_basis: TimeBasis | None = None
    #: the rows that decided the verdict (the contradicting value, the extreme that breaks a
    #: stated range, the nearest agreeing row); ``evidence_row_ids`` starts with them
    deciding_row_ids: tuple[RowRef, ...] = ()
    #: probability in [0, 1] that the verdict is right (the calibrator's, see
    #: ``ehrlib calibrate``, or an LLM's own from its token log-probabilities); None when
    #: the run was uncalibrated
    confidence: float | None = None
    #: where ``confidence`` comes from: "calibrator" or "logprobs" (None: no confidence)
    confidence_source: Literal["calibrator", "logprobs"] | None = None
    #: set when a verdict was withheld for low confidence: the label the verifier gave,
    #: while ``label`` says ``unverified`` and ``reason`` starts with "low confidence"
    abstained_from: Label | None = None


@dataclass(frozen=True, slots=True)
class Judgement:
    """A judge's decision on one gold entity of a run (harsh or lenient matching)."""
    note_id: str
    entity_id: str
    mode: Literal["harsh", "lenient"]
    judge: str
    verdict: Literal["correct", "incorrect", "unparsed"]
    reason: str = ""
    matched_prediction: int | None = None
    raw: str | None = None


# --- dict conversion -------------------------------------------------------------------

_NESTED: dict[type, dict[str, tuple[type, bool]]] = {
    # record type -> field -> (nested record type, is a tuple of them)
    GoldEntity: {"items": (ItemRef, True), "time": (TimeSpan, False),
                 "inconsistency": (Inconsistency, False), "evidence_row_ids": (RowRef, True)},
    Prediction: {"items": (ItemRef, True), "time_window": (TimeSpan, False),
                 "evidence_row_ids": (RowRef, True), "tool_calls": (ToolCallRecord, True),
                 "usage": (Usage, False), "deciding_row_ids": (RowRef, True)},
}
_TUPLE_OF_STR = {"columns", "check_path"}
_CHOICES: dict[str, tuple[str, ...]] = {
    "note_type": NOTE_TYPES,
    "label": LABELS,
    "temporal_status": ("past", "active", "plan"),
    "inconsistency_type": ("contradiction", "missing"),
    "reasoning": ("commonsense", "medical", "none"),
    "mode": ("harsh", "lenient"),
    "verdict": ("correct", "incorrect", "unparsed"),
    "time_basis": TIME_BASES,
    "abstained_from": LABELS,
    "confidence_source": ("calibrator", "logprobs"),
}
_FREE_TEXT = {ItemRef}  # records whose `label` is a name, not a consistency label

R = TypeVar("R", bound="DataclassInstance")

#: Spellings of the three note types met in the wild (MIMIC-III NOTEEVENTS.CATEGORY
#: values, EHRCon files, hand-written corpora), normalised on load so a corpus written
#: by someone else does not fail on "Discharge summary" or "Nursing/other".
NOTE_TYPE_ALIASES: Mapping[str, str] = {
    "discharge_summary": "discharge_summary", "discharge summary": "discharge_summary",
    "discharge": "discharge_summary", "ds": "discharge_summary", "dischargesummary": "discharge_summary",
    "physician": "physician", "physician note": "physician", "physician_note": "physician",
    "progress note": "physician", "progress_note": "physician", "physician progress note": "physician",
    "md": "physician", "nursing": "nursing", "nursing/other": "nursing", "nursing note": "nursing",
    "nursing_note": "nursing", "nursing progress note": "nursing", "rn": "nursing",
    "radiology": "radiology", "radiology report": "radiology", "rr": "radiology",
}


def normalise_note_type(value: Any) -> Any:
    """The canonical note type for a known spelling; other values are returned unchanged
    (and then rejected by validation with the list of accepted values).
    """
    if isinstance(value, str):
        key = " ".join(value.strip().lower().replace("-", " ").split())
        return NOTE_TYPE_ALIASES.get(key, NOTE_TYPE_ALIASES.get(key.replace(" ", "_"), value))
    return value


#: identifiers: non-empty strings (an integer id would compare unequal to its string twin)
_ID_FIELDS = {"note_id", "entity_id", "run_id"}
#: patient and admission keys: integers (a float 10006.0 or "10006" would miss every join)
_INT_FIELDS = {"subject_id", "hadm_id"}
#: MIMIC shifts dates into 2100-2200 (birth dates of the oldest patients into the 1800s);
#: a year outside this range is a typo or garbage
YEAR_RANGE = (1700, 2300)


def check_timestamp(value: Any, what: str) -> str:
    """An ISO-8601 date or timestamp string within :data:`YEAR_RANGE`, returned unchanged;
    RecordError naming ``what`` and saying what is wrong otherwise.
    """
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"{what} must be an ISO date string (YYYY-MM-DD[ HH:MM:SS]), got {value!r}")
    text = value.strip()
    try:
        parsed = (_dt.datetime.fromisoformat(text) if len(text) > 10
                  else _dt.datetime.combine(_dt.date.fromisoformat(text), _dt.time()))
    except ValueError as exc:
        raise RecordError(f"{what}: {value!r} is not a valid date or time ({exc}); "
                          "expected YYYY-MM-DD or YYYY-MM-DD HH:MM:SS") from None
    if not YEAR_RANGE[0] <= parsed.year <= YEAR_RANGE[1]:
        raise RecordError(f"{what}: year {parsed.year} in {value!r} is outside {YEAR_RANGE[0]}..{YEAR_RANGE[1]}")
    return value


def _check_scalar(cls: type, name: str, value: Any, required: bool) -> None:
    """Type and format checks of the scalar fields every reader relies on."""
    where = f"{cls.__name__}: field '{name}'"
    if value is None:
        if required:
            raise RecordError(f"{where} is required and may not be null")
        return
    if name in _ID_FIELDS and (not isinstance(value, str) or not value.strip()):
        raise RecordError(f"{where} must be a non-empty string, got {value!r}"
                          + (" (quote it: ids are strings)" if isinstance(value, (int, float)) else ""))
    if name in _INT_FIELDS and (not isinstance(value, int) or isinstance(value, bool)):
        raise RecordError(f"{where} must be an integer, got {value!r}"
                          + (" (write it without a decimal point)" if isinstance(value, float) else ""))
    if cls is Note and name in ("chartdate", "charttime"):
        check_timestamp(value, where)
    if cls is Note and name == "text" and not isinstance(value, str):
        raise RecordError(f"{where} must be a string, got {type(value).__name__}")


#: exact types :func:`to_dict` passes through unchanged (the leaves of every record)
_LEAVES = frozenset({str, int, float, bool, type(None)})
#: dataclass type -> its field names (``dataclasses.fields`` costs a call per record otherwise)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def to_dict(record: Any) -> dict[str, Any]:
    """A JSON-ready dict (tuples become lists, nested records dicts)."""

    def conv(v: Any) -> Any:
        kind = type(v)
        if kind in _LEAVES:
            return v
        if kind is list or kind is tuple:
            return [conv(x) for x in v]
        if kind is dict:
            return {k: conv(x) for k, x in v.items()}
        names = _FIELD_NAMES.get(kind)
        if names is not None:
            return {name: conv(getattr(v, name)) for name in names}
        if dataclasses.is_dataclass(v):
            if isinstance(v, type):   # a dataclass type, not a record: every field (as dataclasses.fields gives)
                return {f.name: conv(getattr(v, f.name)) for f in dataclasses.fields(v)}
            return {name: conv(getattr(v, name)) for name in _field_names(kind)}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        if isinstance(v, Mapping):
            return {k: conv(x) for k, x in v.items()}
        return v

    return conv(record)


def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
    """Build and validate a record; raises RecordError naming the bad field."""
    if not isinstance(data, Mapping):
        raise RecordError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields) - {"schema_version"}
    if unknown:
        raise RecordError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")
    kwargs: dict[str, Any] = {}
    nested = _NESTED.get(cls, {})
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RecordError(f"{cls.__name__}: missing required field '{name}'")
            continue
        value = data[name]
        if cls is Note and name == "note_type":
            value = normalise_note_type(value)
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        _check_scalar(cls, name, value, required)
        if name in nested and value is not None:
            sub, many = nested[name]
            try:
                if many:
                    if not isinstance(value, (list, tuple)):
                        raise RecordError(f"expected a list, got {type(value).__name__}")
                    value = tuple(from_dict(sub, v) for v in value)
                else:
                    value = from_dict(sub, value)
            except RecordError as exc:
                raise RecordError(f"{cls.__name__}: field '{name}': {exc}") from None
        elif name in _TUPLE_OF_STR or (cls is Inconsistency and name == "columns"):
            if not isinstance(value, (list, tuple)):
                raise RecordError(f"{cls.__name__}: field '{name}' must be a list")
            value = tuple(str(v) for v in value)
        elif (name in _CHOICES and cls not in _FREE_TEXT and value is not None
              and value not in _CHOICES[name]):
            if not (cls is Prediction and name == "label" and value in PREDICTION_LABELS):
                raise RecordError(f"{cls.__name__}: field '{name}' must be one of {_CHOICES[name]}, got {value!r}")
        elif name == "confidence" and value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0):
            raise RecordError(f"{cls.__name__}: field 'confidence' must be a number in [0, 1], got {value!r}")
        elif name == "claim" and value is not None and not isinstance(value, Mapping):
            raise RecordError(f"{cls.__name__}: field 'claim' must be an object, got {type(value).__name__}")
        elif name == "line" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise RecordError(f"{cls.__name__}: field 'line' must be a non-negative integer, got {value!r}")
        kwargs[name] = value
    if cls is Inconsistency:
        if kwargs.get("kind") not in ("column", "missing"):
            raise RecordError("Inconsistency: field 'kind' must be 'column' or 'missing'")
    return cls(**kwargs)
