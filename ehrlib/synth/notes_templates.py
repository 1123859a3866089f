"""Surface forms for the note writer: de-identification brackets, abbreviations, names,
and the out-of-scope text (history, home medications, plans, instructions) that real
MIMIC-III notes carry and that must never be labeled.

Kept apart from the statement logic so that adding a paraphrase never touches how a
label is decided.
"""
from __future__ import annotations

import datetime as dt
import random
import re

__all__ = [
    "deid_date",
    "deid_name",
    "deid_hospital",
    "drug_surface",
    "organism_surface",
    "specimen_surface",
    "location_surface",
    "input_surface",
    "category_surface",
    "dx_surface",
    "PAST_HISTORY",
    "HOME_MEDS",
    "FAMILY_HISTORY",
    "SOCIAL_HISTORY",
    "PLANS",
    "INSTRUCTIONS",
    "CHIEF_COMPLAINTS",
    "ALLERGIES",
]


def deid_date(d: dt.datetime | dt.date, rng: random.Random, full: bool | None = None) -> str:
    """MIMIC de-identified date: ``[**2164-10-23**]`` or ``[**10-23**]``."""
    full = rng.random() < 0.5 if full is None else full
    return f"[**{d:%Y-%m-%d}**]" if full else f"[**{d.month}-{d.day}**]"


_LAST = ("Known lastname", "Last Name (un)", "Last Name (STitle)", "Name (NI)")
_FIRST = ("First Name4 (NamePattern1)", "First Name8 (NamePattern2)", "Known firstname")


def deid_name(rng: random.Random, title: str = "Dr.") -> str:
    """A de-identified name in MIMIC's ``[** **]`` style."""
    first = f"[**{rng.choice(_FIRST)} {rng.randint(10, 999)}**]"
    return f"{title} {first} [**{rng.choice(_LAST)} {rng.randint(10, 9999)}**]"


def deid_hospital(rng: random.Random) -> str:
    """A de-identified hospital or location."""
    return rng.choice(("[**Hospital 1**]", f"[**Hospital {rng.randint(2, 999)}**]", "[**Hospital1 18**]",
                       f"[**Location (un) {rng.randint(100, 999)}**]"))


_DRUG_ABBR = {
    "vancomycin": ("vanc", "vancomycin", "Vancomycin"),
    "piperacillin": ("zosyn", "pip-tazo", "Zosyn"),
    "furosemide": ("lasix", "furosemide", "Lasix"),
    "metoprolol": ("lopressor", "metoprolol", "Metoprolol"),
    "acetaminophen": ("tylenol", "APAP", "acetaminophen"),
    "pantoprazole": ("protonix", "pantoprazole", "PPI (pantoprazole)"),
    "norepinephrine": ("levophed", "norepi", "norepinephrine"),
    "ceftriaxone": ("CTX", "ceftriaxone", "Ceftriaxone"),
    "levofloxacin": ("levo", "levofloxacin", "Levaquin"),
    "metronidazole": ("flagyl", "metronidazole", "Flagyl"),
    "heparin": ("heparin", "hep", "Heparin"),
    "insulin": ("insulin", "ISS", "Insulin"),
    "docusate": ("colace", "docusate", "Colace"),
    "senna": ("senna", "senna", "Senna"),
    "potassium chloride": ("KCl", "K repletion", "potassium chloride"),
    "magnesium sulfate": ("Mg repletion", "mag sulfate", "MgSO4"),
}


def drug_surface(drug: str, rng: random.Random) -> str:
    """How a note might write this drug (an abbreviation or the name)."""
    low = drug.lower()
    for key, forms in _DRUG_ABBR.items():
        if low.startswith(key):
            return rng.choice(forms + (drug,))
    return rng.choice((drug, low, drug))


_ORG = {
    "STAPHYLOCOCCUS, COAGULASE NEGATIVE": ("coag-neg staph", "CoNS", "coagulase negative staph"),
    "ESCHERICHIA COLI": ("E. coli", "E coli", "pan-sensitive E. coli"),
    "STAPH AUREUS COAG +": ("Staph aureus", "S. aureus", "staph aureus"),
    "KLEBSIELLA PNEUMONIAE": ("Klebsiella", "K. pneumoniae", "klebsiella pneumoniae"),
    "PSEUDOMONAS AERUGINOSA": ("Pseudomonas", "P. aeruginosa", "pseudomonas"),
    "ENTEROCOCCUS SP.": ("enterococcus", "Enterococcus", "enterococcus sp"),
}


def organism_surface(org: str, rng: random.Random) -> str:
    """How a note might write this organism."""
    forms = _ORG.get(org.strip().upper())
    if forms:
        return rng.choice(forms)
    return org.strip().capitalize() if rng.random() < 0.5 else org.strip().lower()


def specimen_surface(spec: str, rng: random.Random) -> str:
    """How a note might write this specimen."""
    s = spec.strip().upper()
    if s.startswith("BLOOD"):
        return rng.choice(("Blood cx", "BCx", "blood culture", "blood cultures"))
    if s.startswith("URINE"):
        return rng.choice(("Urine cx", "UCx", "urine culture"))
    if "SPUTUM" in s:
        return rng.choice(("Sputum cx", "sputum culture", "sputum"))
    if "SWAB" in s:
        return rng.choice(("swab", s.lower()))
    return s.lower()


