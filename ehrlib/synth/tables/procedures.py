"""Lines, airway, imaging and cultures (PROCEDUREEVENTS_MV) and the billing codes (ICD-9).

The codes stay true to the stay: no ventilation code without a tube, no transfusion code
without a transfusion.
"""
from __future__ import annotations

from ehrlib.synth.dictionaries import PROCEDURE_ITEMS
from ehrlib.synth.tables.admission import Admission, day_of, ts

__all__ = ["procedures", "billing"]


def procedures(adm: Admission) -> None:
    """Lines, airway, imaging and cultures (MetaVision only; CareVue has no such table)."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    ev = adm.events
    if s.source != "metavision":
        return

    def proc(key, start, end=None, location=None, loc_cat=None):
        minutes = None if end is None else round((end - start) * 60)
        adm.rows["procedureevents_mv"].append({
            "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": s.icustay_id,
            "starttime": ts(s.t0, start), "endtime": ts(s.t0, end if end is not None else start),
            "itemid": PROCEDURE_ITEMS[key], "value": minutes if minutes is not None else 1,
            "valueuom": "min" if minutes is not None else None, "location": location,
            "locationcategory": loc_cat, "statusdescription": "FinishedRunning",
        })

    piv = "piv18" if rng.random() < 0.5 else "piv20"
    proc(piv, max(0.1, s.icu_in - rng.uniform(1, 3)), s.icu_out - rng.uniform(1, 6),
         ["Right Antecubital", "L Antecube", "Left Hand", "R Forearm"][int(rng.integers(0, 4))], "Peripheral")
    proc("ekg", s.icu_in + rng.uniform(0.2, 1))
    proc("chest_xray", s.icu_in + rng.uniform(0.5, 2))
    if adm.surgical:
        proc("or_received", s.icu_in)
    if adm.aline:
        proc("arterial_line", adm.aline[0], adm.aline[1], ["Right Radial", "Left Radial"][int(rng.integers(0, 2))],
             "Invasive Arterial")
        adm.event("arterial_line", adm.aline[0])
    if adm.on_pressor.any() or adm.surgical or st.name == "dka" and rng.random() < 0.5:
        start = (ev["pressor_start"] - rng.uniform(0.3, 1.0)) if "pressor_start" in ev else s.icu_in + 0.5
        if adm.surgical:
            start = ev["surgery"] + 0.3
        site = ["Right IJ", "Left IJ", "Left Subclavian", "Right Femoral."][int(rng.integers(0, 4))]
        proc("multi_lumen", max(start, 0.1), s.icu_out - rng.uniform(2, 8), site, "Invasive Venous")
        adm.event("central_line", max(start, 0.1))
        proc("chest_xray", max(start, 0.1) + 0.5)
    if adm.intubated:
        a, b = adm.intubated
        proc("intubation", a)
        proc("invasive_vent", a, b)
        proc("extubation", b)
        if not adm.surgical:
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
        adm.event("endoscopy", t)
    if "cardiac" in st.traits and not adm.surgical:
        proc("echo", s.icu_in + rng.uniform(12, 30))


def billing(adm: Admission) -> None:
    """ICD-9 codes, kept true to the stay: no ventilation code without a tube, etc."""
    s, st, ev = adm.s, adm.s.story, adm.events
    dx = list(st.icd9_dx) + [c for c in s.comorbidities if c not in st.icd9_dx]
    for seq, code in enumerate(dx, 1):
        adm.rows["diagnoses_icd"].append({"subject_id": s.subject_id, "hadm_id": s.hadm_id, "seq_num": seq,
                                           "icd9_code": code, "icd_version": 9})
    requires = {"9671": "intubation", "9672": "intubation", "9604": "intubation", "9904": "transfusion",
                "3891": "arterial_line", "3893": "central_line", "4443": "endoscopy", "9390": "bipap_start"}
    px = [c for c in st.icd9_px if c not in requires or requires[c] in ev]
    if "transfusion" in ev and "9904" not in px:
        px.append("9904")
    if "intubation" in ev and not adm.surgical:
        dur = ev["extubation"] - ev["intubation"]
        px = [c for c in px if c not in ("9671", "9672")] + ["9672" if dur >= 96 else "9671"]
    for seq, code in enumerate(px, 1):
        when = ev.get(requires[code]) if code in requires else ev.get("surgery", s.icu_in)
        adm.rows["procedures_icd"].append({"subject_id": s.subject_id, "hadm_id": s.hadm_id, "seq_num": seq,
                                            "icd9_code": code, "icd_version": 9,
                                            "chartdate": day_of(ts(s.t0, when if when is not None else 0))})
