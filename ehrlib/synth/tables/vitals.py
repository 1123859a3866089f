"""Hourly vitals and ventilation (CHARTEVENTS) along the severity curve, and the therapies they trigger.

The timeline decides intubation; a MAP below 65 brings fluids and then a norepinephrine
drip that lifts the pressure; arterial-line hours chart invasive pressures; intubated
hours chart the ventilator and sedation drips; a low saturation without a tube brings BiPAP.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ehrlib.synth.tables.admission import Admission, hold

__all__ = ["timeline", "vitals", "respiratory_support"]


def timeline(adm: Admission) -> None:
    """The stay's fixed event times, and whether (and when) the patient is intubated."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    adm.event("admission", 0.0)
    adm.event("icu_admission", s.icu_in)
    adm.event("icu_discharge", s.icu_out)
    adm.event("discharge", s.disch)
    adm.intubated = None
    if rng.random() < st.p_intubation:
        if adm.surgical:
            start = adm.events["surgery"] + rng.uniform(0.1, 0.4)
            end = s.icu_in + rng.uniform(4, 10)
        else:
            start = s.icu_in + rng.uniform(0.5, max(1.0, adm.peak - s.icu_in))
            end = min(start + rng.uniform(30, 80), s.icu_out - 6)
        if end - start >= 3:
            adm.intubated = (start, end)
            adm.event("intubation", start)
            adm.event("extubation", end)


