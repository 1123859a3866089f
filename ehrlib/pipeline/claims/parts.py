"""The parts claims are made of: the numbers of one quantity, a blood pressure, a trend;
and the field checks every claim type shares."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from ehrlib.corpus.records import RecordError

__all__ = ["Reading", "BloodPressure", "Trend"]

_NUMBER = (int, float)


def check_number(owner: str, name: str, v: Any) -> None:
    if v is not None and (isinstance(v, bool) or not isinstance(v, _NUMBER)):
        raise RecordError(f"{owner}: field '{name}' must be a number, got {v!r}")


def check_text(owner: str, name: str, v: Any) -> None:
    if v is not None and not isinstance(v, str):
        raise RecordError(f"{owner}: field '{name}' must be a string, got {v!r}")


def check_texts(owner: str, name: str, v: Any) -> None:
    if not isinstance(v, tuple) or not all(isinstance(x, str) for x in v):
        raise RecordError(f"{owner}: field '{name}' must be a tuple of strings, got {v!r}")



@dataclass(frozen=True, slots=True)
class Reading:
    """The numbers written for one quantity.

    ``min_hi`` / ``max_lo`` bound an extreme written as a decade: "SBP 80s-140s" puts the
    minimum in [80, 89] (``min`` 80, ``min_hi`` 89) and the maximum in [140, 149]
    (``max_lo`` 140, ``max`` 149); "peaked at 12.7" is ``max`` = ``max_lo`` = 12.7.
    """

    value: float | None = None
    min: float | None = None
    min_hi: float | None = None
    max: float | None = None
    max_lo: float | None = None

    _KEYS: ClassVar[tuple[str, ...]] = ("value", "min", "min_hi", "max", "max_lo")

    def __post_init__(self) -> None:
        for k in self._KEYS:
            check_number("Reading", k, getattr(self, k))
        if self.min is not None and self.min_hi is not None and self.min_hi < self.min:
            raise RecordError(f"Reading: min_hi {self.min_hi} is below min {self.min}")
        if self.max is not None and self.max_lo is not None and self.max_lo > self.max:
            raise RecordError(f"Reading: max_lo {self.max_lo} is above max {self.max}")

    @property
    def empty(self) -> bool:
        return all(getattr(self, k) is None for k in self._KEYS)

    @property
    def has_bounds(self) -> bool:
        """Whether a minimum or maximum is stated (a range, not one value)."""
        return self.min is not None or self.max is not None

    def scaled(self, factor: float) -> Reading:
        """Every number times ``factor`` (a unit change: litres to millilitres)."""
        return Reading(*(None if getattr(self, k) is None else float(getattr(self, k)) * factor for k in self._KEYS))

    @classmethod
    def from_flat(cls, a: Mapping[str, Any], prefix: str = "", value_key: str = "value") -> Reading:
        return cls(a.get(value_key), *(a.get(prefix + k) for k in cls._KEYS[1:]))


@dataclass(frozen=True, slots=True)
class BloodPressure:
    """``110/60(75) {95/50(62) - 130/80(90)}``: each component's value and the period's bounds."""

    systolic: Reading | None = None
    diastolic: Reading | None = None
    mean: Reading | None = None

    PARTS: ClassVar[tuple[str, ...]] = ("systolic", "diastolic", "mean")

    def __post_init__(self) -> None:
        for p in self.PARTS:
            if getattr(self, p) is not None and not isinstance(getattr(self, p), Reading):
                raise RecordError(f"BloodPressure: field '{p}' must be a Reading")

    def part(self, name: str) -> Reading:
        """The component ``name`` (an empty reading when not written)."""
        return getattr(self, name) or Reading()

    @property
    def has_bounds(self) -> bool:
        return any(self.part(p).has_bounds for p in self.PARTS)


@dataclass(frozen=True, slots=True)
class Trend:
    """A change over time: the direction, the word that said it, and the values in order."""

    #: "up", "down", "stable", ... (None: a peak or nadir word, which states an extreme)
    direction: str | None = None
    word: str | None = None
    #: "cleared", "normalized": back within the normal range
    normalized: bool = False
    #: the values the note lists, oldest first ("Cr 2.3 -> 1.8 -> 1.2")
    series: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        check_text("Trend", "direction", self.direction)
        check_text("Trend", "word", self.word)
        if not isinstance(self.series, tuple):
            raise RecordError("Trend: field 'series' must be a tuple of numbers")
        for x in self.series:
            check_number("Trend", "series", x)
