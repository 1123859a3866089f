"""Admission labs and daily morning draws (LABEVENTS); the therapies low values trigger.

PRBCs below a hemoglobin of 7.5, potassium and magnesium repletion, and for DKA an
insulin drip with hourly finger sticks until the anion gap closes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ehrlib.synth.dictionaries import LAB_SPECS, lab_flag
from ehrlib.synth.tables.admission import Admission, ts

__all__ = ["labs"]


def labs(adm: Admission) -> None:
    """Admission labs, then daily morning draws; values follow the severity curve."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    draws = [rng.uniform(0.3, 1.2)]
    day0 = (24 - pd.Timestamp(ts(s.t0, 0)).hour + 4) % 24  # hours until the first 04:00
    h = day0 if day0 > 2 else day0 + 24
    while h < s.disch - 1:
        draws.append(h + rng.uniform(-0.5, 1.0))
        h += 24
    if adm.surgical:
        draws.append(adm.events["surgery"] + rng.uniform(5, 6.5))  # post-op labs on arrival in ICU
    if "pressors" in st.traits or "transfusion" in st.traits or st.name == "dka":
        draws += [s.icu_in + k * 6 + rng.uniform(0, 1) for k in (1, 2, 3)]  # q6h while unstable
    draws = sorted(d for d in draws if 0 < d < s.disch)
    base = {k: _baseline(spec, rng) for k, spec in LAB_SPECS.items()}
    specimen = int(rng.integers(1_000_000, 9_000_000))
    insulin_stop = None
    gap_closed = False
    for i, t in enumerate(draws):
        sev = float(adm.severity(t))
        admission = i == 0
        morning = not admission and 2 <= pd.Timestamp(ts(s.t0, t)).hour <= 6
        panels = {"cbc": admission or (morning and rng.random() < 0.95) or adm.surgical
                  or "transfusion" in st.traits,
                  "chem": admission or (morning and rng.random() < 0.95) or not morning,
                  "lft": admission or (morning and rng.random() < 0.45),
                  "coag": admission or (morning and rng.random() < (0.9 if "transfusion" in st.traits else 0.3)),
                  "lactate": ("lactate" in st.labs and sev > 0.15) or (admission and rng.random() < 0.3),
                  "abg": ("abg" in st.traits and sev > 0.3) or bool(adm.intubated and
                                                                     adm.intubated[0] <= t < adm.intubated[1]),
                  "cardiac": "cardiac" in st.traits and (admission or i <= 2)}
        values: dict[str, float] = {}
        for key, spec in LAB_SPECS.items():
            v = base[key]
            eff = st.labs.get(key)
            if eff:
                v = v + eff[1] * sev if eff[0] == "add" else v * (1 + (eff[1] - 1) * sev)
            v += rng.normal(0, spec.sd * 0.35)
            values[key] = v
        units = sum(u for th, u in adm.transfused if th < t)
        values["hgb"] += 1.0 * units
        values["hct"] = values["hgb"] * 3 + rng.normal(0,
                                                       0.8) if "hct" not in st.labs else values["hct"] + 3 * units
        values["potassium"] += 0.25 * sum(1 for th in adm.k_repleted if th < t)
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
            adm.rows["labevents"].append({
                "subject_id": s.subject_id, "hadm_id": s.hadm_id, "itemid": spec.itemid,
                "charttime": ts(s.t0, t), "value": _fmt(values[key], spec.decimals),
                "valuenum": values[key], "valueuom": spec.unit, "flag": lab_flag(spec, values[key]),
                "specimen_id": specimen, "ref_range_lower": spec.low, "ref_range_upper": spec.high,
            })
        in_icu = s.icu_in <= t < s.icu_out
        # lab-triggered therapy: PRBCs, potassium, magnesium; the insulin drip stops
        if "transfusion" in st.traits and "hgb" in drawn and values["hgb"] < 7.5 and in_icu:
            n_units = 2 if values["hgb"] < 6.5 else 1
            start = t + rng.uniform(1, 2)
            for u in range(n_units):
                adm.input_event("prbc", start + 2 * u, start + 2 * u + 2, 350, 175)
            adm.transfused.append((start, n_units))
            adm.event("transfusion", start)
        if "potassium" in drawn and values["potassium"] < 3.5 and in_icu:
            start = t + rng.uniform(1, 2)
            adm.input_event("kcl", start, start + 2, 20, None)
            adm.k_repleted.append(start)
        if "magnesium" in drawn and values["magnesium"] < 1.7 and in_icu and s.source == "metavision":
            start = t + rng.uniform(1, 2)
            adm.input_event("magnesium", start, start + 1, 2, None)
        if st.name == "dka" and "anion_gap" in drawn and not admission and not gap_closed:
            if values["anion_gap"] <= 14 and values["bicarbonate"] >= 18:
                gap_closed = True
                insulin_stop = t + rng.uniform(2, 3)
    if st.name == "dka":
        _insulin_drip(adm, insulin_stop)


def _insulin_drip(adm: Admission, stop: float | None) -> None:
    s, rng = adm.s, adm.rng
    start = max(s.icu_in, 0.5)
    stop = stop if stop and stop > start + 2 else min(s.icu_in + rng.uniform(14, 22), s.icu_out - 1)
    hours = adm.clock_hours(start, stop - 1)
    if hours.size == 0:
        return
    rate = np.full(hours.size, round(0.1 * s.weight))
    rate[hours > start + 8] = max(1, round(0.05 * s.weight))
    adm.drip("insulin", hours, rate, per_minute=1 / 60)
    adm.event("insulin_drip_start", float(hours[0]))
    adm.event("insulin_drip_stop", float(hours[-1]) + 1)
    adm.input_event("ns", hours[0], hours[0] + 1, 1000, 1000)
    adm.input_event("d5w", hours[0] + 6, float(hours[-1]) + 1, 100 * (hours[-1] - hours[0] - 5), 100)
    # hourly finger sticks while on the drip
    g0 = 480 + rng.normal(0, 40)
    fs = np.maximum(110, g0 - (hours - hours[0]) * rng.uniform(35, 55)) + rng.normal(0, 12, hours.size)
    adm.chart("glucose_fs", hours + 0.5, np.rint(fs))


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
