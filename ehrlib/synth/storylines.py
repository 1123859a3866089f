"""Clinical storylines: what happens to a synthetic patient during one admission.

A storyline is data, not code: the diagnosis and billing codes, how far each vital sign
and lab moves at the peak of the illness, when that peak comes and how fast it resolves,
which therapies it triggers (pressors when the MAP falls below 65, transfusion when the
hemoglobin falls below 7.5, an insulin drip until the anion gap closes, ...), which
orders, cultures, lines and drains it brings. :mod:`ehrlib.synth.tables` turns one into
rows; because therapies are triggered by the generated values themselves, statements
such as "started on levophed for MAP in the 50s" are true of the tables.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["MedOrder", "Infection", "Storyline", "STORYLINES", "COMMON_MEDS", "COMORBIDITIES"]


@dataclass(frozen=True, slots=True)
class MedOrder:
    """One PRESCRIPTIONS order.

    ``start`` names a storyline event (``admission``, ``first_antibiotic``, ``surgery``, ...); ``every_h``
    is the administration interval used for the eMAR (None: continuous or PRN, charted as infusions
    instead); ``input_item`` names the MetaVision/CareVue input item its IV doses are charted as.
    """

    drug: str
    generic: str | None
    strength: str
    dose: str
    unit: str
    form_val: str
    form_unit: str
    route: str
    start: str = "admission"
    days: tuple[int, int] = (2, 5)
    every_h: int | None = 24
    input_item: str | None = None
    drug_type: str = "MAIN"


@dataclass(frozen=True, slots=True)
class Infection:
    """Cultures drawn at the ``culture`` event and what they grow.

    ``organisms`` are (org_itemid, org_name) alternatives; the panel lists
    (ab_itemid, ab_name) tested against the isolate; ``resistant`` are the antibiotics
    usually reported R for that organism.
    """

    specimens: tuple[tuple[int, str], ...]
    organisms: tuple[tuple[int, str, tuple[str, ...]], ...]
    positive_specimen: str


@dataclass(frozen=True, slots=True)
class Storyline:
    """The clinical course of one synthetic admission."""
    name: str
    diagnosis: str
    admission_type: str
    careunits: tuple[str, ...]
    icd9_dx: tuple[str, ...]
    icd9_px: tuple[str, ...]
    #: vital deltas at peak severity: hr, sbp, dbp, rr, spo2, temp_c
    vitals: Mapping[str, float]
    #: lab -> ("add" | "mul", amount at peak severity)
    labs: Mapping[str, tuple[str, float]]
    peak_h: tuple[float, float]
    decay_h: tuple[float, float]
    meds: tuple[MedOrder, ...] = ()
    infection: Infection | None = None
    #: therapies and findings: pressors, fluids, transfusion, insulin_drip, diuresis,
    #: afib, edema, bipap, abg, cardiac, endoscopy, fever
    traits: frozenset[str] = frozenset()
    p_intubation: float = 0.0
    surgery: str | None = None
    drains: tuple[str, ...] = ()
    #: abdominal assessment by phase, sickest first (``CATEGORICAL_VALUES["abdomen"]`` states)
    abdomen: tuple[str, ...] = ("soft",)
    #: lung sounds while ill (one per lobe, drawn per patient); "clear" once recovered
    lungs: tuple[str, ...] = ("clear",)
    #: hours from admission (or from the end of surgery) to ICU arrival
    icu_offset_h: tuple[float, float] = (1.0, 6.0)


_ABX_PANEL_GN = ("AMPICILLIN", "CEFAZOLIN", "CEFTRIAXONE", "CEFEPIME", "CIPROFLOXACIN", "GENTAMICIN",
                 "MEROPENEM", "PIPERACILLIN/TAZO", "TRIMETHOPRIM/SULFA")
_ABX_PANEL_GP = ("OXACILLIN", "VANCOMYCIN", "CLINDAMYCIN", "ERYTHROMYCIN", "GENTAMICIN", "LEVOFLOXACIN",
                 "TETRACYCLINE", "TRIMETHOPRIM/SULFA")
#: MIMIC-III ab_itemid for each antibiotic name
AB_ITEMIDS: Mapping[str, int] = MappingProxyType({
    "PENICILLIN": 90002, "AMPICILLIN": 90004, "CEFAZOLIN": 90005, "CLINDAMYCIN": 90007,
    "ERYTHROMYCIN": 90006, "TRIMETHOPRIM/SULFA": 90008, "NITROFURANTOIN": 90010, "TETRACYCLINE": 90011,
    "GENTAMICIN": 90012, "TOBRAMYCIN": 90013, "VANCOMYCIN": 90015, "OXACILLIN": 90016,
    "CEFTAZIDIME": 90017, "CEFTRIAXONE": 90018, "CIPROFLOXACIN": 90019, "IMIPENEM": 90020,
    "LEVOFLOXACIN": 90025, "PIPERACILLIN/TAZO": 90026, "CEFEPIME": 90028, "MEROPENEM": 90029,
})
ANTIBIOTIC_PANELS: Mapping[str, tuple[str, ...]] = MappingProxyType({"gp": _ABX_PANEL_GP, "gn": _ABX_PANEL_GN})

_BLOOD = (70012, "BLOOD CULTURE")
_URINE = (70079, "URINE")
_SPUTUM = (70062, "SPUTUM")

_VANC = MedOrder("Vancomycin", "Vancomycin", "1g Frozen Bag", "1000", "mg", "1", "BAG", "IV",
                 "first_antibiotic", (3, 7), 12, "vancomycin")
_ZOSYN = MedOrder("Piperacillin-Tazobactam", "Piperacillin-Tazobactam Na", "4.5 g Vial", "4.5", "g", "1",
                  "VIAL", "IV", "first_antibiotic", (3, 7), 8, "zosyn")
_CTX = MedOrder("CeftriaXONE", "CeftriaXONE", "1gm Vial", "1", "gm", "1", "VIAL", "IV",
                "first_antibiotic", (3, 6), 24, "ceftriaxone")
_CEFAZOLIN = MedOrder("CeFAZolin", "CeFAZolin", "1 g Vial", "1", "g", "1", "VIAL", "IV", "surgery",
                      (1, 2), 8, "cefazolin")
_INSULIN_SS = MedOrder("Insulin", "Insulin Regular Human", "100 Units / mL - 10 mL Vial", "0", "UNIT", "0",
                       "VIAL", "SC", "admission", (3, 8), None)
_FUROSEMIDE = MedOrder("Furosemide", "Furosemide", "10mg/mL-4mL Vial", "40", "mg", "4", "mL", "IV",
                       "admission", (2, 5), 12, "furosemide")
_PANTO_IV = MedOrder("Pantoprazole", "Pantoprazole Sodium", "40mg Vial", "40", "mg", "1", "VIAL", "IV",
                     "admission", (2, 5), 12, "pantoprazole")
_METOPROLOL = MedOrder("Metoprolol Tartrate", "Metoprolol Tartrate", "25mg Tablet", "25", "mg", "1", "TAB",
                       "PO", "admission", (3, 8), 12)
_ASPIRIN = MedOrder("Aspirin", "Aspirin", "325mg Tablet", "325", "mg", "1", "TAB", "PO", "surgery", (3, 8), 24)
_MORPHINE = MedOrder("Morphine Sulfate", "Morphine Sulfate", "2mg Syringe", "2", "mg", "1", "SYR", "IV",
                     "surgery", (1, 3), None)
_ALBUTEROL = MedOrder("Albuterol 0.083% Neb Soln", "Albuterol Sulfate", "2.5mg/3mL Neb", "1", "NEB", "1",
                      "NEB", "IH", "admission", (3, 8), 6)
_PREDNISONE = MedOrder("PredniSONE", "PredniSONE", "20 mg Tab", "40", "mg", "2", "TAB", "PO", "admission",
                       (4, 6), 24)
_LEVOFLOX = MedOrder("Levofloxacin", "Levofloxacin", "750mg Premix", "750", "mg", "1", "BAG", "IV",
                     "first_antibiotic", (3, 5), 24, "levofloxacin")
_KCL = MedOrder("Potassium Chloride", "Potassium Chloride", "20mEq/50mL Premix", "20", "mEq", "1", "BAG",
                "IV", "admission", (1, 3), 12)

#: Orders most admissions get (DVT prophylaxis, bowel regimen, PRN acetaminophen).
COMMON_MEDS: tuple[MedOrder, ...] = (
    MedOrder("Heparin", "Heparin Sodium", "5000 Units / mL- 1mL Vial", "5000", "UNIT", "1", "mL", "SC",
             "admission", (3, 9), 8),
    MedOrder("Docusate Sodium", "Docusate Sodium", "100mg Capsule", "100", "mg", "1", "CAP", "PO",
             "admission", (3, 9), 12),
    MedOrder("Acetaminophen", "Acetaminophen", "325mg Tablet", "650", "mg", "2", "TAB", "PO",
             "admission", (3, 9), None),
    MedOrder("Sodium Chloride 0.9%  Flush", None, "10 mL Syringe", "3", "mL", "0.3", "SYR", "IV",
             "admission", (3, 9), 8),
)

#: Chronic conditions billed as secondary diagnoses (ICD-9), one to three per patient,
#: the same on every admission of that patient: the "past medical history" of notes.
COMORBIDITIES: tuple[str, ...] = ("4019", "2724", "25000", "53081", "3051", "2449", "311", "5859", "412",
                                  "V5861", "30000", "73300", "V1582", "2720")

_SEPSIS_VITALS = {"hr": 34, "sbp": -42, "dbp": -22, "rr": 10, "spo2": -7, "temp_c": 2.0}

STORYLINES: Mapping[str, Storyline] = MappingProxyType({s.name: s for s in (
    Storyline(
        "sepsis_pneumonia", "PNEUMONIA;SEPSIS", "EMERGENCY", ("MICU",),
        ("0389", "486", "99592", "78552", "51881", "5849", "4019"), ("9671", "9604", "3893", "3891"),
        _SEPSIS_VITALS,
        {"wbc": ("mul", 2.4), "lactate": ("add", 3.8), "creatinine": ("mul", 2.3), "bun": ("mul", 2.0),
         "bicarbonate": ("add", -7), "plt": ("mul", 0.55), "bilirubin": ("mul", 2.0), "glucose": ("add", 45),
         "ph": ("add", -0.12), "pco2": ("add", -6), "po2": ("add", -30), "base_excess": ("add", -7),
         "albumin": ("add", -0.9), "inr": ("mul", 1.3)},
        (4, 14), (18, 36),
        meds=(_VANC, _ZOSYN),
        infection=Infection((_BLOOD, _SPUTUM),
                            ((80023, "STAPH AUREUS COAG +", ("PENICILLIN",)),
                             (80026, "PSEUDOMONAS AERUGINOSA", ("CEFTRIAXONE", "TRIMETHOPRIM/SULFA")),
                             (80004, "KLEBSIELLA PNEUMONIAE", ("AMPICILLIN",))), "SPUTUM"),
        traits=frozenset({"pressors", "fluids", "fever", "abg"}),
        p_intubation=0.6, lungs=("rhonchi", "crackles", "diminished")),
    Storyline(
        "urosepsis", "UROSEPSIS", "EMERGENCY", ("MICU",),
        ("03842", "5990", "99592", "5849", "25000"), ("3893",),
        {"hr": 30, "sbp": -36, "dbp": -18, "rr": 7, "spo2": -2, "temp_c": 2.2},
        {"wbc": ("mul", 2.2), "lactate": ("add", 2.6), "creatinine": ("mul", 2.0), "bun": ("mul", 1.8),
         "bicarbonate": ("add", -5), "plt": ("mul", 0.7), "glucose": ("add", 60)},
        (2, 10), (14, 30),
        meds=(_CTX,),
        infection=Infection((_BLOOD, _URINE),
                            ((80002, "ESCHERICHIA COLI", ("AMPICILLIN", "TRIMETHOPRIM/SULFA")),
                             (80017, "PROTEUS MIRABILIS", ("TETRACYCLINE",)),
                             (80004, "KLEBSIELLA PNEUMONIAE", ("AMPICILLIN",))), "URINE"),
        traits=frozenset({"pressors", "fluids", "fever"})),
    Storyline(
        "gi_bleed", "UPPER GI BLEED", "EMERGENCY", ("MICU",),
        ("5789", "53140", "2851", "4019"), ("4443", "9904"),
        {"hr": 30, "sbp": -32, "dbp": -14, "rr": 4, "spo2": -1, "temp_c": 0.0},
        {"hgb": ("add", -7.0), "hct": ("add", -20.0), "bun": ("mul", 2.6), "plt": ("mul", 0.85),
         "inr": ("mul", 1.2), "lactate": ("add", 1.6)},
        (3, 10), (20, 40),
        meds=(_PANTO_IV,),
        traits=frozenset({"transfusion", "fluids", "endoscopy"}),
        abdomen=("soft", "tender")),
    Storyline(
        "chf_exacerbation", "CONGESTIVE HEART FAILURE", "EMERGENCY", ("CCU",),
        ("42823", "4280", "42731", "4019", "5849", "2724"), ("8872",),
        {"hr": 18, "sbp": 26, "dbp": 12, "rr": 10, "spo2": -8, "temp_c": 0.0},
        {"ntprobnp": ("mul", 28.0), "creatinine": ("mul", 1.6), "bun": ("mul", 1.7), "sodium": ("add", -6),
         "troponin_t": ("add", 0.06), "potassium": ("add", -0.4)},
        (1, 8), (24, 48),
        meds=(_FUROSEMIDE, _METOPROLOL, _KCL),
        traits=frozenset({"diuresis", "afib", "edema", "cardiac", "bipap"}),
        lungs=("crackles",)),
    Storyline(
        "dka", "DIABETIC KETOACIDOSIS", "EMERGENCY", ("MICU",),
        ("25013", "27651", "2768", "2762"), ("3893",),
        {"hr": 28, "sbp": -12, "dbp": -6, "rr": 12, "spo2": 0, "temp_c": 0.0},
        {"glucose": ("add", 420), "bicarbonate": ("add", -15), "ph": ("add", -0.27), "pco2": ("add", -17),
         "base_excess": ("add", -17), "potassium": ("add", 1.2), "creatinine": ("mul", 1.6),
         "bun": ("mul", 1.6), "sodium": ("add", -4), "wbc": ("mul", 1.6), "phosphate": ("add", -1.2)},
        (0, 4), (10, 20),
        meds=(_INSULIN_SS, _KCL),
        traits=frozenset({"insulin_drip", "fluids", "abg"}),
        abdomen=("tender", "soft")),
    Storyline(
        "post_op_cabg", "CORONARY ARTERY DISEASE\\CORONARY ARTERY BYPASS GRAFT /SDA", "ELECTIVE", ("CSRU",),
        ("41401", "4111", "4019", "2724", "25000"), ("3612", "3961", "3893", "3891"),
        {"hr": 12, "sbp": -16, "dbp": -8, "rr": 2, "spo2": -2, "temp_c": -0.9},
        {"hgb": ("add", -3.4), "hct": ("add", -10.0), "wbc": ("mul", 1.7), "glucose": ("add", 70),
         "potassium": ("add", -0.4), "lactate": ("add", 1.8), "troponin_t": ("add", 0.9), "plt": ("mul", 0.7),
         "magnesium": ("add", -0.3)},
        (0, 2), (16, 30),
        meds=(_CEFAZOLIN, _ASPIRIN, _METOPROLOL, _MORPHINE, _FUROSEMIDE),
        traits=frozenset({"cardiac", "abg", "surgical"}),
        p_intubation=1.0, surgery="CABG", drains=("chest_tube",), icu_offset_h=(4.0, 8.0)),
    Storyline(
        "post_op_colectomy", "SIGMOID DIVERTICULITIS/SDA", "ELECTIVE", ("SICU",),
        ("56211", "4019", "2724"), ("4576",),
        {"hr": 18, "sbp": -12, "dbp": -6, "rr": 4, "spo2": -2, "temp_c": 0.8},
        {"hgb": ("add", -2.2), "hct": ("add", -6.5), "wbc": ("mul", 1.8), "lactate": ("add", 0.9),
         "potassium": ("add", -0.5), "albumin": ("add", -0.8), "glucose": ("add", 35)},
        (2, 10), (24, 48),
        meds=(_CEFAZOLIN, _MORPHINE),
        traits=frozenset({"surgical", "fever"}),
        surgery="SIGMOID COLECTOMY", drains=("jp_drain", "ng_tube"),
        abdomen=("tender", "distended", "soft"), icu_offset_h=(3.0, 6.0)),
    Storyline(
        "copd_exacerbation", "COPD EXACERBATION", "EMERGENCY", ("MICU",),
        ("49121", "51881", "4168", "4019"), ("9390", "9394"),
        {"hr": 20, "sbp": 12, "dbp": 6, "rr": 12, "spo2": -10, "temp_c": 0.4},
        {"pco2": ("add", 26), "ph": ("add", -0.11), "po2": ("add", -28), "bicarbonate": ("add", 6),
         "wbc": ("mul", 1.4), "glucose": ("add", 40)},
        (1, 8), (20, 40),
        meds=(_ALBUTEROL, _PREDNISONE, _LEVOFLOX),
        infection=Infection((_SPUTUM,), ((80076, "STREPTOCOCCUS PNEUMONIAE", ("ERYTHROMYCIN",)),), "SPUTUM"),
        traits=frozenset({"bipap", "abg"}),
        p_intubation=0.25, lungs=("wheeze", "diminished")),
)})
