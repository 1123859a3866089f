"""The claim types, one per shape of statement extraction produces (see the package docstring)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar

from ehrlib.corpus.records import RecordError
from ehrlib.pipeline.claims.parts import (
    BloodPressure,
    Reading,
    Trend,
    check_number,
    check_text,
    check_texts,
)

__all__ = ["Claim", "NumericClaim", "InterpretationClaim", "FindingClaim", "MedicationClaim", "ProcedureClaim",
           "MicrobiologyClaim", "CheckEhrClaim", "OracleClaim"]


@dataclass(frozen=True, slots=True)
class Claim:
    """A statement with nothing parsed beyond its concept; also the base of every claim type.

    ``concept`` is the offline vocabulary's concept id (or criterion id), ``section`` the
    note section the statement sits in; both are None for LLM-extracted entities.
    Construct claims with keywords: the base fields come first.
    """

    type: str = field(default="plain", init=False)
    concept: str | None = None
    section: str | None = None
    #: the note denies the statement ("no edema", "not on pressors", "afebrile" is a state)
    negated: bool = False

    TYPE: ClassVar[str] = "plain"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.negated, bool):
            raise RecordError(f"{type(self).__name__}: field 'negated' must be true or false, got {self.negated!r}")
        check_text(type(self).__name__, "concept", self.concept)
        check_text(type(self).__name__, "section", self.section)

    def stated(self) -> dict[str, Any]:
        """The fields that say something (not at their default), parts nested the same way:
        the compact form shown to a model (``{"concept": "wbc", "reading": {"value": 20.0}}``).
        """
        return _stated(self)

    def placed(self, concept: str | None, section: str | None) -> Claim:
        """The same claim with its concept and section set (what extraction knows last)."""
        return replace(self, concept=concept, section=section)

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes`` (``base``: concept, section, negated;
        keys checked by :func:`~ehrlib.pipeline.claims.claim_from_attributes`).
        """
        return cls(**base)


@dataclass(frozen=True, slots=True)
class NumericClaim(Claim):
    """Numbers about one item: a value, a range, a blood pressure, a trend, a day total."""

    type: str = field(default="numeric", init=False)
    reading: Reading = field(default_factory=Reading)
    unit: str | None = None
    bp: BloodPressure | None = None
    trend: Trend | None = None
    #: a rate ("UOP 50 cc/hr"), a day or shift total ("UOP 1.5 L/24h"), "~" / "about"
    per_hour: bool = False
    per_day: bool = False
    approx: bool = False
    #: the stated minimum or maximum is a bound every value of the period keeps ("MAPs > 65 all shift")
    bound: bool = False

    TYPE: ClassVar[str] = "numeric"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = (
        *Reading._KEYS, "unit", "series", "direction", "trend_word", "normalized", "per_hour", "per_day", "approx",
        "bound",
        *(p + s for p in BloodPressure.PARTS for s in ("", "_min", "_min_hi", "_max", "_max_lo")))

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_text("NumericClaim", "unit", self.unit)
        if not isinstance(self.reading, Reading):
            raise RecordError("NumericClaim: field 'reading' must be a Reading")
        if self.bp is not None and not isinstance(self.bp, BloodPressure):
            raise RecordError("NumericClaim: field 'bp' must be a BloodPressure")
        if self.trend is not None and not isinstance(self.trend, Trend):
            raise RecordError("NumericClaim: field 'trend' must be a Trend")

    @property
    def has_numbers(self) -> bool:
        """Whether a value or bound is stated (not only a trend word)."""
        r = self.reading
        return (r.value is not None or r.min is not None or r.max is not None
                or (self.bp is not None and any(
                    self.bp.part(p).value is not None or self.bp.part(p).min is not None
                    or self.bp.part(p).max is not None for p in BloodPressure.PARTS)))

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        bp = None
        if any(k.startswith(BloodPressure.PARTS) for k in a):
            parts = {p: Reading.from_flat(a, p + "_", p) for p in BloodPressure.PARTS}
            bp = BloodPressure(**{p: (r if not r.empty else None) for p, r in parts.items()})
        trend = None
        if any(k in a for k in ("series", "direction", "trend_word", "normalized")):
            trend = Trend(a.get("direction"), a.get("trend_word"), bool(a.get("normalized")),
                          tuple(a.get("series") or ()))
        return cls(**base, reading=Reading.from_flat(a), unit=a.get("unit"), bp=bp, trend=trend,
                   per_hour=bool(a.get("per_hour")), per_day=bool(a.get("per_day")), approx=bool(a.get("approx")),
                   bound=bool(a.get("bound")))


