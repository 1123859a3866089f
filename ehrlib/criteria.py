"""Clinical criteria (``ehrlib/data/clinical_criteria.yaml``) as typed records.

The synthetic note writer uses them to decide whether "febrile" or "AKI" is true for an
admission before writing (or deliberately contradicting) it; the Get_Clinical_Criterion
tool shows them to a verifier and the offline rules test values against them. All read
the same file, so the benchmark and the method cannot drift apart on what "tachycardic"
means. The module sits below ``synth``, ``tools`` and ``pipeline`` so each can import it.
"""
from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any

import yaml

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.schema import LOGICAL

__all__ = [
    "CriterionTest",
    "Criterion",
    "load_criteria",
    "criterion",
    "compare",
    "criterion_holds",
    "CRITERIA_RESOURCE",
]

CRITERIA_RESOURCE = "clinical_criteria.yaml"

_OPS: Mapping[str, Callable[[float, float], bool]] = MappingProxyType({
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
})
_KINDS = ("threshold", "delta", "rate")


def compare(value: float, op: str, threshold: float) -> bool:
    """``value op threshold`` for one of ``< <= > >=``."""
    return _OPS[op](value, threshold)


def criterion_holds(op: str, value: float, threshold: float) -> bool:
    """Like :func:`compare`, but an unknown operator holds for no value (False, no error)."""
    fn = _OPS.get(op)
    return bool(fn(value, threshold)) if fn is not None else False


