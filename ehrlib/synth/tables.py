"""Generate the synthetic hospital's rows, in the logical model (DataFrames).

One admission at a time: a storyline (:mod:`ehrlib.synth.storylines`) gives a severity
curve over the stay; vitals and labs follow it with patient-specific baselines and
noise; therapies are triggered by the generated values (fluids then norepinephrine when
the MAP drops below 65, PRBCs when the hemoglobin drops below 7.5, potassium when the
K is low, an insulin drip until the anion gap closes) and feed back into them; orders,
administrations, cultures, lines, drains and billing codes follow from what happened.
Everything is drawn from ``numpy.random.default_rng((seed, patient, admission))``, so
one seed gives the same hospital, and one patient does not shift another.

The per-admission work is small (hundreds of rows); hourly vitals are built with numpy
per stay. Bulk rows for benchmarks come from :mod:`ehrlib.synth.scale` in SQL.

Size: the generators of one admission feed each other (values trigger therapies that
change later values), so they share one module and one random stream.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ehrlib import schema
from ehrlib.synth.dictionaries import (
    CATEGORICAL_VALUES,
    CHART_ITEMS,
    INPUT_ITEMS,
    LAB_SPECS,
    OUTPUT_ITEMS,
    PROCEDURE_ITEMS,
    DbSource,
    lab_flag,
    load_dictionary,
)
from ehrlib.synth.storylines import (
    AB_ITEMIDS,
    ANTIBIOTIC_PANELS,
    COMMON_MEDS,
    COMORBIDITIES,
    STORYLINES,
    MedOrder,
    Storyline,
)

__all__ = ["STORYLINE_COLUMNS", "EXTRA_COLUMNS", "build_tables"]

#: Columns of the extra ``ehrlib_synth_storylines`` table.
STORYLINE_COLUMNS = ("subject_id", "hadm_id", "storyline", "event", "event_time")

#: Columns the generator fills beyond the logical model, per logical table; the
#: renderer (:mod:`ehrlib.synth.render`) turns them into physical-only columns
#: (insurance, MIMIC-IV specimen ids, ...) and otherwise drops them.
EXTRA_COLUMNS: dict[str, tuple[str, ...]] = {
    "patients": ("anchor_age", "anchor_year"),
    "admissions": ("insurance", "ethnicity", "marital_status", "language"),
    "icustays": ("dbsource", "wardid"),
    "labevents": ("specimen_id", "ref_range_lower", "ref_range_upper"),
    "inputevents_mv": ("orderid", "patientweight"),
    "inputevents_cv": ("orderid",),
    "microbiologyevents": ("isolate_num", "micro_specimen_id"),
    "prescriptions": ("order_time", "stop_time"),
    "procedures_icd": ("chartdate",),
    "emar": ("poe_id",),
}

_MIN = np.timedelta64(1, "m")
_GP_ORGANISMS = {80023, 80076, 80155, 80053}


def _ts(t0: np.datetime64, hours) -> Any:
    """Admission origin + hours, rounded to the minute (scalar or array)."""
    minutes = np.rint(np.asarray(hours, dtype=float) * 60).astype("int64")
    out = t0 + minutes * _MIN
    return out if np.ndim(out) else pd.Timestamp(out)


def _day(ts: pd.Timestamp) -> pd.Timestamp:
    return pd.Timestamp(ts).normalize()


@dataclass(frozen=True, slots=True)
class _Stay:
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


class _Admission:
    """Builds every row of one admission. Methods run in dependency order."""

    def __init__(self, stay: _Stay, rng: np.random.Generator, rows: dict[str, list[dict]],
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

    # --- the illness ---------------------------------------------------------------
    def severity(self, h):
        """0 (well) .. 1 (peak): rises from 0.35 on arrival to 1 at the peak, then decays."""
        h = np.asarray(h, dtype=float)
        rise = 0.35 + 0.65 * np.clip((h - 0.0) / max(self.peak, 0.5), 0, 1)
        fall = np.exp(-(h - self.peak) / self.decay)
        out = np.where(h < self.peak, rise, fall)
        if self.surgical:  # healthy until the operation
            out = np.where(h < self.events["surgery"], 0.0, np.where(h < self.peak, 1.0, fall))
        return out

    # --- helpers -------------------------------------------------------------------
    def _chart(self, concept: str, hours, values, text=None) -> None:
        """Append chart rows for one concept (numbers, or categorical ``text``)."""
        item = CHART_ITEMS[concept]
        itemid = item.itemid(self.s.source)
        hours = np.asarray(hours, dtype=float)
        if itemid is None or hours.size == 0:
            return
        times = _ts(self.s.t0, hours)
        if text is None:
            values = np.asarray(values, dtype=float)
            value = [_fmt_num(v) for v in values]
            valuenum = values
        else:
            value = list(text)
            valuenum = np.asarray(values, dtype=float) if values is not None else np.full(hours.size, np.nan)
        mv = self.s.source == "metavision"
        self.frames.append({  # one chunk of chart rows; scalars are broadcast in _chart_frame
            "subject_id": self.s.subject_id, "hadm_id": self.s.hadm_id, "icustay_id": self.s.icustay_id,
            "itemid": itemid, "charttime": times,
            "storetime": times + (self.rng.integers(2, 40, hours.size) * _MIN),
            "value": np.asarray(value, dtype=object), "valuenum": valuenum, "valueuom": item.unit(self.s.source),
            "warning": 0 if mv else None, "error": 0 if mv else None,
            "resultstatus": None if mv else "Manual", "stopped": None if mv else "NotStopd",
        })

    def _clock_hours(self, start: float, stop: float) -> np.ndarray:
        """Hours (from the admission minute) that fall on a clock hour in [start, stop]:
        MIMIC charts hourly values at :00."""
        return np.arange(math.ceil(start + self.t0h), math.floor(stop + self.t0h) + 1, dtype=float) - self.t0h

    def _vocab(self, concept: str, state: str, key: str | None = None) -> str:
        mv, cv = CATEGORICAL_VALUES[key or concept][state]
        return mv if self.s.source == "metavision" else cv

    def _event(self, name: str, hours: float) -> None:
        self.events.setdefault(name, hours)

    def _input(self, key: str, start: float, end: float, amount: float, rate: float | None,
               status: str = "FinishedRunning", orderid: int | None = None) -> None:
        """One MetaVision interval row, or CareVue hourly point rows for the same dose."""
        item = INPUT_ITEMS[key]
        s = self.s
        if orderid is None:
            orderid = int(self.rng.integers(1_000_000, 9_999_999))
        if s.source == "metavision":
            self.rows["inputevents_mv"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "starttime": _ts(s.t0, start), "endtime": _ts(s.t0, end), "itemid": item.mv,
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
        hours = self._clock_hours(start, end - 1 / 60) if rate else np.array([start])
        if hours.size == 0:
            hours = np.array([start])
        per = amount / len(hours)
        for h in hours:
            self.rows["inputevents_cv"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "charttime": _ts(s.t0, h), "itemid": item.cv, "amount": round(per, 3),
                "amountuom": item.cv_amount_unit, "rate": None if rate is None else round(rate, 3),
                "rateuom": item.cv_rate_unit if rate else None, "originalamount": round(per, 3),
                "originalamountuom": item.cv_amount_unit, "originalroute": item.cv_route,
                "originalrate": None if rate is None else round(rate, 3),
                "originalrateuom": item.cv_rate_unit if rate else None, "orderid": orderid,
            })

    def _drip(self, key: str, hours: np.ndarray, rates: np.ndarray, per_minute: float) -> None:
        """Chart a titrated drip as rate segments (one MetaVision row per rate).
        ``per_minute`` converts rate x minutes into the amount unit (e.g. weight / 1000
        for mcg/kg/min charted in mg, 1 / 60 for units/hour)."""
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
                self._input(key, start, end, amount, rate, "FinishedRunning" if last else "Changed", orderid)
                segments.append((start, end, rate))
                seg_start = i
        self.drips.append((key, tuple(segments)))

    # --- components ----------------------------------------------------------------
    def timeline(self) -> None:
        s, rng, st = self.s, self.rng, self.s.story
        self._event("admission", 0.0)
        self._event("icu_admission", s.icu_in)
        self._event("icu_discharge", s.icu_out)
        self._event("discharge", s.disch)
        self.intubated: tuple[float, float] | None = None
        if rng.random() < st.p_intubation:
            if self.surgical:
                start = self.events["surgery"] + rng.uniform(0.1, 0.4)
                end = s.icu_in + rng.uniform(4, 10)
            else:
                start = s.icu_in + rng.uniform(0.5, max(1.0, self.peak - s.icu_in))
                end = min(start + rng.uniform(30, 80), s.icu_out - 6)
            if end - start >= 3:
                self.intubated = (start, end)
                self._event("intubation", start)
                self._event("extubation", end)

    def vitals(self) -> None:
        s, rng, st = self.s, self.rng, self.s.story
        hours = self._clock_hours(s.icu_in, s.icu_out)
        clock = np.rint(hours + self.t0h).astype(int) % 24
        n = hours.size
        sev = self.severity(hours)
        d = st.vitals
        circ = np.sin(clock / 24 * 2 * np.pi)
        base = {"hr": rng.uniform(64, 88), "sbp": rng.uniform(112, 138), "dbp": rng.uniform(62, 80),
                "rr": rng.uniform(13, 18), "spo2": rng.uniform(95, 99), "temp_c": rng.uniform(36.6, 37.1)}
        hr = base["hr"] + d.get("hr", 0) * sev + 3 * circ + rng.normal(0, 3, n)
        sbp = base["sbp"] + d.get("sbp", 0) * sev + 4 * circ + rng.normal(0, 5, n)
        dbp = base["dbp"] + d.get("dbp", 0) * sev + 2 * circ + rng.normal(0, 3, n)
        rr = base["rr"] + d.get("rr", 0) * sev + rng.normal(0, 1.5, n)
        spo2 = base["spo2"] + d.get("spo2", 0) * sev + rng.normal(0, 0.8, n)
        temp = base["temp_c"] + d.get("temp_c", 0) * sev + rng.normal(0, 0.15, n)
        mean_raw = (sbp + 2 * dbp) / 3

        # fluids, then norepinephrine for a MAP below 65; the drip lifts the pressure
        self.on_pressor = np.zeros(n, dtype=bool)
        if "pressors" in st.traits and (mean_raw < 65).any():
            low = np.flatnonzero(mean_raw < 65)
            first, last = int(low[0]), int(low[-1])
            self._input("ns", hours[first], hours[first] + 0.5, 1000, 2000)
            start = min(first + int(rng.integers(1, 3)), n - 1)
            stop = min(last + int(rng.integers(3, 9)), n - 1)
            if stop > start:
                self.on_pressor[start:stop + 1] = True
                deficit = np.clip(68 - mean_raw, 0, None)
                lift = np.where(self.on_pressor, deficit + rng.uniform(0, 6, n), 0)
                sbp = sbp + lift * 1.1
                dbp = dbp + lift * 0.95
                idx = np.flatnonzero(self.on_pressor)
                rates = np.round(np.clip(0.03 + 0.012 * deficit[idx], 0.02, 0.4) / 0.01) * 0.01
                rates = _hold(rates, 3)
                self._drip("norepinephrine", hours[idx], rates, per_minute=s.weight / 1000)
                self._event("pressor_start", hours[idx[0]])
                self._event("pressor_stop", hours[idx[-1]] + 1)
                if mean_raw.min() < 55:
                    vidx = idx[: max(3, idx.size // 2)]
                    self._drip("vasopressin", hours[vidx], np.full(vidx.size, 0.04), per_minute=1.0)
        elif "fluids" in st.traits:
            self._input("lr" if rng.random() < 0.5 else "ns", hours[0] + 0.3, hours[0] + 1.3, 1000, 1000)

        intub = np.zeros(n, dtype=bool)
        if self.intubated:
            intub = (hours >= self.intubated[0]) & (hours < self.intubated[1])
            spo2 = np.where(intub, np.maximum(spo2, rng.normal(97, 1.2, n)), spo2)
            rr = np.where(intub, rng.normal(16, 1.2, n), rr)
        hr, sbp, dbp = np.rint(hr), np.rint(sbp), np.rint(dbp)
        mbp = np.rint((sbp + 2 * dbp) / 3)
        spo2, rr = np.clip(np.rint(spo2), 70, 100), np.clip(np.rint(rr), 6, 45)
        temp = np.round(temp, 1)
        self.vit = pd.DataFrame({"h": hours, "clock": clock, "hr": hr, "sbp": sbp, "dbp": dbp, "map": mbp, "rr": rr,
                                 "spo2": spo2, "temp_c": temp, "sev": sev, "intub": intub,
                                 "pressor": self.on_pressor})

        # arterial line: placed with the first pressor or the intubation, or in the OR
        aline_from = None
        if self.surgical and self.intubated:
            aline_from = self.events["surgery"] + 0.2
        elif self.on_pressor.any() or self.intubated:
            cands = [hours[self.on_pressor][0] - 0.5] if self.on_pressor.any() else []
            if self.intubated:
                cands.append(self.intubated[0] + 0.5)
            aline_from = min(cands)
        self.aline = (aline_from, s.icu_out - rng.uniform(4, 12)) if aline_from is not None else None

        keep = rng.random(n) > 0.02  # whole hours not charted
        arterial = np.zeros(n, dtype=bool)
        if self.aline:
            arterial = (hours >= self.aline[0]) & (hours < self.aline[1])
        nbp = keep & (~arterial | (clock % 4 == 0))

        def chart(concept, mask, vals):
            m = mask & (rng.random(n) > 0.03)
            self._chart(concept, hours[m], vals[m])

        chart("hr", keep, hr)
        chart("rr", keep, rr)
        chart("spo2", keep, spo2)
        chart("nbp_sys", nbp, sbp)
        chart("nbp_dia", nbp, dbp)
        chart("nbp_mean", nbp, mbp)
        art_d = rng.integers(-3, 6, n)
        chart("abp_sys", keep & arterial, sbp + art_d)
        chart("abp_dia", keep & arterial, dbp - 2)
        chart("abp_mean", keep & arterial, np.rint((sbp + art_d + 2 * (dbp - 2)) / 3))
        # temperature every 4 hours, in F, C or both (the same reading)
        q4 = keep & (clock % 4 == 0)
        unit = rng.random(n)
        chart("temp_f", q4 & (unit < 0.8), np.round(temp * 9 / 5 + 32, 1))
        chart("temp_c", q4 & (unit > 0.6), temp)
        if self.s.source == "metavision":
            self._chart("weight", [hours[0]], [round(s.weight, 1)])
        if self.intubated or self.on_pressor.any() or "cardiac" in st.traits:
            cvp = 8 + (6 if "edema" in st.traits else 0) * sev + rng.normal(0, 2, n)
            chart("cvp", keep & (clock % 2 == 0) & (hours >= (self.aline[0] if self.aline else hours[0])),
                  np.rint(cvp))
        if self.intubated:
            vq4 = intub & (clock % 4 == 1)
            fio2 = np.clip(np.rint((40 + 30 * sev + rng.normal(0, 5, n)) / 5) * 5, 30, 100)
            chart("fio2", vq4, fio2 if self.s.source == "metavision" else fio2 / 100)
            chart("peep", vq4, np.where(sev > 0.5, 8.0, 5.0))
            chart("tidal_volume", vq4, np.rint(rng.normal(470, 40, n)))
            mode = np.where(hours < self.intubated[1] - 8, "ac", "ps")
            self._chart("vent_mode", hours[vq4], None, [self._vocab("vent_mode", m) for m in mode[vq4]])
            self._sedation(hours[intub])
        self.hours, self.clock = hours, clock

    def _sedation(self, hours: np.ndarray) -> None:
        if hours.size == 0:
            return
        rng = self.rng
        rates = _hold(np.rint(rng.uniform(20, 50, hours.size) / 5) * 5, 6)
        self._drip("propofol", hours, rates, per_minute=self.s.weight / 1000)
        frates = _hold(np.rint(rng.uniform(25, 100, hours.size) / 25) * 25, 8)
        self._drip("fentanyl", hours, frates, per_minute=1 / 60 / 1000)

    def assessments(self) -> None:
        """Nursing assessments every 4 hours, derived from the vitals they describe."""
        s, rng, st, v = self.s, self.rng, self.s.story, self.vit
        q = v[(v.clock % 4 == 0) & (rng.random(len(v)) > 0.08)]
        if q.empty:
            return
        h, sev, intub = q.h.to_numpy(), q.sev.to_numpy(), q.intub.to_numpy()
        loc = np.where(intub, "sedated", np.where(sev > 0.75, "lethargic", np.where(sev > 0.45, "voice", "alert")))
        if st.name == "dka":
            loc = np.where(sev > 0.6, "stimulation", loc)
        self._chart("loc", h, None, [self._vocab("loc", x) for x in loc])
        gcs = {"alert": ("4", "5", "6"), "voice": ("3", "4", "6"), "lethargic": ("3", "4", "6"),
               "stimulation": ("2", "3", "5"), "sedated": ("2", "1", "5")}
        for i, part in enumerate(("gcs_eye", "gcs_verbal", "gcs_motor")):
            states = [gcs[x][i] for x in loc]
            self._chart(part, h, [float(x) for x in states], [self._vocab(part, x) for x in states])
        # rhythm every 2 hours from the heart rate (and atrial fibrillation while decompensated)
        q2 = v[(v.clock % 2 == 0)]
        afib = "afib" in st.traits and rng.random() < 0.7
        rhythm = np.where(q2.hr > 100, "tachy", np.where(q2.hr < 60, "brady", "sinus"))
        if afib:
            rhythm = np.where(q2.sev > 0.35, "afib", rhythm)
        self._chart("rhythm", q2.h.to_numpy(), None, [self._vocab("rhythm", x) for x in rhythm])
        # abdomen and bowel sounds by illness phase
        phase = np.clip(((1 - sev) * len(st.abdomen)).astype(int), 0, len(st.abdomen) - 1)
        self._chart("abdomen", h, None, [self._vocab("abdomen", st.abdomen[p]) for p in phase])
        bowel = np.where(st.name == "post_op_colectomy",
                         np.where(sev > 0.7, "absent", np.where(sev > 0.3, "hypo", "present")),
                         np.where((st.name == "dka") & (sev > 0.6), "hypo", "present"))
        self._chart("bowel_sounds", h, None, [self._vocab("bowel_sounds", x) for x in bowel])
        if "edema" in st.traits:
            where = "legs" if rng.random() < 0.6 else "pedal"
            amt = np.clip(np.rint(1 + 3 * sev), 1, 4).astype(int)
            self._chart("edema_location", h, None, [self._vocab("edema_location", where)] * len(h))
            self._chart("edema_amount", h, None, [self._vocab("edema_amount", str(a)) for a in amt])
        fever = q.temp_c.to_numpy() >= 38.3
        shock = (q["map"].to_numpy() < 65) | q.pressor.to_numpy()
        pale = "transfusion" in st.traits
        color = np.where(shock & (rng.random(len(q)) < 0.6), "mottled",
                         np.where(pale & (sev > 0.4), "pale", np.where(fever, "flushed", "normal")))
        self._chart("skin_color", h, None, [self._vocab("skin_color", x) for x in color])
        temp = np.where(fever, "hot", np.where(shock, "cool", "warm"))
        self._chart("skin_temp", h, None, [self._vocab("skin_temp", x) for x in temp])
        integ = "impaired" if self.surgical or rng.random() < 0.08 else "intact"
        self._chart("skin_integrity", h, None, [self._vocab("skin_integrity", integ)] * len(h))
        cond = np.where(shock, "clammy", np.where(fever | (sev > 0.7), "diaphoretic", "dry"))
        self._chart("skin_condition", h, None, [self._vocab("skin_condition", x) for x in cond])
        for concept in ("lung_lll", "lung_rll"):
            ill = st.lungs[int(rng.integers(0, len(st.lungs)))]
            lung = np.where(sev > 0.3, ill, "clear")
            self._chart(concept, h, None, [self._vocab(concept, x, "lung") for x in lung])
        spo2 = q.spo2.to_numpy()
        bipap = self.events.get("bipap_start")
        dev = np.where(intub, "ett", np.where(spo2 < 91, "nrb", np.where(sev > 0.25, "nc", "none")))
        if bipap is not None:
            dev = np.where((h >= bipap) & (h < self.events["bipap_stop"]), "bipap", dev)
        self._chart("o2_device", h, None, [self._vocab("o2_device", x) for x in dev])

    def respiratory_support(self) -> None:
        """BiPAP over the hours the saturation is below 92 without a tube (CHF, COPD)."""
        st, v = self.s.story, self.vit
        if "bipap" not in st.traits or self.intubated:
            return
        low = v[(v.spo2 < 92) & ~v.intub]
        if low.empty:
            return
        start, stop = float(low.h.iloc[0]), float(low.h.iloc[-1]) + self.rng.uniform(2, 6)
        stop = min(stop, self.s.icu_out - 1)
        if stop > start + 1:
            self._event("bipap_start", start)
            self._event("bipap_stop", stop)

    def labs(self) -> None:
        """Admission labs, then daily morning draws; values follow the severity curve."""
        s, rng, st = self.s, self.rng, self.s.story
        draws = [rng.uniform(0.3, 1.2)]
        day0 = (24 - pd.Timestamp(_ts(s.t0, 0)).hour + 4) % 24  # hours until the first 04:00
        h = day0 if day0 > 2 else day0 + 24
        while h < s.disch - 1:
            draws.append(h + rng.uniform(-0.5, 1.0))
            h += 24
        if self.surgical:
            draws.append(self.events["surgery"] + rng.uniform(5, 6.5))  # post-op labs on arrival in ICU
        if "pressors" in st.traits or "transfusion" in st.traits or st.name == "dka":
            draws += [s.icu_in + k * 6 + rng.uniform(0, 1) for k in (1, 2, 3)]  # q6h while unstable
        draws = sorted(d for d in draws if 0 < d < s.disch)
        base = {k: _baseline(spec, rng) for k, spec in LAB_SPECS.items()}
        specimen = int(rng.integers(1_000_000, 9_000_000))
        insulin_stop = None
        gap_closed = False
        for i, t in enumerate(draws):
            sev = float(self.severity(t))
            admission = i == 0
            morning = not admission and 2 <= pd.Timestamp(_ts(s.t0, t)).hour <= 6
            panels = {"cbc": admission or (morning and rng.random() < 0.95) or self.surgical
                      or "transfusion" in st.traits,
                      "chem": admission or (morning and rng.random() < 0.95) or not morning,
                      "lft": admission or (morning and rng.random() < 0.45),
                      "coag": admission or (morning and rng.random() < (0.9 if "transfusion" in st.traits else 0.3)),
                      "lactate": ("lactate" in st.labs and sev > 0.15) or (admission and rng.random() < 0.3),
                      "abg": ("abg" in st.traits and sev > 0.3) or bool(self.intubated and
                                                                         self.intubated[0] <= t < self.intubated[1]),
                      "cardiac": "cardiac" in st.traits and (admission or i <= 2)}
            values: dict[str, float] = {}
            for key, spec in LAB_SPECS.items():
                v = base[key]
                eff = st.labs.get(key)
                if eff:
                    v = v + eff[1] * sev if eff[0] == "add" else v * (1 + (eff[1] - 1) * sev)
                v += rng.normal(0, spec.sd * 0.35)
                values[key] = v
            units = sum(u for th, u in self.transfused if th < t)
            values["hgb"] += 1.0 * units
            values["hct"] = values["hgb"] * 3 + rng.normal(0, 0.8) if "hct" not in st.labs else values["hct"] + 3 * units
            values["potassium"] += 0.25 * sum(1 for th in self.k_repleted if th < t)
            values = {k: _clip_lab(k, v) for k, v in values.items()}
            values = {k: round(v, LAB_SPECS[k].decimals) for k, v in values.items()}
            values["anion_gap"] = values["sodium"] - values["chloride"] - values["bicarbonate"]
            panel_of = {"cbc": ("wbc", "hgb", "hct", "plt"),
                        "chem": ("sodium", "potassium", "chloride", "bicarbonate", "bun", "creatinine", "glucose",
                                 "anion_gap") + (("magnesium", "phosphate", "calcium") if rng.random() < 0.85 else ()),
                        "lft": ("alt", "ast", "alk_phos", "bilirubin", "albumin"),
                        "coag": ("inr", "pt", "ptt"), "lactate": ("lactate",),
                        "abg": ("ph", "pco2", "po2", "base_excess"), "cardiac": ("troponin_t", "ntprobnp")}
            specimen += 1
            drawn = [k for p, on in panels.items() if on for k in panel_of[p]]
            for key in drawn:
                spec = LAB_SPECS[key]
                self.rows["labevents"].append({
                    "subject_id": s.subject_id, "hadm_id": s.hadm_id, "itemid": spec.itemid,
                    "charttime": _ts(s.t0, t), "value": _fmt(values[key], spec.decimals),
                    "valuenum": values[key], "valueuom": spec.unit, "flag": lab_flag(spec, values[key]),
                    "specimen_id": specimen, "ref_range_lower": spec.low, "ref_range_upper": spec.high,
                })
            in_icu = s.icu_in <= t < s.icu_out
            # lab-triggered therapy: PRBCs, potassium, magnesium; the insulin drip stops
            if "transfusion" in st.traits and "hgb" in drawn and values["hgb"] < 7.5 and in_icu:
                n_units = 2 if values["hgb"] < 6.5 else 1
                start = t + rng.uniform(1, 2)
                for u in range(n_units):
                    self._input("prbc", start + 2 * u, start + 2 * u + 2, 350, 175)
                self.transfused.append((start, n_units))
                self._event("transfusion", start)
            if "potassium" in drawn and values["potassium"] < 3.5 and in_icu:
                start = t + rng.uniform(1, 2)
                self._input("kcl", start, start + 2, 20, None)
                self.k_repleted.append(start)
            if "magnesium" in drawn and values["magnesium"] < 1.7 and in_icu and s.source == "metavision":
                start = t + rng.uniform(1, 2)
                self._input("magnesium", start, start + 1, 2, None)
            if st.name == "dka" and "anion_gap" in drawn and not admission and not gap_closed:
                if values["anion_gap"] <= 14 and values["bicarbonate"] >= 18:
                    gap_closed = True
                    insulin_stop = t + rng.uniform(2, 3)
        if st.name == "dka":
            self._insulin_drip(insulin_stop)

    def _insulin_drip(self, stop: float | None) -> None:
        s, rng = self.s, self.rng
        start = max(s.icu_in, 0.5)
        stop = stop if stop and stop > start + 2 else min(s.icu_in + rng.uniform(14, 22), s.icu_out - 1)
        hours = self._clock_hours(start, stop - 1)
        if hours.size == 0:
            return
        rate = np.full(hours.size, round(0.1 * s.weight))
        rate[hours > start + 8] = max(1, round(0.05 * s.weight))
        self._drip("insulin", hours, rate, per_minute=1 / 60)
        self._event("insulin_drip_start", float(hours[0]))
        self._event("insulin_drip_stop", float(hours[-1]) + 1)
        self._input("ns", hours[0], hours[0] + 1, 1000, 1000)
        self._input("d5w", hours[0] + 6, float(hours[-1]) + 1, 100 * (hours[-1] - hours[0] - 5), 100)
        # hourly finger sticks while on the drip
        g0 = 480 + rng.normal(0, 40)
        fs = np.maximum(110, g0 - (hours - hours[0]) * rng.uniform(35, 55)) + rng.normal(0, 12, hours.size)
        self._chart("glucose_fs", hours + 0.5, np.rint(fs))

    def infection(self) -> None:
        """Cultures, then the first antibiotic dose 0.5-2.5 h later, then susceptibilities."""
        s, rng, st = self.s, self.rng, self.s.story
        inf = st.infection
        if inf is None:
            return
        t = max(0.3, s.icu_in - rng.uniform(0, 2)) if st.admission_type == "EMERGENCY" else s.icu_in + 1
        self._event("culture", t)
        self._event("first_antibiotic", t + rng.uniform(0.5, 2.5))
        org_itemid, org_name, resistant = inf.organisms[int(rng.integers(0, len(inf.organisms)))]
        micro_id = int(rng.integers(10_000, 99_999))
        for spec_itemid, spec_name in inf.specimens:
            micro_id += 1
            positive = spec_name == inf.positive_specimen or (spec_name == "BLOOD CULTURE" and rng.random() < 0.35)
            base = {"subject_id": s.subject_id, "hadm_id": s.hadm_id, "chartdate": _day(_ts(s.t0, t)),
                    "charttime": _ts(s.t0, t), "spec_itemid": spec_itemid, "spec_type_desc": spec_name,
                    "micro_specimen_id": micro_id}
            if not positive:
                self.rows["microbiologyevents"].append({**base, "org_itemid": None, "org_name": None})
                continue
            panel = ANTIBIOTIC_PANELS["gp" if org_itemid in _GP_ORGANISMS else "gn"]
            self.rows["microbiologyevents"].append({**base, "org_itemid": org_itemid, "org_name": org_name,
                                                     "isolate_num": 1})
            for ab in panel:
                r = rng.random()
                interp = "R" if ab in resistant else ("I" if r < 0.08 else "S")
                self.rows["microbiologyevents"].append({
                    **base, "org_itemid": org_itemid, "org_name": org_name, "isolate_num": 1,
                    "ab_itemid": AB_ITEMIDS[ab], "ab_name": ab, "interpretation": interp})
        if s.source == "metavision" and rng.random() < 0.6:  # admission surveillance swab
            self.rows["microbiologyevents"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "chartdate": _day(_ts(s.t0, s.icu_in + 1)),
                "charttime": _ts(s.t0, s.icu_in + 1), "spec_itemid": 70091, "spec_type_desc": "MRSA SCREEN",
                "micro_specimen_id": micro_id + 1})

    def orders(self) -> None:
        """PRESCRIPTIONS (date granularity, as MIMIC-III) and their administrations."""
        s, rng, st = self.s, self.rng, self.s.story
        meds = list(st.meds) + [m for m in COMMON_MEDS if rng.random() < 0.8]
        for key, segments in self.drips:  # every charted drip has its order and eMAR rows
            name, generic, strength, dose, unit = _DRIP_ORDERS[key]
            med = MedOrder(name, generic, strength, dose, unit, "1", "BAG", "IV", every_h=None)
            self._prescription(med, segments[0][0], segments[-1][1])
            self.rows["prescriptions"].append({**self.rows["prescriptions"][-1], "drug_type": "BASE",
                                               "drug": "Iso-Osmotic Dextrose", "drug_name_generic": None,
                                               "prod_strength": "250ml Bag", "dose_val_rx": "250",
                                               "dose_unit_rx": "ml", "form_val_disp": "250",
                                               "form_unit_disp": "ml"})
            rate_unit = INPUT_ITEMS[key].rate_unit
            for i, (start, _end, rate) in enumerate(segments):
                self._emar(med, start, "Started" if i == 0 else "Rate Change",
                           {"infusion_rate": f"{rate:g}", "infusion_rate_unit": rate_unit})
            self._emar(med, segments[-1][1], "Stopped", {"infusion_rate": "0", "infusion_rate_unit": rate_unit})
        for med in meds:
            start = self.events.get(med.start)
            if start is None:
                start = 0.5 if med.start != "first_antibiotic" else None
            if start is None:
                continue
            days = int(rng.integers(med.days[0], med.days[1] + 1))
            end = min(start + days * 24, s.disch)
            self._prescription(med, start, end)
            if med.every_h:
                self._administer(med, start, end)

    def _prescription(self, med: MedOrder, start: float, end: float) -> None:
        s = self.s
        sd, ed = _day(_ts(s.t0, start)), _day(_ts(s.t0, end))
        icu = s.icustay_id if s.icu_in - 12 <= start < s.icu_out else None
        self.rows["prescriptions"].append({
            "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": icu, "startdate": sd,
            "enddate": max(ed, sd), "order_time": _ts(s.t0, start), "stop_time": _ts(s.t0, max(end, start)),
            "drug_type": med.drug_type, "drug": med.drug,
            "drug_name_generic": med.generic, "prod_strength": med.strength, "dose_val_rx": med.dose,
            "dose_unit_rx": med.unit, "form_val_disp": med.form_val, "form_unit_disp": med.form_unit,
            "route": med.route,
        })

    def _administer(self, med: MedOrder, start: float, end: float) -> None:
        """Scheduled doses: eMAR rows always (rendered only in MIMIC-IV); IV doses given in
        the ICU are also charted as MetaVision inputs at the same minute."""
        s, rng = self.s, self.rng
        times = np.arange(start, end, med.every_h)
        for t in times:
            given = med.input_item is not None or rng.random() > 0.04
            late = rng.uniform(0, 0.4) * (med.input_item is None)  # IV doses: the charted input's minute
            self._emar(med, t + late, "Administered" if given else "Not Given",
                       {"dose_given": med.dose if given else "0"}, scheduled=t)
            if med.input_item and given and s.icu_in <= t < s.icu_out:
                item = INPUT_ITEMS[med.input_item]
                if item.amount_unit == "dose":  # MetaVision charts IV antibiotics as one "dose"
                    self._input(med.input_item, t, t + (2 if med.input_item == "vancomycin" else 0.5), 1, None)
                else:
                    self._input(med.input_item, t, t + 1 / 60, float(med.dose), None)

    def _emar(self, med: MedOrder, t: float, event: str, detail: dict, scheduled: float | None = None) -> None:
        """One administration event: an ``emar`` row and its ``emar_detail`` row."""
        s = self.s
        seq = len(self.rows["emar"]) + 1
        emar_id = f"{s.subject_id}-{seq}"
        self.rows["emar"].append({
            "subject_id": s.subject_id, "hadm_id": s.hadm_id, "emar_id": emar_id, "emar_seq": seq,
            "charttime": _ts(s.t0, t), "medication": med.drug, "event_txt": event,
            "scheduletime": _ts(s.t0, scheduled) if scheduled is not None else None,
            "poe_id": f"{s.subject_id}-{1000 + seq}",
        })
        self.rows["emar_detail"].append({
            "subject_id": s.subject_id, "emar_id": emar_id, "emar_seq": seq, "dose_given_unit": med.unit,
            "product_description": med.strength, "route": med.route, **detail,
        })

    def outputs(self) -> None:
        """Hourly Foley urine (oliguric at the peak; brisk after furosemide) and drains."""
        s, rng, st = self.s, self.rng, self.s.story
        hours = self.hours
        if hours.size == 0:
            return
        sev = self.severity(hours)
        renal = 0.85 if ("pressors" in st.traits or st.name in ("dka", "gi_bleed")) else 0.4
        ml_per_kg = np.clip(1.0 - renal * sev, 0.15, None) * rng.uniform(0.8, 1.2, hours.size)
        lasix = [r for r in self.rows["inputevents_mv"] + self.rows["inputevents_cv"]
                 if r["hadm_id"] == s.hadm_id and r["itemid"] in (INPUT_ITEMS["furosemide"].mv,
                                                                     INPUT_ITEMS["furosemide"].cv)]
        for r in lasix:
            h = (np.datetime64(r.get("starttime", r.get("charttime"))) - s.t0) / np.timedelta64(1, "h")
            ml_per_kg = ml_per_kg * np.where((hours > h) & (hours <= h + 4), 2.8, 1.0)
        urine = np.rint(ml_per_kg * s.weight / 5) * 5
        foley_until = min(s.icu_out, hours[-1] - rng.uniform(6, 18)) if hours.size > 24 else s.icu_out
        keep = rng.random(hours.size) > 0.05
        fol = keep & (hours < foley_until)
        self._output("foley", hours[fol], urine[fol])
        void = keep & (hours >= foley_until) & (self.clock % 4 == 0)
        self._output("void", hours[void], urine[void] * 4)
        for drain in st.drains:
            mask = (self.clock % (1 if drain == "chest_tube" else 4) == 0) & (hours < s.icu_out - 2)
            start_ml = {"chest_tube": 120, "jp_drain": 80, "ng_tube": 150}[drain]
            vol = np.rint(np.clip(start_ml * (0.2 + sev) + rng.normal(0, 10, hours.size), 0, None) / 5) * 5
            self._output(drain, hours[mask], vol[mask])

    def _output(self, concept: str, hours: np.ndarray, values: np.ndarray) -> None:
        s = self.s
        mv, cv = OUTPUT_ITEMS[concept]
        for h, v in zip(hours, values):
            self.rows["outputevents"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "charttime": _ts(s.t0, h), "itemid": mv if s.source == "metavision" else cv,
                "value": float(v), "valueuom": "mL" if s.source == "metavision" else "ml",
            })

    def procedures(self) -> None:
        """Lines, airway, imaging and cultures (MetaVision only; CareVue has no such table)."""
        s, rng, st = self.s, self.rng, self.s.story
        ev = self.events
        if s.source != "metavision":
            return

        def proc(key, start, end=None, location=None, loc_cat=None):
            minutes = None if end is None else round((end - start) * 60)
            self.rows["procedureevents_mv"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
                "starttime": _ts(s.t0, start), "endtime": _ts(s.t0, end if end is not None else start),
                "itemid": PROCEDURE_ITEMS[key], "value": minutes if minutes is not None else 1,
                "valueuom": "min" if minutes is not None else None, "location": location,
                "locationcategory": loc_cat, "statusdescription": "FinishedRunning",
            })

        piv = "piv18" if rng.random() < 0.5 else "piv20"
        proc(piv, max(0.1, s.icu_in - rng.uniform(1, 3)), s.icu_out - rng.uniform(1, 6),
             ["Right Antecubital", "L Antecube", "Left Hand", "R Forearm"][int(rng.integers(0, 4))], "Peripheral")
        proc("ekg", s.icu_in + rng.uniform(0.2, 1))
        proc("chest_xray", s.icu_in + rng.uniform(0.5, 2))
        if self.surgical:
            proc("or_received", s.icu_in)
        if self.aline:
            proc("arterial_line", self.aline[0], self.aline[1], ["Right Radial", "Left Radial"][int(rng.integers(0, 2))],
                 "Invasive Arterial")
            self._event("arterial_line", self.aline[0])
        if self.on_pressor.any() or self.surgical or st.name == "dka" and rng.random() < 0.5:
            start = (ev["pressor_start"] - rng.uniform(0.3, 1.0)) if "pressor_start" in ev else s.icu_in + 0.5
            if self.surgical:
                start = ev["surgery"] + 0.3
            site = ["Right IJ", "Left IJ", "Left Subclavian", "Right Femoral."][int(rng.integers(0, 4))]
            proc("multi_lumen", max(start, 0.1), s.icu_out - rng.uniform(2, 8), site, "Invasive Venous")
            self._event("central_line", max(start, 0.1))
            proc("chest_xray", max(start, 0.1) + 0.5)
        if self.intubated:
            a, b = self.intubated
            proc("intubation", a)
            proc("invasive_vent", a, b)
            proc("extubation", b)
            if not self.surgical:
                proc("chest_xray", a + 0.4)
        if "bipap_start" in ev:
            proc("niv", ev["bipap_start"], ev["bipap_stop"])
        if "culture" in ev and ev["culture"] >= s.icu_in:
            proc("blood_culture", ev["culture"])
            if st.infection and st.infection.positive_specimen == "SPUTUM":
                proc("sputum_culture", ev["culture"])
            if st.infection and st.infection.positive_specimen == "URINE":
                proc("urine_culture", ev["culture"])
        if "endoscopy" in st.traits:
            t = s.icu_in + rng.uniform(4, 14)
            proc("endoscopy", t, t + rng.uniform(0.5, 1.2))
            self._event("endoscopy", t)
        if "cardiac" in st.traits and not self.surgical:
            proc("echo", s.icu_in + rng.uniform(12, 30))

    def billing(self) -> None:
        """ICD-9 codes, kept true to the stay: no ventilation code without a tube, etc."""
        s, st, ev = self.s, self.s.story, self.events
        dx = list(st.icd9_dx) + [c for c in s.comorbidities if c not in st.icd9_dx]
        for seq, code in enumerate(dx, 1):
            self.rows["diagnoses_icd"].append({"subject_id": s.subject_id, "hadm_id": s.hadm_id, "seq_num": seq,
                                               "icd9_code": code, "icd_version": 9})
        requires = {"9671": "intubation", "9672": "intubation", "9604": "intubation", "9904": "transfusion",
                    "3891": "arterial_line", "3893": "central_line", "4443": "endoscopy", "9390": "bipap_start"}
        px = [c for c in st.icd9_px if c not in requires or requires[c] in ev]
        if "transfusion" in ev and "9904" not in px:
            px.append("9904")
        if "intubation" in ev and not self.surgical:
            dur = ev["extubation"] - ev["intubation"]
            px = [c for c in px if c not in ("9671", "9672")] + ["9672" if dur >= 96 else "9671"]
        for seq, code in enumerate(px, 1):
            when = ev.get(requires[code]) if code in requires else ev.get("surgery", s.icu_in)
            self.rows["procedures_icd"].append({"subject_id": s.subject_id, "hadm_id": s.hadm_id, "seq_num": seq,
                                                "icd9_code": code, "icd_version": 9,
                                                "chartdate": _day(_ts(s.t0, when if when is not None else 0))})

    def run(self) -> None:
        self.timeline()
        self.vitals()
        self.respiratory_support()
        self.assessments()
        self.infection()
        self.labs()
        self.orders()
        self.outputs()
        self.procedures()
        self.billing()


#: Input key -> the PRESCRIPTIONS order of a titrated drip (drug, generic, strength, dose, unit).
_DRIP_ORDERS = {
    "norepinephrine": ("NORepinephrine", "Norepinephrine Bitartrate", "4mg/250mL Premix", "0.03-0.25", "mcg/kg/min"),
    "vasopressin": ("Vasopressin", "Vasopressin", "20 Units/100 mL Premix", "0.04", "UNIT/MIN"),
    "insulin": ("Insulin", "Insulin Regular Human", "100 Units / mL - 10 mL Vial", "0.1", "UNIT/KG/HR"),
    "propofol": ("Propofol", "Propofol", "1000mg/100mL Vial", "5-50", "mcg/kg/min"),
    "fentanyl": ("Fentanyl Citrate", "Fentanyl Citrate", "2500mcg/250mL Premix", "25-200", "mcg/hr"),
}


def _hold(rates: np.ndarray, every: int) -> np.ndarray:
    """Keep a titrated rate for ``every`` hours before the next change (nurses titrate
    in steps, not every hour)."""
    out = rates.copy()
    for i in range(out.size):
        out[i] = rates[(i // every) * every]
    return out


def _baseline(spec, rng: np.random.Generator) -> float:
    """A healthy patient's own value: near the population mean, inside the range."""
    lo = spec.low + 0.1 * (spec.high - spec.low)
    hi = spec.high - 0.1 * (spec.high - spec.low)
    return float(np.clip(rng.normal(spec.mean, spec.sd * 0.6), lo, hi))