def vitals(adm: Admission) -> None:
    """Hourly vitals from the severity curve, with the pressor, arterial-line and ventilator rows."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    hours = adm.clock_hours(s.icu_in, s.icu_out)
    clock = np.rint(hours + adm.t0h).astype(int) % 24
    n = hours.size
    sev = adm.severity(hours)
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
    adm.on_pressor = np.zeros(n, dtype=bool)
    if "pressors" in st.traits and (mean_raw < 65).any():
        low = np.flatnonzero(mean_raw < 65)
        first, last = int(low[0]), int(low[-1])
        adm.input_event("ns", hours[first], hours[first] + 0.5, 1000, 2000)
        start = min(first + int(rng.integers(1, 3)), n - 1)
        stop = min(last + int(rng.integers(3, 9)), n - 1)
        if stop > start:
            adm.on_pressor[start:stop + 1] = True
            deficit = np.clip(68 - mean_raw, 0, None)
            lift = np.where(adm.on_pressor, deficit + rng.uniform(0, 6, n), 0)
            sbp = sbp + lift * 1.1
            dbp = dbp + lift * 0.95
            idx = np.flatnonzero(adm.on_pressor)
            rates = np.round(np.clip(0.03 + 0.012 * deficit[idx], 0.02, 0.4) / 0.01) * 0.01
            rates = hold(rates, 3)
            adm.drip("norepinephrine", hours[idx], rates, per_minute=s.weight / 1000)
            adm.event("pressor_start", hours[idx[0]])
            adm.event("pressor_stop", hours[idx[-1]] + 1)
            if mean_raw.min() < 55:
                vidx = idx[: max(3, idx.size // 2)]
                adm.drip("vasopressin", hours[vidx], np.full(vidx.size, 0.04), per_minute=1.0)
    elif "fluids" in st.traits:
        adm.input_event("lr" if rng.random() < 0.5 else "ns", hours[0] + 0.3, hours[0] + 1.3, 1000, 1000)

    intub = np.zeros(n, dtype=bool)
    if adm.intubated:
        intub = (hours >= adm.intubated[0]) & (hours < adm.intubated[1])
        spo2 = np.where(intub, np.maximum(spo2, rng.normal(97, 1.2, n)), spo2)
        rr = np.where(intub, rng.normal(16, 1.2, n), rr)
    hr, sbp, dbp = np.rint(hr), np.rint(sbp), np.rint(dbp)
    mbp = np.rint((sbp + 2 * dbp) / 3)
    spo2, rr = np.clip(np.rint(spo2), 70, 100), np.clip(np.rint(rr), 6, 45)
    temp = np.round(temp, 1)
    adm.vit = pd.DataFrame({"h": hours, "clock": clock, "hr": hr, "sbp": sbp, "dbp": dbp, "map": mbp, "rr": rr,
                             "spo2": spo2, "temp_c": temp, "sev": sev, "intub": intub,
                             "pressor": adm.on_pressor})

    # arterial line: placed with the first pressor or the intubation, or in the OR
    aline_from = None
    if adm.surgical and adm.intubated:
        aline_from = adm.events["surgery"] + 0.2
    elif adm.on_pressor.any() or adm.intubated:
        cands = [hours[adm.on_pressor][0] - 0.5] if adm.on_pressor.any() else []
        if adm.intubated:
            cands.append(adm.intubated[0] + 0.5)
        aline_from = min(cands)
    adm.aline = (aline_from, s.icu_out - rng.uniform(4, 12)) if aline_from is not None else None

    keep = rng.random(n) > 0.02  # whole hours not charted
    arterial = np.zeros(n, dtype=bool)
    if adm.aline:
        arterial = (hours >= adm.aline[0]) & (hours < adm.aline[1])
    nbp = keep & (~arterial | (clock % 4 == 0))

    def chart(concept, mask, vals):
        m = mask & (rng.random(n) > 0.03)
        adm.chart(concept, hours[m], vals[m])

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
    if adm.s.source == "metavision":
        adm.chart("weight", [hours[0]], [round(s.weight, 1)])
    if adm.intubated or adm.on_pressor.any() or "cardiac" in st.traits:
        cvp = 8 + (6 if "edema" in st.traits else 0) * sev + rng.normal(0, 2, n)
        chart("cvp", keep & (clock % 2 == 0) & (hours >= (adm.aline[0] if adm.aline else hours[0])),
              np.rint(cvp))
    if adm.intubated:
        vq4 = intub & (clock % 4 == 1)
        fio2 = np.clip(np.rint((40 + 30 * sev + rng.normal(0, 5, n)) / 5) * 5, 30, 100)
        chart("fio2", vq4, fio2 if adm.s.source == "metavision" else fio2 / 100)
        chart("peep", vq4, np.where(sev > 0.5, 8.0, 5.0))
        chart("tidal_volume", vq4, np.rint(rng.normal(470, 40, n)))
        mode = np.where(hours < adm.intubated[1] - 8, "ac", "ps")
        adm.chart("vent_mode", hours[vq4], None, [adm.vocab("vent_mode", m) for m in mode[vq4]])
        _sedation(adm, hours[intub])
    adm.hours, adm.clock = hours, clock


def _sedation(adm: Admission, hours: np.ndarray) -> None:
    if hours.size == 0:
        return
    rng = adm.rng
    rates = hold(np.rint(rng.uniform(20, 50, hours.size) / 5) * 5, 6)
    adm.drip("propofol", hours, rates, per_minute=adm.s.weight / 1000)
    frates = hold(np.rint(rng.uniform(25, 100, hours.size) / 25) * 25, 8)
    adm.drip("fentanyl", hours, frates, per_minute=1 / 60 / 1000)


def respiratory_support(adm: Admission) -> None:
    """BiPAP over the hours the saturation is below 92 without a tube (CHF, COPD)."""
    st, v = adm.s.story, adm.vit
    if "bipap" not in st.traits or adm.intubated:
        return
    low = v[(v.spo2 < 92) & ~v.intub]
    if low.empty:
        return
    start, stop = float(low.h.iloc[0]), float(low.h.iloc[-1]) + adm.rng.uniform(2, 6)
    stop = min(stop, adm.s.icu_out - 1)
    if stop > start + 1:
        adm.event("bipap_start", start)
        adm.event("bipap_stop", stop)
