"""The forms a claim is read from: the typed on-disk form (``stages.jsonl`` schema version 3)
and the flat ``attributes`` mapping of earlier versions, also the short way to write a claim
in tests."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping

from ehrlib.corpus.records import RecordError
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

__all__ = ["CLAIM_TYPES", "claim_from_attributes", "claim_for", "claim_from_dict"]

CLAIM_TYPES: Mapping[str, type[Claim]] = {c.TYPE: c for c in (
    Claim, NumericClaim, InterpretationClaim, FindingClaim, MedicationClaim, ProcedureClaim, MicrobiologyClaim,
    CheckEhrClaim, OracleClaim)}

#: the claim type of each entity kind in the flat form of schema version <= 2
_TYPE_OF_KIND: Mapping[str, type[Claim]] = {
    "measurement": NumericClaim, "range": NumericClaim, "trend": NumericClaim, "output": NumericClaim,
    "interpretation": InterpretationClaim, "finding": FindingClaim, "medication": MedicationClaim,
    "infusion": MedicationClaim, "procedure": ProcedureClaim, "microbiology": MicrobiologyClaim,
}


def claim_from_attributes(kind: str, attributes: Mapping[str, Any]) -> Claim:
    """A claim from the flat ``attributes`` mapping of schema version <= 2 (entity kind decides
    the type). Keys no claim type knows raise :class:`RecordError`, naming them."""
    a = dict(attributes)
    base = {"concept": a.pop("concept", None), "section": a.pop("section", None)}
    if not a:
        cls: type[Claim] = Claim
    elif "entity_type" in a:
        cls = CheckEhrClaim
    elif "gold_label" in a:
        cls = OracleClaim
    else:
        cls = _TYPE_OF_KIND.get(kind, Claim)
    unknown = sorted(set(a) - set(cls.FLAT_KEYS))
    if unknown:
        raise RecordError(f"{kind} attributes: unknown key(s) {unknown} for a {cls.__name__}")
    if "negated" in a:
        base["negated"] = a.pop("negated")
    return cls.from_flat(a, base)


def claim_for(kind: str, **attributes: Any) -> Claim:
    """Shorthand for tests and examples: ``claim_for("measurement", value=20.0, concept="wbc")``."""
    return claim_from_attributes(kind, attributes)


_PARTS: Mapping[str, type] = {"reading": Reading, "bp": BloodPressure, "trend": Trend}


def _build(cls: type, data: Mapping[str, Any], where: str) -> Any:
    names = {f.name: f for f in fields(cls) if f.init}
    unknown = sorted(set(data) - set(names) - {"type"})
    if unknown:
        raise RecordError(f"{where}: unknown field(s) {unknown}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        if name == "type":
            continue
        if name in _PARTS and value is not None:
            if not isinstance(value, Mapping):
                raise RecordError(f"{where}: field '{name}' must be an object")
            value = _build(_PARTS[name], value, f"{where}.{name}")
        elif name in ("systolic", "diastolic", "mean") and value is not None:
            value = _build(Reading, value, f"{where}.{name}")
        elif isinstance(value, list):
            value = tuple(tuple(x) if isinstance(x, list) else x for x in value)
        kwargs[name] = value
    return cls(**kwargs)


def claim_from_dict(data: Mapping[str, Any] | None, kind: str = "event") -> Claim:
    """Read a claim as written to disk: the typed form (with ``type``) of schema version 3,
    or, for older records, the flat ``attributes`` mapping of an entity of ``kind``."""
    if data is None:
        return Claim()
    if not isinstance(data, Mapping):
        raise RecordError(f"claim: expected an object, got {type(data).__name__}")
    if "type" not in data:
        return claim_from_attributes(kind, data)
    cls = CLAIM_TYPES.get(str(data["type"]))
    if cls is None:
        raise RecordError(f"claim: unknown type {data['type']!r}; known: {sorted(CLAIM_TYPES)}")
    return _build(cls, data, cls.__name__)  # type: ignore[no-any-return]