_LAB_BOUNDS = {"ph": (6.8, 7.7), "hgb": (3.5, 20), "hct": (10, 60), "plt": (5, 900), "bicarbonate": (4, 45),
               "spo2": (50, 100), "pco2": (15, 110), "po2": (35, 500), "base_excess": (-30, 20)}


def _clip_lab(key: str, v: float) -> float:
    lo, hi = _LAB_BOUNDS.get(key, (0.0, float("inf")))
    return float(min(max(v, lo), hi))


def _fmt(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}"


def _fmt_num(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:g}"


_LOGICAL_TABLES = ("chartevents", "labevents", "prescriptions", "inputevents_mv", "inputevents_cv", "outputevents",
                   "procedureevents_mv", "microbiologyevents", "diagnoses_icd", "procedures_icd", "emar",
                   "emar_detail")


def _frame(name: str, records: list[dict]) -> pd.DataFrame:
    """Records -> DataFrame with the logical columns (+ extras) in order; row ids 1..n
    in (subject, admission, time) order, so they are stable for a seed."""
    cols = list(schema.LOGICAL[name].columns) + list(EXTRA_COLUMNS.get(name, ()))
    df = pd.DataFrame.from_records(records, columns=cols) if records else pd.DataFrame(columns=cols)
    for c in cols:  # typed even when empty, so SQL time arithmetic binds
        if c.endswith(("time", "date")) or c in ("dob", "dod"):
            df[c] = pd.to_datetime(df[c])
    return _number(name, df)


