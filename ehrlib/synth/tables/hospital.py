"""The whole synthetic hospital as logical-model DataFrames: patients, admissions, stays and their rows.

One admission at a time: a storyline (:mod:`ehrlib.synth.storylines`) gives a severity
curve over the stay; the component steps fill the tables from it in dependency order.
Everything is drawn from ``numpy.random.default_rng((seed, patient, admission))``, so
one seed gives the same hospital, and one patient does not shift another.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ehrlib.synth.dictionaries import DbSource, load_dictionary
from ehrlib.synth.storylines import COMORBIDITIES, STORYLINES
from ehrlib.synth.tables.admission import MINUTE, Admission, Stay, ts
from ehrlib.synth.tables.assessments import assessments
from ehrlib.synth.tables.frames import LOGICAL_TABLES, chart_frame, number_rows, to_frame
from ehrlib.synth.tables.labs import labs
from ehrlib.synth.tables.microbiology import infection
from ehrlib.synth.tables.orders import orders
from ehrlib.synth.tables.outputs import outputs
from ehrlib.synth.tables.procedures import billing, procedures
from ehrlib.synth.tables.vitals import respiratory_support, timeline, vitals

__all__ = ["STORYLINE_COLUMNS", "build_tables"]


#: Columns of the extra ``ehrlib_synth_storylines`` table.
STORYLINE_COLUMNS = ("subject_id", "hadm_id", "storyline", "event", "event_time")

#: The components of one admission, in dependency order (each reads what the earlier ones
#: decided, and the order of the random draws is the order of the steps).
_STEPS: tuple[Callable[[Admission], None], ...] = (
    timeline, vitals, respiratory_support, assessments, infection, labs, orders, outputs, procedures, billing,
)


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
    rows: dict[str, list[dict]] = {t: [] for t in LOGICAL_TABLES + ("patients", "admissions", "icustays")}
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
        admit = np.datetime64(f"{year}-01-01T00:00") + int(rng.integers(0, 330 * 24 * 60)) * MINUTE
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
                admit = admit.astype("datetime64[D]") + np.timedelta64(6 * 60, "m") + int(arng.integers(0, 90)) * MINUTE
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
            stay = Stay(subject_id, int(hadm_ids[k]), int(icu_ids[k]), t0, icu_in, icu_out, disch, source,
                         weight, st, comorbid)
            adm = Admission(stay, arng, rows, frames, events)
            for step in _STEPS:
                step(adm)
            admit_ts = pd.Timestamp(t0)
            emergency = st.admission_type == "EMERGENCY"
            rows["admissions"].append({
                "subject_id": subject_id, "hadm_id": stay.hadm_id, "admittime": admit_ts,
                "dischtime": ts(t0, disch), "deathtime": None, "admission_type": st.admission_type,
                "admission_location": "EMERGENCY ROOM ADMIT" if emergency else "PHYS REFERRAL/NORMAL DELI",
                "discharge_location": ["HOME", "HOME HEALTH CARE", "SNF", "REHAB/DISTINCT PART HOSP"][
                    int(arng.integers(0, 4))],
                "edregtime": ts(t0, -arng.uniform(2, 7)) if emergency else None,
                "edouttime": admit_ts if emergency else None, "diagnosis": st.diagnosis,
                "insurance": ["Medicare", "Private", "Medicaid"][int(rng.integers(0, 3)) if a == 0 else 0],
                "ethnicity": ["WHITE", "WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC OR LATINO", "ASIAN",
                              "UNKNOWN/NOT SPECIFIED"][int(np.random.default_rng([seed, 3, p]).integers(0, 6))],
                "marital_status": None, "language": "ENGL",
            })
            rows["icustays"].append({
                "subject_id": subject_id, "hadm_id": stay.hadm_id, "icustay_id": stay.icustay_id,
                "first_careunit": st.careunits[0], "last_careunit": st.careunits[-1],
                "intime": ts(t0, icu_in), "outtime": ts(t0, icu_out), "los": round((icu_out - icu_in) / 24, 4),
                "dbsource": source, "wardid": {"MICU": 50, "CCU": 7, "CSRU": 14, "SICU": 57}.get(st.careunits[0], 52),
            })
            for ev, h in sorted(events.items(), key=lambda kv: kv[1]):
                story_rows.append({"subject_id": subject_id, "hadm_id": stay.hadm_id, "storyline": st.name,
                                   "event": ev, "event_time": ts(t0, h)})
            last_disch = pd.Timestamp(ts(t0, disch))
            k += 1
            # the second admission: weeks to months later, often the same problem again
            admit = np.datetime64(last_disch.to_datetime64(), "m") + int(arng.integers(20, 300)) * 24 * 60 * MINUTE
            story = story if arng.random() < 0.5 else names[int(arng.integers(0, len(names)))]
        dod = last_disch + pd.Timedelta(days=int(rng.integers(30, 2000))) if rng.random() < 0.2 else None
        rows["patients"].append({"subject_id": subject_id, "gender": gender, "dob": dob.normalize(),
                                 "dod": dod.normalize() if dod is not None else None, "anchor_age": age,
                                 "anchor_year": first_admit.year})
    out = {name: to_frame(name, rows[name]) for name in ("patients", "admissions", "icustays") + LOGICAL_TABLES
           if name != "chartevents"}
    out["chartevents"] = number_rows("chartevents", chart_frame(frames))
    for name in ("d_items", "d_labitems", "d_icd_diagnoses", "d_icd_procedures"):
        out[name] = load_dictionary(name)
    out["ehrlib_synth_storylines"] = pd.DataFrame.from_records(story_rows, columns=list(STORYLINE_COLUMNS))
    return out
