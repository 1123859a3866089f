"""Cultures, the first antibiotic dose after them, and susceptibilities (MICROBIOLOGYEVENTS)."""
from __future__ import annotations

from ehrlib.synth.storylines import AB_ITEMIDS, ANTIBIOTIC_PANELS
from ehrlib.synth.tables.admission import Admission, day_of, ts

__all__ = ["infection"]


_GP_ORGANISMS = {80023, 80076, 80155, 80053}


def infection(adm: Admission) -> None:
    """Cultures, then the first antibiotic dose 0.5-2.5 h later, then susceptibilities."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    inf = st.infection
    if inf is None:
        return
    t = max(0.3, s.icu_in - rng.uniform(0, 2)) if st.admission_type == "EMERGENCY" else s.icu_in + 1
    adm.event("culture", t)
    adm.event("first_antibiotic", t + rng.uniform(0.5, 2.5))
    org_itemid, org_name, resistant = inf.organisms[int(rng.integers(0, len(inf.organisms)))]
    micro_id = int(rng.integers(10_000, 99_999))
    for spec_itemid, spec_name in inf.specimens:
        micro_id += 1
        positive = spec_name == inf.positive_specimen or (spec_name == "BLOOD CULTURE" and rng.random() < 0.35)
        base = {"subject_id": s.subject_id, "hadm_id": s.hadm_id, "chartdate": day_of(ts(s.t0, t)),
                "charttime": ts(s.t0, t), "spec_itemid": spec_itemid, "spec_type_desc": spec_name,
                "micro_specimen_id": micro_id}
        if not positive:
            adm.rows["microbiologyevents"].append({**base, "org_itemid": None, "org_name": None})
            continue
        panel = ANTIBIOTIC_PANELS["gp" if org_itemid in _GP_ORGANISMS else "gn"]
        adm.rows["microbiologyevents"].append({**base, "org_itemid": org_itemid, "org_name": org_name,
                                                 "isolate_num": 1})
        for ab in panel:
            r = rng.random()
            interp = "R" if ab in resistant else ("I" if r < 0.08 else "S")
            adm.rows["microbiologyevents"].append({
                **base, "org_itemid": org_itemid, "org_name": org_name, "isolate_num": 1,
                "ab_itemid": AB_ITEMIDS[ab], "ab_name": ab, "interpretation": interp})
    if s.source == "metavision" and rng.random() < 0.6:  # admission surveillance swab
        adm.rows["microbiologyevents"].append({
            "subject_id": s.subject_id, "hadm_id": s.hadm_id, "chartdate": day_of(ts(s.t0, s.icu_in + 1)),
            "charttime": ts(s.t0, s.icu_in + 1), "spec_itemid": 70091, "spec_type_desc": "MRSA SCREEN",
            "micro_specimen_id": micro_id + 1})
