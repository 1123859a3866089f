"""The synthetic hospital's dictionaries and the items its storylines chart.

The four dictionary files under ``ehrlib/data/synth/`` are a curated haystack: every
item the generator uses plus the few hundred items, lab tests and ICD-9 codes that are
most common in the open MIMIC-III demo, with MIMIC's published ids, labels,
abbreviations, categories, units and LINKSTO kept as facts (see the README there). Most
of them are never charted by any synthetic patient on purpose: entity-to-item
alignment must find "NBP" among "NBP Alarm [Low]", "NBP [Systolic]" and
"Non Invasive Blood Pressure systolic".

The tables below say which item a concept is charted as, per charting system: MIMIC-III
stays are either CareVue (2001-2008, ``inputevents_cv``) or MetaVision (2008-2012,
``inputevents_mv`` + ``procedureevents_mv``), with different item ids and vocabularies.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Literal

import pandas as pd

__all__ = [
    "DbSource",
    "ChartItem",
    "LabSpec",
    "CHART_ITEMS",
    "CATEGORICAL_VALUES",
    "LAB_SPECS",
    "lab_flag",
    "load_dictionary",
]

DbSource = Literal["metavision", "carevue"]


@dataclass(frozen=True, slots=True)
class ChartItem:
    """One charted concept: its item id and unit in each charting system
    (``None``: that system has no such item, the concept is not charted there).
    """

    mv: int | None
    cv: int | None
    mv_unit: str | None = None
    cv_unit: str | None = None

    def itemid(self, source: DbSource) -> int | None:
        """The item id in this source system (None when it lacks the item)."""
        return self.mv if source == "metavision" else self.cv

    def unit(self, source: DbSource) -> str | None:
        """The unit in this source system."""
        return self.mv_unit if source == "metavision" else self.cv_unit


_C = ChartItem
#: Concept -> chart item. Units are spelled as MIMIC-III charts them ("?F" is MIMIC's
#: own mis-encoded degree sign).
CHART_ITEMS: Mapping[str, ChartItem] = MappingProxyType({
    "hr": _C(220045, 211, "bpm", "BPM"),
    "nbp_sys": _C(220179, 455, "mmHg", "mmHg"),
    "nbp_dia": _C(220180, 8441, "mmHg", "mmHg"),
    "nbp_mean": _C(220181, 456, "mmHg", "mmHg"),
    "abp_sys": _C(220050, 51, "mmHg", "mmHg"),
    "abp_dia": _C(220051, 8368, "mmHg", "mmHg"),
    "abp_mean": _C(220052, 52, "mmHg", "mmHg"),
    "rr": _C(220210, 618, "insp/min", "BPM"),
    "spo2": _C(220277, 646, "%", "%"),
    "temp_f": _C(223761, 678, "?F", "Deg. F"),
    "temp_c": _C(223762, 677, "?C", "Deg. C"),
    "cvp": _C(220074, 113, "mmHg", "mmHg"),
    "glucose_fs": _C(225664, 807),
    "weight": _C(226512, None, "kg"),
    "fio2": _C(223835, 190),
    "peep": _C(220339, 506, "cmH2O", "cmH2O"),
    "tidal_volume": _C(224685, 682, "mL", "ml"),
    # categorical assessments
    "rhythm": _C(220048, 212),
    "loc": _C(226104, 432),
    "abdomen": _C(224003, 27),
    "bowel_sounds": _C(224004, 80),
    "edema_location": _C(224031, None),
    "edema_amount": _C(224862, None),
    "skin_color": _C(224028, 643),
    "skin_integrity": _C(224026, 644),
    "skin_temp": _C(224027, None),
    "skin_condition": _C(224860, 8475),
    "lung_lll": _C(223989, 425),
    "lung_rll": _C(223987, 593),
    "vent_mode": _C(223849, 720),
    "o2_device": _C(226732, 467),
    "gcs_eye": _C(220739, 184),
    "gcs_verbal": _C(223900, 723),
    "gcs_motor": _C(223901, 454),
})

#: Concept -> state -> (MetaVision value, CareVue value). The vocabularies are MIMIC's
#: own (e.g. "SR (Sinus Rhythm)" vs "Sinus Rhythm"), so a note's "sinus tach" has to be
#: aligned with a coded string, not matched verbatim.
CATEGORICAL_VALUES: Mapping[str, Mapping[str, tuple[str, str]]] = MappingProxyType({
    "rhythm": {"sinus": ("SR (Sinus Rhythm)", "Sinus Rhythm"),
               "tachy": ("ST (Sinus Tachycardia)", "Sinus Tachy"),
               "brady": ("SB (Sinus Bradycardia)", "Sinus Brady"),
               "afib": ("AF (Atrial Fibrillation)", "Atrial Fib")},
    "loc": {"alert": ("Alert", "Alert"),
            "voice": ("Arouse to Voice", "Dozing Intermit"),
            "lethargic": ("Lethargic", "Lethargic"),
            "stimulation": ("Arouse to Stimulation", "Arouse to Stimul"),
            "sedated": ("Arouse to Pain", "Sedated")},
    "abdomen": {"soft": ("Soft", "Soft"), "distended": ("Soft Distended", "Soft Distended"),
                "tender": ("Tender", "Tender"), "firm": ("Firm Distended", "Firm Distended"),
                "obese": ("Obese", "Obese")},
    "bowel_sounds": {"present": ("Present", "Present"), "hypo": ("Hypoactive", "Hypoactive"),
                     "absent": ("Absent", "Absent"), "hyper": ("Hyperactive", "Hyperactive")},
    "edema_location": {"legs": ("Both Legs", ""), "pedal": ("Pedal", ""), "hands": ("Both Hands", "")},
    "edema_amount": {"1": ("2 mm", ""), "2": ("4 mm", ""), "3": ("6 mm", ""), "4": ("8 mm", "")},
    "skin_color": {"normal": ("Normal for Race", "Normal for Race"), "pale": ("Pale", "Pale"),
                   "mottled": ("Mottled", "Mottled"), "flushed": ("Flushed", "Flushed")},
    "skin_integrity": {"intact": ("Intact", "Intact"), "impaired": ("Impaired", "Impaired")},
    "skin_temp": {"warm": ("Warm", ""), "cool": ("Cool", ""), "hot": ("Hot", "")},
    "skin_condition": {"dry": ("Dry", "Dry"), "diaphoretic": ("Diaphoretic", "Diaphoretic"),
                       "clammy": ("Clammy", "Clammy")},
    "lung": {"clear": ("Clear", "Clear"), "crackles": ("Crackles", "Crackles"),
             "rhonchi": ("Rhonchi", "Rhonchi"), "diminished": ("Diminished", "Diminished"),
             "wheeze": ("Exp Wheeze", "Exp Wheeze")},
    "vent_mode": {"ac": ("CMV/ASSIST/AutoFlow", "Assist Control"), "ps": ("CPAP/PSV", "CPAP+PS")},
    "o2_device": {"ett": ("Endotracheal tube", "Other/Remarks"), "nc": ("Nasal cannula", "Nasal Cannula"),
                  "nrb": ("Non-rebreather", "Non-Rebreather"), "bipap": ("Bipap mask", "Bipap Mask"),
                  "none": ("None", "None")},
    # GCS: the value string carries the score (CareVue prefixes it; MetaVision stores it in valuenum)
    "gcs_eye": {"4": ("Spontaneously", "4 Spontaneously"), "3": ("To Speech", "3 To speech"),
                "2": ("To Pain", "2 To pain"), "1": ("None", "1 No Response")},
    "gcs_verbal": {"5": ("Oriented", "5 Oriented"), "4": ("Confused", "4 Confused"),
                   "3": ("Inappropriate Words", "3 Inapprop words"),
                   "1": ("No Response-ETT", "1.0 ET/Trach")},
    "gcs_motor": {"6": ("Obeys Commands", "6 Obeys Commands"), "5": ("Localizes Pain", "5 Localizes Pain"),
                  "4": ("Flex-withdraws", "4 Flex-withdraws")},
})


@dataclass(frozen=True, slots=True)
class InputItem:
    """An infusion or bolus: MetaVision item + units + order category, and the CareVue
    item + units + route (``cv`` None: CareVue stays do not chart it).
    """

    mv: int
    amount_unit: str
    rate_unit: str | None
    category: str
    cv: int | None = None
    cv_amount_unit: str | None = None
    cv_rate_unit: str | None = None
    cv_route: str | None = None


_I = InputItem
INPUT_ITEMS: Mapping[str, InputItem] = MappingProxyType({
    "ns": _I(225158, "ml", "mL/hour", "02-Fluids (Crystalloids)", 30018, "ml", None, "Intravenous Push"),
    "lr": _I(225828, "ml", "mL/hour", "02-Fluids (Crystalloids)", 30021, "ml", None, "Intravenous Push"),
    "d5w": _I(220949, "ml", "mL/hour", "02-Fluids (Crystalloids)", 30013, "ml", "mlhr", "Intravenous Infusion"),
    "norepinephrine": _I(221906, "mg", "mcg/kg/min", "01-Drips", 30120, "mg", "mcgkgmin", "IV Drip"),
    "vasopressin": _I(222315, "units", "units/min", "01-Drips", 30051, "U", "Umin", "IV Drip"),
    "insulin": _I(223258, "units", "units/hour", "01-Drips", 30045, "U", "Uhr", "IV Drip"),
    "propofol": _I(222168, "mg", "mcg/kg/min", "01-Drips", 30131, "mg", "mcgkgmin", "IV Drip"),
    "fentanyl": _I(221744, "mg", "mcg/hour", "01-Drips", 30118, "mcg", "mcghr", "IV Drip"),
    "prbc": _I(225168, "ml", "mL/hour", "07-Blood Products", 30001, "ml", None, "Intravenous Push"),
    "pantoprazole": _I(225910, "mg", "mg/hour", "01-Drips"),
    "furosemide": _I(221794, "mg", None, "05-Med Bolus", 30123, "mg", None, "Intravenous Push"),
    "kcl": _I(225166, "mEq", None, "02-Fluids (Crystalloids)", 30026, "mEq", None, "Intravenous Push"),
    "magnesium": _I(222011, "grams", None, "02-Fluids (Crystalloids)"),
    "vancomycin": _I(225798, "dose", None, "08-Antibiotics (IV)"),
    "zosyn": _I(225893, "dose", None, "08-Antibiotics (IV)"),
    "ceftriaxone": _I(225855, "dose", None, "08-Antibiotics (IV)"),
    "cefazolin": _I(225850, "dose", None, "08-Antibiotics (IV)"),
    "levofloxacin": _I(225879, "dose", None, "08-Antibiotics (IV)"),
})

#: Output concept -> (MetaVision item, CareVue item).
OUTPUT_ITEMS: Mapping[str, tuple[int, int]] = MappingProxyType({
    "foley": (226559, 40055),
    "void": (226560, 40069),
    "chest_tube": (226588, 40076),
    "jp_drain": (226599, 40071),
    "ng_tube": (226576, 40052),
})

#: Procedure concept -> MetaVision item (CareVue has no procedure events).
PROCEDURE_ITEMS: Mapping[str, int] = MappingProxyType({
    "piv18": 224277, "piv20": 224275, "arterial_line": 225752, "multi_lumen": 224263,
    "intubation": 224385, "invasive_vent": 225792, "extubation": 227194, "niv": 225794,
    "chest_xray": 225459, "blood_culture": 225401, "sputum_culture": 225451, "urine_culture": 225454,
    "ekg": 225402, "endoscopy": 225439, "or_sent": 225470, "or_received": 225469, "echo": 225432,
})


@dataclass(frozen=True, slots=True)
class LabSpec:
    """One lab test: its D_LABITEMS id, unit, reference range (FLAG = ``abnormal``
    outside it), healthy mean and spread, and printed decimals.
    """

    itemid: int
    unit: str | None
    low: float
    high: float
    mean: float
    sd: float
    decimals: int


_L = LabSpec
LAB_SPECS: Mapping[str, LabSpec] = MappingProxyType({
    # CBC
    "wbc": _L(51301, "K/uL", 4.0, 11.0, 7.5, 1.5, 1),
    "hgb": _L(51222, "g/dL", 12.0, 16.0, 13.4, 0.9, 1),
    "hct": _L(51221, "%", 36.0, 48.0, 40.0, 2.5, 1),
    "plt": _L(51265, "K/uL", 150, 440, 250, 50, 0),
    # Chem-7 (+ anion gap, Mg, phosphate, calcium)
    "sodium": _L(50983, "mEq/L", 133, 145, 139, 2, 0),
    "potassium": _L(50971, "mEq/L", 3.3, 5.1, 4.1, 0.3, 1),
    "chloride": _L(50902, "mEq/L", 96, 108, 102, 2, 0),
    "bicarbonate": _L(50882, "mEq/L", 22, 32, 26, 1.8, 0),
    "bun": _L(51006, "mg/dL", 6, 20, 14, 3.5, 0),
    "creatinine": _L(50912, "mg/dL", 0.5, 1.2, 0.9, 0.15, 1),
    "glucose": _L(50931, "mg/dL", 70, 105, 98, 10, 0),
    "anion_gap": _L(50868, "mEq/L", 8, 20, 12, 2, 0),
    "magnesium": _L(50960, "mg/dL", 1.6, 2.6, 2.0, 0.2, 1),
    "phosphate": _L(50970, "mg/dL", 2.7, 4.5, 3.5, 0.4, 1),
    "calcium": _L(50893, "mg/dL", 8.4, 10.3, 9.1, 0.4, 1),
    # LFTs
    "alt": _L(50861, "IU/L", 0, 40, 22, 8, 0),
    "ast": _L(50878, "IU/L", 0, 40, 25, 8, 0),
    "alk_phos": _L(50863, "IU/L", 40, 130, 80, 18, 0),
    "bilirubin": _L(50885, "mg/dL", 0, 1.5, 0.6, 0.2, 1),
    "albumin": _L(50862, "g/dL", 3.5, 5.2, 3.9, 0.3, 1),
    # coagulation
    "inr": _L(51237, None, 0.9, 1.1, 1.0, 0.05, 1),
    "pt": _L(51274, "sec", 9.4, 12.5, 11.0, 0.6, 1),
    "ptt": _L(51275, "sec", 25, 36.5, 30, 2.5, 1),
    # lactate, ABG
    "lactate": _L(50813, "mmol/L", 0.5, 2.0, 1.2, 0.3, 1),
    "ph": _L(50820, "units", 7.35, 7.45, 7.40, 0.02, 2),
    "pco2": _L(50818, "mm Hg", 35, 45, 40, 2.5, 0),
    "po2": _L(50821, "mm Hg", 85, 105, 95, 6, 0),
    "base_excess": _L(50802, "mEq/L", -3, 3, 0, 1.2, 0),
    # cardiac
    "troponin_t": _L(51003, "ng/mL", 0.0, 0.01, 0.005, 0.002, 2),
    "ntprobnp": _L(50963, "pg/mL", 0, 450, 150, 60, 0),
})


def lab_flag(spec: LabSpec, value: float) -> str | None:
    """MIMIC-III's FLAG: ``abnormal`` outside the reference range, else NULL."""
    return "abnormal" if value < spec.low or value > spec.high else None


@cache
def _read(name: str) -> pd.DataFrame:
    with resources.files("ehrlib").joinpath("data", "synth", f"{name}.csv").open("rb") as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False, na_values=[""])


def load_dictionary(logical: str) -> pd.DataFrame:
    """One dictionary (``d_items``, ``d_labitems``, ``d_icd_diagnoses``,
    ``d_icd_procedures``) as a DataFrame in logical columns, ``row_id`` from 1.
    """
    df = _read(logical).copy()
    for col in ("itemid",):
        if col in df:
            df[col] = df[col].astype("int64")
    if logical.startswith("d_icd_"):
        df["icd_version"] = 9
    df.insert(0, "row_id", range(1, len(df) + 1))
    return df
