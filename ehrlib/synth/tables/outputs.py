"""Hourly Foley urine and drain outputs (OUTPUTEVENTS), oliguric at the peak, brisk after furosemide."""
from __future__ import annotations

import numpy as np

from ehrlib.synth.dictionaries import INPUT_ITEMS, OUTPUT_ITEMS
from ehrlib.synth.tables.admission import Admission, ts

__all__ = ["outputs"]


def outputs(adm: Admission) -> None:
    """Hourly Foley urine (oliguric at the peak; brisk after furosemide) and drains."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    hours = adm.hours
    if hours.size == 0:
        return
    sev = adm.severity(hours)
    renal = 0.85 if ("pressors" in st.traits or st.name in ("dka", "gi_bleed")) else 0.4
    ml_per_kg = np.clip(1.0 - renal * sev, 0.15, None) * rng.uniform(0.8, 1.2, hours.size)
    lasix = [r for r in adm.rows["inputevents_mv"] + adm.rows["inputevents_cv"]
             if r["hadm_id"] == s.hadm_id and r["itemid"] in (INPUT_ITEMS["furosemide"].mv,
                                                                 INPUT_ITEMS["furosemide"].cv)]
    for r in lasix:
        h = (np.datetime64(r.get("starttime", r.get("charttime"))) - s.t0) / np.timedelta64(1, "h")
        ml_per_kg = ml_per_kg * np.where((hours > h) & (hours <= h + 4), 2.8, 1.0)
    urine = np.rint(ml_per_kg * s.weight / 5) * 5
    foley_until = min(s.icu_out, hours[-1] - rng.uniform(6, 18)) if hours.size > 24 else s.icu_out
    keep = rng.random(hours.size) > 0.05
    fol = keep & (hours < foley_until)
    _output(adm, "foley", hours[fol], urine[fol])
    void = keep & (hours >= foley_until) & (adm.clock % 4 == 0)
    _output(adm, "void", hours[void], urine[void] * 4)
    for drain in st.drains:
        mask = (adm.clock % (1 if drain == "chest_tube" else 4) == 0) & (hours < s.icu_out - 2)
        start_ml = {"chest_tube": 120, "jp_drain": 80, "ng_tube": 150}[drain]
        vol = np.rint(np.clip(start_ml * (0.2 + sev) + rng.normal(0, 10, hours.size), 0, None) / 5) * 5
        _output(adm, drain, hours[mask], vol[mask])


def _output(adm: Admission, concept: str, hours: np.ndarray, values: np.ndarray) -> None:
    s = adm.s
    mv, cv = OUTPUT_ITEMS[concept]
    for h, v in zip(hours, values, strict=False):
        adm.rows["outputevents"].append({
            "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
            "charttime": ts(s.t0, h), "itemid": mv if s.source == "metavision" else cv,
            "value": float(v), "valueuom": "mL" if s.source == "metavision" else "ml",
        })
