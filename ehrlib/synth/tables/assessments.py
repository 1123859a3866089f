"""Nursing assessments every 4 hours (CHARTEVENTS text), derived from the vitals they describe."""
from __future__ import annotations

import numpy as np

from ehrlib.synth.tables.admission import Admission

__all__ = ["assessments"]


def assessments(adm: Admission) -> None:
    """Nursing assessments every 4 hours, derived from the vitals they describe."""
    rng, st, v = adm.rng, adm.s.story, adm.vit
    q = v[(v.clock % 4 == 0) & (rng.random(len(v)) > 0.08)]
    if q.empty:
        return
    h, sev, intub = q.h.to_numpy(), q.sev.to_numpy(), q.intub.to_numpy()
    loc = np.where(intub, "sedated", np.where(sev > 0.75, "lethargic", np.where(sev > 0.45, "voice", "alert")))
    if st.name == "dka":
        loc = np.where(sev > 0.6, "stimulation", loc)
    adm.chart("loc", h, None, [adm.vocab("loc", x) for x in loc])
    gcs = {"alert": ("4", "5", "6"), "voice": ("3", "4", "6"), "lethargic": ("3", "4", "6"),
           "stimulation": ("2", "3", "5"), "sedated": ("2", "1", "5")}
    for i, part in enumerate(("gcs_eye", "gcs_verbal", "gcs_motor")):
        states = [gcs[x][i] for x in loc]
        adm.chart(part, h, [float(x) for x in states], [adm.vocab(part, x) for x in states])
    # rhythm every 2 hours from the heart rate (and atrial fibrillation while decompensated)
    q2 = v[(v.clock % 2 == 0)]
    afib = "afib" in st.traits and rng.random() < 0.7
    rhythm = np.where(q2.hr > 100, "tachy", np.where(q2.hr < 60, "brady", "sinus"))
    if afib:
        rhythm = np.where(q2.sev > 0.35, "afib", rhythm)
    adm.chart("rhythm", q2.h.to_numpy(), None, [adm.vocab("rhythm", x) for x in rhythm])
    # abdomen and bowel sounds by illness phase
    phase = np.clip(((1 - sev) * len(st.abdomen)).astype(int), 0, len(st.abdomen) - 1)
    adm.chart("abdomen", h, None, [adm.vocab("abdomen", st.abdomen[p]) for p in phase])
    bowel = np.where(st.name == "post_op_colectomy",
                     np.where(sev > 0.7, "absent", np.where(sev > 0.3, "hypo", "present")),
                     np.where((st.name == "dka") & (sev > 0.6), "hypo", "present"))
    adm.chart("bowel_sounds", h, None, [adm.vocab("bowel_sounds", x) for x in bowel])
    if "edema" in st.traits:
        where = "legs" if rng.random() < 0.6 else "pedal"
        amt = np.clip(np.rint(1 + 3 * sev), 1, 4).astype(int)
        adm.chart("edema_location", h, None, [adm.vocab("edema_location", where)] * len(h))
        adm.chart("edema_amount", h, None, [adm.vocab("edema_amount", str(a)) for a in amt])
    fever = q.temp_c.to_numpy() >= 38.3
    shock = (q["map"].to_numpy() < 65) | q.pressor.to_numpy()
    pale = "transfusion" in st.traits
    color = np.where(shock & (rng.random(len(q)) < 0.6), "mottled",
                     np.where(pale & (sev > 0.4), "pale", np.where(fever, "flushed", "normal")))
    adm.chart("skin_color", h, None, [adm.vocab("skin_color", x) for x in color])
    temp = np.where(fever, "hot", np.where(shock, "cool", "warm"))
    adm.chart("skin_temp", h, None, [adm.vocab("skin_temp", x) for x in temp])
    integ = "impaired" if adm.surgical or rng.random() < 0.08 else "intact"
    adm.chart("skin_integrity", h, None, [adm.vocab("skin_integrity", integ)] * len(h))
    cond = np.where(shock, "clammy", np.where(fever | (sev > 0.7), "diaphoretic", "dry"))
    adm.chart("skin_condition", h, None, [adm.vocab("skin_condition", x) for x in cond])
    for concept in ("lung_lll", "lung_rll"):
        ill = st.lungs[int(rng.integers(0, len(st.lungs)))]
        lung = np.where(sev > 0.3, ill, "clear")
        adm.chart(concept, h, None, [adm.vocab(concept, x, "lung") for x in lung])
    spo2 = q.spo2.to_numpy()
    bipap = adm.events.get("bipap_start")
    dev = np.where(intub, "ett", np.where(spo2 < 91, "nrb", np.where(sev > 0.25, "nc", "none")))
    if bipap is not None:
        dev = np.where((h >= bipap) & (h < adm.events["bipap_stop"]), "bipap", dev)
    adm.chart("o2_device", h, None, [adm.vocab("o2_device", x) for x in dev])