def _number(name: str, df: pd.DataFrame) -> pd.DataFrame:
    roles = schema.LOGICAL[name].roles
    keys = [roles[r] for r in ("subject", "admission", "time", "start", "item") if r in roles]
    if name == "emar_detail":
        keys = ["subject_id", "emar_seq"]
    df = df.sort_values(keys, kind="stable").reset_index(drop=True) if len(df) else df
    df["row_id"] = np.arange(1, len(df) + 1)
    return df


def _chart_frame(chunks: list[dict]) -> pd.DataFrame:
    """Concatenate chart chunks column by column (one DataFrame, not one per chunk)."""
    cols = list(schema.LOGICAL["chartevents"].columns)
    sizes = [len(c["charttime"]) for c in chunks]
    data = {}
    for col in cols:
        if col == "row_id":
            continue
        parts = [c[col] if isinstance(c[col], np.ndarray) else np.full(n, c[col], dtype=object)
                 for c, n in zip(chunks, sizes)]
        arr = np.concatenate(parts) if parts else np.array([], dtype=object)
        if col in ("subject_id", "hadm_id", "icustay_id", "itemid"):
            arr = arr.astype("int64")
        elif col in ("warning", "error"):
            arr = pd.array(arr, dtype="Int64")
        data[col] = arr
    df = pd.DataFrame(data)
    df.insert(0, "row_id", 0)
    return df