@cache
def _pattern(regex: str) -> re.Pattern[str]:
    """A test's label or fluid pattern, compiled once per process (case-insensitive)."""
    return re.compile(regex, re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CriterionTest:
    """One item-level test: which dictionary labels it applies to and the threshold."""

    table: str
    label: str
    unit: str = ""
    operator: str | None = None
    threshold: float | None = None
    fluid: str | None = None
    sex: str | None = None

    def matches(self, table: str, label: str | None, fluid: str | None = None) -> bool:
        """Does a dictionary item (logical table, label, lab fluid) fall under this test?"""
        if table != self.table or not label:
            return False
        if not _pattern(self.label).search(label.strip()):
            return False
        if self.fluid is not None and not _pattern(self.fluid).search((fluid or "").strip()):
            return False
        return True

    def applies_to_sex(self, sex: str | None) -> bool:
        """Whether the test holds for a patient of this sex (tests without a sex apply to all)."""
        return self.sex is None or (sex or "").upper()[:1] == self.sex

    def met(self, value: float) -> bool:
        """Whether ``value`` meets the threshold; a test without one is a ValueError."""
        if self.operator is None or self.threshold is None:
            raise ValueError(f"test on {self.label!r} has no operator/threshold")
        return compare(value, self.operator, self.threshold)


@dataclass(frozen=True, slots=True)
class Criterion:
    """A clinical state defined by table tests (e.g. fever: temperature above a threshold)."""
    id: str
    names: tuple[str, ...]
    negations: tuple[str, ...]
    kind: str
    tests: tuple[CriterionTest, ...]
    source_name: str
    source_content: str
    source_url: str | None = None
    rise: float | None = None
    within_hours: float | None = None
    ratio: float | None = None
    weight_tests: tuple[CriterionTest, ...] = ()
    default_weight_kg: float | None = None

    @property
    def source(self) -> str:
        """The citation a gold record stores as ``medical_knowledge_source``."""
        return f"{self.source_name}: {self.source_content}"

    def tests_for(self, table: str, label: str | None, fluid: str | None = None,
                  sex: str | None = None) -> list[CriterionTest]:
        """The tests that apply to an item of ``table`` with this label, fluid and patient sex."""
        return [t for t in self.tests if t.matches(table, label, fluid) and t.applies_to_sex(sex)]


def _test(raw: Mapping[str, Any], where: str) -> CriterionTest:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: a test must be a mapping")
    unknown = set(raw) - {"table", "label", "unit", "operator", "threshold", "fluid", "sex"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    table, label = raw.get("table"), raw.get("label")
    if not isinstance(table, str) or table not in LOGICAL:
        raise ConfigError(f"{where}: 'table' must be a logical table name, got {table!r}")
    if not isinstance(label, str):
        raise ConfigError(f"{where}: 'label' must be a regular expression string")
    try:
        re.compile(label)
    except re.error as exc:
        raise ConfigError(f"{where}: 'label' is not a valid regular expression: {exc}") from None
    op = raw.get("operator")
    if op is not None and op not in _OPS:
        raise ConfigError(f"{where}: 'operator' must be one of {sorted(_OPS)}, got {op!r}")
    threshold = raw.get("threshold")
    if (op is None) != (threshold is None):
        raise ConfigError(f"{where}: 'operator' and 'threshold' go together")
    sex = raw.get("sex")
    if sex is not None and sex not in ("M", "F"):
        raise ConfigError(f"{where}: 'sex' must be M or F, got {sex!r}")
    return CriterionTest(table, label, str(raw.get("unit", "")), op,
                         float(threshold) if threshold is not None else None, raw.get("fluid"), sex)


def _criterion(raw: Mapping[str, Any], where: str) -> Criterion:
    cid = raw.get("id")
    if not isinstance(cid, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", cid):
        raise ConfigError(f"{where}: 'id' must be lower_snake_case, got {cid!r}")
    where = f"{where} ({cid})"
    kind = raw.get("kind")
    if kind not in _KINDS:
        raise ConfigError(f"{where}: 'kind' must be one of {_KINDS}, got {kind!r}")
    names = tuple(raw.get("names") or ())
    if not names:
        raise ConfigError(f"{where}: 'names' must list at least one name")
    tests = tuple(_test(t, f"{where} tests[{i}]") for i, t in enumerate(raw.get("tests") or ()))
    if not tests:
        raise ConfigError(f"{where}: 'tests' must list at least one test")
    if kind in ("threshold", "rate") and any(t.operator is None for t in tests):
        raise ConfigError(f"{where}: every test of a {kind} criterion needs operator and threshold")
    if kind == "delta" and (raw.get("rise") is None or raw.get("within_hours") is None):
        raise ConfigError(f"{where}: a delta criterion needs 'rise' and 'within_hours'")
    src = raw.get("source") or {}
    if not src.get("name") or not src.get("content"):
        raise ConfigError(f"{where}: 'source' needs 'name' and 'content'")
    weight = tuple(_test(t, f"{where} weight[{i}]") for i, t in enumerate(raw.get("weight") or ()))
    return Criterion(
        id=cid, names=names, negations=tuple(raw.get("negations") or ()), kind=kind, tests=tests,
        source_name=str(src["name"]), source_content=str(src["content"]), source_url=src.get("url"),
        rise=raw.get("rise"), within_hours=raw.get("within_hours"), ratio=raw.get("ratio"),
        weight_tests=weight, default_weight_kg=raw.get("default_weight_kg"),
    )


def parse_criteria(text: str, where: str = CRITERIA_RESOURCE) -> Mapping[str, Criterion]:
    """Validate criteria YAML text; raises ConfigError naming the entry and key."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {exc}") from None
    return criteria_from_doc(doc, where)


def criteria_from_doc(doc: Any, where: str = CRITERIA_RESOURCE) -> Mapping[str, Criterion]:
    """Validate a parsed criteria document (left unchanged); raises ConfigError naming the entry and key."""
    if not isinstance(doc, Mapping) or doc.get("version") != 1 or not isinstance(doc.get("criteria"), list):
        raise ConfigError(f"{where}: expected 'version: 1' and a 'criteria' list")
    out: dict[str, Criterion] = {}
    for i, raw in enumerate(doc["criteria"]):
        crit = _criterion(raw, f"{where} criteria[{i}]")
        if crit.id in out:
            raise ConfigError(f"{where}: duplicate criterion id {crit.id!r}")
        out[crit.id] = crit
    return MappingProxyType(out)


@lru_cache(maxsize=1)
def load_criteria() -> Mapping[str, Criterion]:
    """The packaged criteria, by id (cached: the file is part of the package). The document is
    the one every reader of the file shares (:func:`ehrlib.datafiles.load_data`): parsed once per process.
    """
    return criteria_from_doc(load_data(CRITERIA_RESOURCE))


def criterion(cid: str) -> Criterion:
    """The criterion with id ``cid``; ConfigError naming the known ids otherwise."""
    try:
        return load_criteria()[cid]
    except KeyError:
        raise ConfigError(f"unknown clinical criterion {cid!r}; known: {sorted(load_criteria())}") from None