@dataclass(frozen=True, slots=True)
class InterpretationClaim(Claim):
    """A state judged with a clinical criterion, with the value or duration the note gives."""

    type: str = field(default="interpretation", init=False)
    criterion: str = ""
    #: the words of the state as written ("febrile", "tachycardic to")
    state: str = ""
    reading: Reading = field(default_factory=Reading)
    unit: str | None = None
    duration_days: float | None = None

    TYPE: ClassVar[str] = "interpretation"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("criterion", "state", "negated", *Reading._KEYS, "unit", "duration_days")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_text("InterpretationClaim", "criterion", self.criterion)
        check_text("InterpretationClaim", "unit", self.unit)
        check_number("InterpretationClaim", "duration_days", self.duration_days)

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, criterion=str(a.get("criterion") or ""), state=str(a.get("state") or ""),
                   reading=Reading.from_flat(a), unit=a.get("unit"),
                   duration_days=a.get("duration_days"))


@dataclass(frozen=True, slots=True)
class FindingClaim(Claim):
    """A categorical exam finding: the words that describe it, negation and a grade ("2+")."""

    type: str = field(default="finding", init=False)
    words: str = ""
    grade: str | None = None

    TYPE: ClassVar[str] = "finding"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("words", "negated", "grade")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_text("FindingClaim", "words", self.words)
        check_text("FindingClaim", "grade", self.grade)

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, words=str(a.get("words") or ""), grade=a.get("grade"))


@dataclass(frozen=True, slots=True)
class MedicationClaim(Claim):
    """An order, administration, infusion or transfusion of one drug or a slash-joined group."""

    type: str = field(default="medication", init=False)
    #: normalised drug names ("vanc/zosyn" -> vancomycin, piperacillin-tazobactam)
    drugs: tuple[str, ...] = ()
    dose: float | None = None
    dose_unit: str | None = None
    rate: float | None = None
    rate_unit: str | None = None
    infusion: bool = False
    route: str | None = None
    freq: str | None = None
    #: "started", "stopped", "held", "repleted", ...
    action: str | None = None
    duration_days: float | None = None
    #: "vanc/zosyn day 5"
    course_day: int | None = None
    #: blood products: the number of units given
    units: float | None = None
    #: an electrolyte repletion: the concept whose low value it treats ("K 3.1, repleted")
    repletes: str | None = None

    TYPE: ClassVar[str] = "medication"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("drugs", "dose", "dose_unit", "rate", "rate_unit", "infusion", "route",
                                            "freq",
                                          "action", "duration_days", "course_day", "negated", "units", "for")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_texts("MedicationClaim", "drugs", self.drugs)
        for k in ("dose", "rate", "duration_days", "course_day", "units"):
            check_number("MedicationClaim", k, getattr(self, k))
        for k in ("dose_unit", "rate_unit", "route", "freq", "action", "repletes"):
            check_text("MedicationClaim", k, getattr(self, k))

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, drugs=tuple(str(d) for d in a.get("drugs") or ()), dose=a.get("dose"),
                   dose_unit=a.get("dose_unit"), rate=a.get("rate"), rate_unit=a.get("rate_unit"),
                   infusion=bool(a.get("infusion")), route=a.get("route"), freq=a.get("freq"), action=a.get("action"),
                   duration_days=a.get("duration_days"), course_day=a.get("course_day"),
                   units=a.get("units"), repletes=a.get("for"))


@dataclass(frozen=True, slots=True)
class ProcedureClaim(Claim):
    """A line, tube or procedure: what was done to it and on which side."""

    type: str = field(default="procedure", init=False)
    #: "placed", "removed", "d/c'd", ...
    action: str | None = None
    #: "r" / "l"
    side: str | None = None

    TYPE: ClassVar[str] = "procedure"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("action", "side", "negated")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_text("ProcedureClaim", "action", self.action)
        if self.side not in (None, "r", "l", "b"):
            raise RecordError(f"ProcedureClaim: field 'side' must be 'r', 'l' or 'b', got {self.side!r}")

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, action=a.get("action"), side=a.get("side"))


