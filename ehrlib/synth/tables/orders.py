"""Medication orders (PRESCRIPTIONS) and their administrations (EMAR, EMAR_DETAIL, inputs).

Every charted drip gets its order and eMAR rows; scheduled medications of the storyline
get theirs, with IV doses in the ICU also charted as inputs at the same minute.
"""
from __future__ import annotations

import numpy as np

from ehrlib.synth.dictionaries import INPUT_ITEMS
from ehrlib.synth.storylines import COMMON_MEDS, MedOrder
from ehrlib.synth.tables.admission import Admission, day_of, ts

__all__ = ["orders"]


#: Input key -> the PRESCRIPTIONS order of a titrated drip (drug, generic, strength, dose, unit).
_DRIP_ORDERS = {
    "norepinephrine": ("NORepinephrine", "Norepinephrine Bitartrate", "4mg/250mL Premix", "0.03-0.25", "mcg/kg/min"),
    "vasopressin": ("Vasopressin", "Vasopressin", "20 Units/100 mL Premix", "0.04", "UNIT/MIN"),
    "insulin": ("Insulin", "Insulin Regular Human", "100 Units / mL - 10 mL Vial", "0.1", "UNIT/KG/HR"),
    "propofol": ("Propofol", "Propofol", "1000mg/100mL Vial", "5-50", "mcg/kg/min"),
    "fentanyl": ("Fentanyl Citrate", "Fentanyl Citrate", "2500mcg/250mL Premix", "25-200", "mcg/hr"),
}


def orders(adm: Admission) -> None:
    """PRESCRIPTIONS (date granularity, as MIMIC-III) and their administrations."""
    s, rng, st = adm.s, adm.rng, adm.s.story
    meds = list(st.meds) + [m for m in COMMON_MEDS if rng.random() < 0.8]
    for key, segments in adm.drips:  # every charted drip has its order and eMAR rows
        name, generic, strength, dose, unit = _DRIP_ORDERS[key]
        med = MedOrder(name, generic, strength, dose, unit, "1", "BAG", "IV", every_h=None)
        _prescription(adm, med, segments[0][0], segments[-1][1])
        adm.rows["prescriptions"].append({**adm.rows["prescriptions"][-1], "drug_type": "BASE",
                                           "drug": "Iso-Osmotic Dextrose", "drug_name_generic": None,
                                           "prod_strength": "250ml Bag", "dose_val_rx": "250",
                                           "dose_unit_rx": "ml", "form_val_disp": "250",
                                           "form_unit_disp": "ml"})
        rate_unit = INPUT_ITEMS[key].rate_unit
        for i, (start, _end, rate) in enumerate(segments):
            _emar(adm, med, start, "Started" if i == 0 else "Rate Change",
                  {"infusion_rate": f"{rate:g}", "infusion_rate_unit": rate_unit})
        _emar(adm, med, segments[-1][1], "Stopped", {"infusion_rate": "0", "infusion_rate_unit": rate_unit})
    for med in meds:
        begin = adm.events.get(med.start)
        if begin is None:
            begin = 0.5 if med.start != "first_antibiotic" else None
        if begin is None:
            continue
        days = int(rng.integers(med.days[0], med.days[1] + 1))
        end = min(begin + days * 24, s.disch)
        _prescription(adm, med, begin, end)
        if med.every_h:
            _administer(adm, med, begin, end)


def _prescription(adm: Admission, med: MedOrder, start: float, end: float) -> None:
    s = adm.s
    sd, ed = day_of(ts(s.t0, start)), day_of(ts(s.t0, end))
    icu = s.icustay_id if s.icu_in - 12 <= start < s.icu_out else None
    adm.rows["prescriptions"].append({
        "subject_id": s.subject_id, "hadm_id": s.hadm_id, "icustay_id": icu, "startdate": sd,
        "enddate": max(ed, sd), "order_time": ts(s.t0, start), "stop_time": ts(s.t0, max(end, start)),
        "drug_type": med.drug_type, "drug": med.drug,
        "drug_name_generic": med.generic, "prod_strength": med.strength, "dose_val_rx": med.dose,
        "dose_unit_rx": med.unit, "form_val_disp": med.form_val, "form_unit_disp": med.form_unit,
        "route": med.route,
    })


def _administer(adm: Admission, med: MedOrder, start: float, end: float) -> None:
    """Scheduled doses: eMAR rows always (rendered only in MIMIC-IV); IV doses given in
    the ICU are also charted as MetaVision inputs at the same minute.
    """
    s, rng = adm.s, adm.rng
    times = np.arange(start, end, med.every_h)
    for t in times:
        given = med.input_item is not None or rng.random() > 0.04
        late = rng.uniform(0, 0.4) * (med.input_item is None)  # IV doses: the charted input's minute
        _emar(adm, med, t + late, "Administered" if given else "Not Given",
              {"dose_given": med.dose if given else "0"}, scheduled=t)
        if med.input_item and given and s.icu_in <= t < s.icu_out:
            item = INPUT_ITEMS[med.input_item]
            if item.amount_unit == "dose":  # MetaVision charts IV antibiotics as one "dose"
                adm.input_event(med.input_item, t, t + (2 if med.input_item == "vancomycin" else 0.5), 1, None)
            else:
                adm.input_event(med.input_item, t, t + 1 / 60, float(med.dose), None)


def _emar(adm: Admission, med: MedOrder, t: float, event: str, detail: dict, scheduled: float | None = None) -> None:
    """One administration event: an ``emar`` row and its ``emar_detail`` row."""
    s = adm.s
    seq = len(adm.rows["emar"]) + 1
    emar_id = f"{s.subject_id}-{seq}"
    adm.rows["emar"].append({
        "subject_id": s.subject_id, "hadm_id": s.hadm_id, "emar_id": emar_id, "emar_seq": seq,
        "charttime": ts(s.t0, t), "medication": med.drug, "event_txt": event,
        "scheduletime": ts(s.t0, scheduled) if scheduled is not None else None,
        "poe_id": f"{s.subject_id}-{1000 + seq}",
    })
    adm.rows["emar_detail"].append({
        "subject_id": s.subject_id, "emar_id": emar_id, "emar_seq": seq, "dose_given_unit": med.unit,
        "product_description": med.strength, "route": med.route, **detail,
    })