def build_tables(patients: int = 40, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The whole hospital as {logical table: DataFrame} plus ``ehrlib_synth_storylines``.

    About a quarter of the patients come back for a second admission; about a fifth of
    the admissions are charted in CareVue, the rest in MetaVision.
    """
    master = np.random.default_rng([seed, 0])
    names = list(STORYLINES)
    order = [names[i] for i in master.permutation(len(names))]
    n_adm = [2 if r < 0.25 else 1 for r in master.random(patients)]
    total = sum(n_adm)
    hadm_ids = master.choice(np.arange(100_000, 200_000), size=total, replace=False)
    icu_ids = master.choice(np.arange(200_000, 300_000), size=total, replace=False)
    rows: dict[str, list[dict]] = {t: [] for t in _LOGICAL_TABLES + ("patients", "admissions", "icustays")}
    frames: list[dict] = []
    story_rows: list[dict] = []
    k = 0
    for p in tqdm(range(patients), desc="synthetic patients", unit="patient", disable=patients < 200, leave=False):
        rng = np.random.default_rng([seed, 1, p])
        subject_id = 10_000 + 3 * p + int(rng.integers(0, 3))
        gender = "F" if rng.random() < 0.45 else "M"
        age = int(rng.integers(28, 89))
        source: DbSource = "carevue" if rng.random() < 0.2 else "metavision"
        year = int(rng.integers(2100, 2190))
        admit = np.datetime64(f"{year}-01-01T00:00") + int(rng.integers(0, 330 * 24 * 60)) * _MIN
        weight = float(np.round(rng.normal(82 if gender == "M" else 70, 14), 1))
        first_admit = pd.Timestamp(admit)
        dob = first_admit - pd.Timedelta(days=age * 365.25 + int(rng.integers(0, 365)))
        story = order[p % len(order)]
        crng = np.random.default_rng([seed, 4, p])
        comorbid = tuple(str(c) for c in crng.choice(COMORBIDITIES, size=int(crng.integers(1, 4)), replace=False))
        last_disch = None
        for a in range(n_adm[p]):
            arng = np.random.default_rng([seed, 2, p, a])
            st = STORYLINES[story]
            if st.admission_type == "ELECTIVE":  # arrive early, operated the same morning
                admit = admit.astype("datetime64[D]") + np.timedelta64(6 * 60, "m") + int(arng.integers(0, 90)) * _MIN
            t0 = admit
            events: dict[str, float] = {}
            if st.surgery:
                events["surgery"] = arng.uniform(1.5, 3.0)
                icu_in = events["surgery"] + arng.uniform(*st.icu_offset_h)
            else:
                icu_in = arng.uniform(*st.icu_offset_h)
            los_days = arng.uniform(3, 8)
            disch = los_days * 24
            icu_out = icu_in + max(30.0, (disch - icu_in) * arng.uniform(0.45, 0.8))
            disch = max(disch, icu_out + arng.uniform(8, 30))
            stay = _Stay(subject_id, int(hadm_ids[k]), int(icu_ids[k]), t0, icu_in, icu_out, disch, source,
                         weight, st, comorbid)
            adm = _Admission(stay, arng, rows, frames, events)
            adm.run()
            admit_ts = pd.Timestamp(t0)
            emergency = st.admission_type == "EMERGENCY"
            rows["admissions"].append({
                "subject_id": subject_id, "hadm_id": stay.hadm_id, "admittime": admit_ts,
                "dischtime": _ts(t0, disch), "deathtime": None, "admission_type": st.admission_type,
                "admission_location": "EMERGENCY ROOM ADMIT" if emergency else "PHYS REFERRAL/NORMAL DELI",
                "discharge_location": ["HOME", "HOME HEALTH CARE", "SNF", "REHAB/DISTINCT PART HOSP"][
                    int(arng.integers(0, 4))],
                "edregtime": _ts(t0, -arng.uniform(2, 7)) if emergency else None,
                "edouttime": admit_ts if emergency else None, "diagnosis": st.diagnosis,
                "insurance": ["Medicare", "Private", "Medicaid"][int(rng.integers(0, 3)) if a == 0 else 0],
                "ethnicity": ["WHITE", "WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC OR LATINO", "ASIAN",
                              "UNKNOWN/NOT SPECIFIED"][int(np.random.default_rng([seed, 3, p]).integers(0, 6))],
                "marital_status": None, "language": "ENGL",
            })
            rows["icustays"].append({
                "subject_id": subject_id, "hadm_id": stay.hadm_id, "icustay_id": stay.icustay_id,
                "first_careunit": st.careunits[0], "last_careunit": st.careunits[-1],
                "intime": _ts(t0, icu_in), "outtime": _ts(t0, icu_out), "los": round((icu_out - icu_in) / 24, 4),
                "dbsource": source, "wardid": {"MICU": 50, "CCU": 7, "CSRU": 14, "SICU": 57}.get(st.careunits[0], 52),
            })
            for ev, h in sorted(events.items(), key=lambda kv: kv[1]):
                story_rows.append({"subject_id": subject_id, "hadm_id": stay.hadm_id, "storyline": st.name,
                                   "event": ev, "event_time": _ts(t0, h)})
            last_disch = pd.Timestamp(_ts(t0, disch))
            k += 1
            # the second admission: weeks to months later, often the same problem again
            admit = np.datetime64(last_disch.to_datetime64(), "m") + int(arng.integers(20, 300)) * 24 * 60 * _MIN
            story = story if arng.random() < 0.5 else names[int(arng.integers(0, len(names)))]
        dod = last_disch + pd.Timedelta(days=int(rng.integers(30, 2000))) if rng.random() < 0.2 else None
        rows["patients"].append({"subject_id": subject_id, "gender": gender, "dob": dob.normalize(),
                                 "dod": dod.normalize() if dod is not None else None, "anchor_age": age,
                                 "anchor_year": first_admit.year})
    out = {name: _frame(name, rows[name]) for name in ("patients", "admissions", "icustays") + _LOGICAL_TABLES
           if name != "chartevents"}
    out["chartevents"] = _number("chartevents", _chart_frame(frames))
    for name in ("d_items", "d_labitems", "d_icd_diagnoses", "d_icd_procedures"):
        out[name] = load_dictionary(name)
    out["ehrlib_synth_storylines"] = pd.DataFrame.from_records(story_rows, columns=list(STORYLINE_COLUMNS))
    return out