_SIDE = (("right ", ("R ", "right ", "Rt ")), ("left ", ("L ", "left ", "Lt ")))


def location_surface(loc: str, rng: random.Random) -> str:
    """'Right IJ' -> 'R IJ' / 'right IJ'; the side stays recognisable (commonsense match)."""
    text = loc.strip().rstrip(".")
    low = text.lower()
    for full, forms in _SIDE:
        if low.startswith(full):
            return rng.choice(forms) + text[len(full):]
    if low.startswith(("r ", "l ")):
        return text
    return text


_INPUT_NAMES = (
    (r"norepinephrine|levophed", ("levophed", "norepinephrine", "norepi")),
    (r"phenylephrine|neosynephrine", ("neo", "phenylephrine", "neosynephrine")),
    (r"vasopressin", ("vasopressin", "vaso")),
    (r"dopamine", ("dopamine",)),
    (r"^epinephrine", ("epinephrine", "epi")),
    (r"propofol", ("propofol", "propofol gtt")),
    (r"fentanyl", ("fentanyl", "fentanyl gtt")),
    (r"midazolam|versed", ("versed", "midazolam")),
    (r"insulin", ("insulin gtt", "insulin drip", "insulin")),
    (r"heparin", ("heparin gtt", "heparin drip")),
    (r"furosemide|lasix", ("lasix", "furosemide")),
    (r"amiodarone", ("amiodarone", "amio")),
    (r"nacl 0\.9|normal saline", ("NS", "normal saline", "IVF (NS)")),
    (r"lactated ringer", ("LR", "lactated ringers")),
    (r"packed red blood cells|prbc", ("PRBCs", "pRBC", "packed RBCs")),
)


def input_surface(label: str, rng: random.Random) -> str | None:
    """A note-style name for an input item, or None for items notes do not name."""
    low = label.lower()
    for pattern, forms in _INPUT_NAMES:
        if re.search(pattern, low):
            return rng.choice(forms)
    return None


def category_surface(value: str, rng: random.Random) -> str:
    """'SR (Sinus Rhythm)' -> 'SR' | 'sinus rhythm'; other values lower-cased."""
    m = re.fullmatch(r"\s*(.+?)\s*\((.+)\)\s*", value)
    if m:
        return rng.choice((m.group(1), m.group(2).lower()))
    return value.strip().lower()


def dx_surface(short: str | None, long: str | None, rng: random.Random) -> str:
    """How a note might write this diagnosis (short or long title, without NOS/NEC)."""
    options = [t for t in (short, long) if t]
    text = rng.choice(options)
    text = re.sub(r",? (NOS|NEC|unspecified)$", "", text.strip(), flags=re.I)
    return text[:1].upper() + text[1:]


CHIEF_COMPLAINTS = ("shortness of breath", "fever, hypotension", "abdominal pain", "altered mental status",
                    "chest pain", "weakness", "melena", "dyspnea on exertion", "fall")
PAST_HISTORY = (
    "HTN", "HLD", "DM2 on insulin", "CAD s/p CABG [**2150**]", "COPD on 2L home O2", "CKD stage III",
    "Afib on coumadin", "h/o GI bleed [**2159**]", "OSA on CPAP", "hypothyroidism", "depression",
    "BPH", "GERD", "s/p cholecystectomy", "h/o DVT", "chronic back pain", "osteoarthritis",
)
HOME_MEDS = (
    "Lisinopril 10 mg PO daily", "Metformin 500 mg PO BID", "Atorvastatin 40 mg PO qHS",
    "Aspirin 81 mg PO daily", "Omeprazole 20 mg PO daily", "Levothyroxine 50 mcg PO daily",
    "Tiotropium 18 mcg INH daily", "Warfarin 5 mg PO qHS", "Sertraline 50 mg PO daily",
    "Tamsulosin 0.4 mg PO qHS", "Furosemide 20 mg PO daily", "Amlodipine 5 mg PO daily",
)
FAMILY_HISTORY = ("Mother with DM2, father with MI at 60.", "Non-contributory.",
                  "Brother with colon cancer; mother with HTN.", "No family history of bleeding disorders.")
SOCIAL_HISTORY = ("Lives with wife. Former smoker, quit 10 yrs ago. Occasional EtOH.",
                  "Lives alone, retired. Denies tobacco, EtOH, IVDU.",
                  "Lives with daughter. 40 pack-year smoking history.")
ALLERGIES = ("No Known Allergies to Drugs", "Penicillins", "Sulfa (Sulfonamide Antibiotics)",
             "Codeine / Iodine", "Patient recorded as having No Known Allergies to Drugs")
PLANS = (
    "Will continue to monitor.", "Plan to wean sedation as tolerated.", "F/u AM labs.",
    "Consider PT consult.", "Will discuss goals of care with family.", "Continue current regimen.",
    "Plan to advance diet as tolerated.", "Monitor I/Os, replete lytes prn.",
    "Will consider repeat CXR in AM.", "Call out to floor if stable.",
)
INSTRUCTIONS = (
    "Please take all medications as prescribed.",
    "Return to the ED if you develop fever > 101, chest pain, shortness of breath or any other concerning symptom.",
    "Please weigh yourself every morning and call your doctor if weight goes up more than 3 lbs.",
    "Do not drive while taking narcotic pain medication.",
    "Please keep your follow-up appointments.",
)