@dataclass(frozen=True, slots=True)
class MicrobiologyClaim(Claim):
    """A culture: specimen, what grew (or that nothing did) and the susceptibilities stated."""

    type: str = field(default="microbiology", init=False)
    #: the specimen word the microbiology table uses ("blood", "urine", "sputum")
    specimen: str = ""
    #: an organism pattern of the vocabulary, and the words the note used for it
    organism: str | None = None
    organism_text: str | None = None
    negative: bool = False
    positive: bool = False
    pending: bool = False
    #: "sensitive to vanc, zosyn": one interpretation for the listed antibiotics
    susceptibility: str | None = None
    antibiotics: tuple[str, ...] = ()
    pan_sensitive: bool = False
    #: per-antibiotic statements: (antibiotic, "S" / "R" / "I")
    sensitivities: tuple[tuple[str, str], ...] = ()
    #: "all blood cultures negative": every culture of the specimen in the stay so far
    every: bool = False

    TYPE: ClassVar[str] = "microbiology"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("specimen", "organism", "organism_text", "negative", "positive", "pending",
                                          "susceptibility", "antibiotics", "pan_sensitive", "sensitivities", "every")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        for k in ("specimen", "organism", "organism_text"):
            check_text("MicrobiologyClaim", k, getattr(self, k))
        if self.susceptibility not in (None, "S", "R", "I"):
            raise RecordError(f"MicrobiologyClaim: field 'susceptibility' must be S, R or I, got "
                              f"{self.susceptibility!r}")
        check_texts("MicrobiologyClaim", "antibiotics", self.antibiotics)
        if not isinstance(self.sensitivities, tuple) or not all(
                isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in self.sensitivities):
            raise RecordError("MicrobiologyClaim: field 'sensitivities' must be (antibiotic, level) pairs")

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, specimen=str(a.get("specimen") or ""), organism=a.get("organism"),
                   organism_text=a.get("organism_text"), negative=bool(a.get("negative")),
                   positive=bool(a.get("positive")), pending=bool(a.get("pending")),
                   susceptibility=a.get("susceptibility"), antibiotics=tuple(a.get("antibiotics") or ()),
                   pan_sensitive=bool(a.get("pan_sensitive")),
                   sensitivities=tuple((str(p[0]), str(p[1])) for p in a.get("sensitivities") or ()),
                   every=bool(a.get("every")))


@dataclass(frozen=True, slots=True)
class CheckEhrClaim(Claim):
    """The CheckEHR baseline's entity: its type and the tables and time filter it chose."""

    type: str = field(default="checkehr", init=False)
    entity_type: str = "other"
    tables: tuple[str, ...] = ()
    #: "admission", "date", "datetime", ... and the time the filter names
    time_filter: str = "admission"
    time: str | None = None

    TYPE: ClassVar[str] = "checkehr"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("entity_type", "tables", "time_filter", "time")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        check_texts("CheckEhrClaim", "tables", self.tables)
        check_text("CheckEhrClaim", "time", self.time)

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, entity_type=str(a.get("entity_type") or "other"), tables=tuple(a.get("tables") or ()),
                   time_filter=str(a.get("time_filter") or "admission"), time=a.get("time"))


@dataclass(frozen=True, slots=True)
class OracleClaim(Claim):
    """The bench oracle's entity: the gold answer it replays, and how many tool turns it takes."""

    type: str = field(default="oracle", init=False)
    gold_label: str = "consistent"
    #: the gold inconsistency kind ("missing", "column") or None
    gold_kind: str | None = None
    turns: int = 2

    TYPE: ClassVar[str] = "oracle"
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("gold_label", "kind", "turns")

    def __post_init__(self) -> None:
        Claim.__post_init__(self)
        if self.gold_label not in ("consistent", "inconsistent"):
            raise RecordError(f"OracleClaim: field 'gold_label' must be a label, got {self.gold_label!r}")
        check_number("OracleClaim", "turns", self.turns)

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], base: dict[str, Any]) -> Claim:
        """The claim from schema 2's flat ``attributes``."""
        return cls(**base, gold_label=str(a.get("gold_label") or "consistent"), gold_kind=a.get("kind"),
                   turns=int(a.get("turns", 2)))


def _stated(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(record):
        if f.name == "type":
            continue
        v = getattr(record, f.name)
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        if v == default:
            continue
        if isinstance(v, (Reading, BloodPressure, Trend)):
            v = _stated(v)
        elif isinstance(v, tuple):
            v = [list(x) if isinstance(x, tuple) else x for x in v]
        out[f.name] = v
    return out
