"""One admission under construction: its fixed facts, its random stream and its rows.

The component modules (vitals, assessments, labs, microbiology, orders, outputs,
procedures) each add the rows of one table family to an :class:`Admission`, in the order
:mod:`ehrlib.synth.tables.hospital` runs them, and read what earlier ones decided
(intubation, pressor hours, transfusions): values trigger therapies that change later
values, so they share this one object and one ``numpy`` random stream, and the order of
draws is the order of the steps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ehrlib.synth.dictionaries import CATEGORICAL_VALUES, CHART_ITEMS, INPUT_ITEMS, DbSource
from ehrlib.synth.storylines import Storyline

__all__ = ["MINUTE", "Stay", "Admission", "ts", "day_of", "hold"]


#: One minute, the charting resolution.
MINUTE = np.timedelta64(1, "m")


def ts(t0: np.datetime64, hours) -> Any:
    """Admission origin + hours, rounded to the minute (scalar or array)."""
    minutes = np.rint(np.asarray(hours, dtype=float) * 60).astype("int64")
    out = t0 + minutes * MINUTE
    return out if np.ndim(out) else pd.Timestamp(out)


def day_of(ts: pd.Timestamp) -> pd.Timestamp:
    """The calendar day (date columns)."""
    return pd.Timestamp(ts).normalize()


@dataclass(frozen=True, slots=True)
class Stay:
    """Fixed facts of one admission the components share (times in hours from admit)."""

    subject_id: int
    hadm_id: int
    icustay_id: int
    t0: np.datetime64
    icu_in: float
    icu_out: float
    disch: float
    source: DbSource
    weight: float
    story: Storyline
    comorbidities: tuple[str, ...] = ()


class Admission:
    """Builds every row of one admission; the component functions run in dependency order."""

    # set by the components (vitals), read by later ones
    intubated: tuple[float, float] | None
    on_pressor: np.ndarray
    aline: tuple[float, float] | None
    vit: pd.DataFrame
    hours: np.ndarray
    clock: np.ndarray

    def __init__(self, stay: Stay, rng: np.random.Generator, rows: dict[str, list[dict]],
                 frames: list[dict], events: dict[str, float]):
        self.s, self.rng, self.rows, self.frames, self.events = stay, rng, rows, frames, events
        st = stay.story
        self.peak = stay.icu_in + rng.uniform(*st.peak_h)
        self.decay = rng.uniform(*st.decay_h)
        self.surgical = st.surgery is not None
        self.t0h = pd.Timestamp(stay.t0).hour + pd.Timestamp(stay.t0).minute / 60
        self.transfused: list[tuple[float, int]] = []  # (hours, units)
        self.drips: list[tuple[str, tuple[tuple[float, float, float], ...]]] = []  # (input key, segments)
        self.k_repleted: list[float] = []

    def severity(self, h):
        """0 (well) .. 1 (peak): rises from 0.35 on arrival to 1 at the peak, then decays."""
        h = np.asarray(h, dtype=float)
        rise = 0.35 + 0.65 * np.clip((h - 0.0) / max(self.peak, 0.5), 0, 1)
        fall = np.exp(-(h - self.peak) / self.decay)
        out = np.where(h < self.peak, rise, fall)
        if self.surgical:  # healthy until the operation
            out = np.where(h < self.events["surgery"], 0.0, np.where(h < self.peak, 1.0, fall))
        return out

    def chart(self, concept: str, hours, values, text=None) -> None:
        """Append chart rows for one concept (numbers, or categorical ``text``)."""
        item = CHART_ITEMS[concept]
        itemid = item.itemid(self.s.source)
        hours = np.asarray(hours, dtype=float)
        if itemid is None or hours.size == 0:
            return
        times = ts(self.s.t0, hours)
        if text is None:
            values = np.asarray(values, dtype=float)
            value = [_fmt_num(v) for v in values]
            valuenum = values
        else:
            value = list(text)
            valuenum = np.asarray(values, dtype=float) if values is not None else np.full(hours.size, np.nan)
        mv = self.s.source == "metavision"
        self.frames.append({  # one chunk of chart rows; scalars are broadcast in chart_frame
            "subject_id": self.s.subject_id, "hadm_id": self.s.hadm_id, "icustay_id": self.s.icustay_id,
            "itemid": itemid, "charttime": times,
            "storetime": times + (self.rng.integers(2, 40, hours.size) * MINUTE),
            "value": np.asarray(value, dtype=object), "valuenum": valuenum, "valueuom": item.unit(self.s.source),
            "warning": 0 if mv else None, "error": 0 if mv else None,
            "resultstatus": None if mv else "Manual", "stopped": None if mv else "NotStopd",
        })

    def clock_hours(self, start: float, stop: float) -> np.ndarray:
        """Hours (from the admission minute) that fall on a clock hour in [start, stop]:
        MIMIC charts hourly values at :00.
        """
        return np.arange(math.ceil(start + self.t0h), math.floor(stop + self.t0h) + 1, dtype=float) - self.t0h

    def vocab(self, concept: str, state: str, key: str | None = None) -> str:
        """The charted text of a categorical state, in this stay's charting system."""
        mv, cv = CATEGORICAL_VALUES[key or concept][state]
        return mv if self.s.source == "metavision" else cv

    def event(self, name: str, hours: float) -> None:
        """Record the first time of a storyline event (the notes anchor to it)."""
        self.events.setdefault(name, hours)

    def input_event(self, key: str, start: float, end: float, amount: float, rate: float | None,
                    status: str = "FinishedRunning", orderid: int | None = None) -> None:
        """One MetaVision interval row, or CareVue hourly point rows for the same dose."""
        item = INPUT_ITEMS[key]
        s = self.s
        if orderid is None:
            orderid = int(self.rng.integers(1_000_000, 9_999_999))
        if s.source == "metavision":
            self.rows["inputevents_mv"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "starttime": ts(s.t0, start), "endtime": ts(s.t0, end), "itemid": item.mv,
                "amount": round(amount, 3), "amountuom": item.amount_unit,
                "rate": None if rate is None else round(rate, 3), "rateuom": item.rate_unit if rate else None,
                "ordercategoryname": item.category, "statusdescription": status,
                "originalamount": round(amount, 3), "originalrate": None if rate is None else round(rate, 3),
                "orderid": orderid, "patientweight": s.weight,
            })
            return
        if item.cv is None:
            return
        # CareVue charts a running drip once an hour on the clock hour (amount given that
        # hour), a bolus once
        hours = self.clock_hours(start, end - 1 / 60) if rate else np.array([start])
        if hours.size == 0:
            hours = np.array([start])
        per = amount / len(hours)
        for h in hours:
            self.rows["inputevents_cv"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "charttime": ts(s.t0, h), "itemid": item.cv, "amount": round(per, 3),
                "amountuom": item.cv_amount_unit, "rate": None if rate is None else round(rate, 3),
                "rateuom": item.cv_rate_unit if rate else None, "originalamount": round(per, 3),
                "originalamountuom": item.cv_amount_unit, "originalroute": item.cv_route,
                "originalrate": None if rate is None else round(rate, 3),
                "originalrateuom": item.cv_rate_unit if rate else None, "orderid": orderid,
            })

    def drip(self, key: str, hours: np.ndarray, rates: np.ndarray, per_minute: float) -> None:
        """Chart a titrated drip as rate segments (one MetaVision row per rate).

        ``per_minute`` converts rate x minutes into the amount unit (e.g. weight / 1000 for mcg/kg/min
        charted in mg, 1 / 60 for units/hour).
        """
        if hours.size == 0:
            return
        orderid = int(self.rng.integers(1_000_000, 9_999_999))
        seg_start = 0
        segments = []
        for i in range(1, hours.size + 1):
            if i == hours.size or rates[i] != rates[seg_start] or hours[i] != hours[i - 1] + 1:
                start, end = float(hours[seg_start]), float(hours[i - 1]) + 1.0
                rate = float(rates[seg_start])
                minutes = (end - start) * 60
                amount = rate * minutes * per_minute
                last = i == hours.size
                self.input_event(key, start, end, amount, rate, "FinishedRunning" if last else "Changed", orderid)
                segments.append((start, end, rate))
                seg_start = i
        self.drips.append((key, tuple(segments)))


def hold(rates: np.ndarray, every: int) -> np.ndarray:
    """Keep a titrated rate for ``every`` hours before the next change (nurses titrate in steps, not every hour)."""
    out = rates.copy()
    for i in range(out.size):
        out[i] = rates[(i // every) * every]
    return out


def _fmt_num(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:g}"
