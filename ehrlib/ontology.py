"""The hierarchical item ontology used by ontology-guided extraction (paper §4.2, App. E.1.2).

12 groups, each split into subgroups, each holding items of the database. Ontology-guided
extraction narrows a note segment's candidate items group -> subgroup -> item instead of
showing a model all ~14,000 items.

Two builders produce the same versioned JSON format:

- :func:`build_ontology_rules` (offline, the default): items enumerated from the database's
  dictionaries (D_ITEMS, D_LABITEMS, D_ICD_*, drug names, microbiology names) and assigned
  by rules over table, category, fluid, ICD-9 range and label patterns to the groups and
  subgroups of the paper's Table 8 (``ehrlib/data/ontology_default.json``).
- :func:`build_ontology_llm`: the paper's procedure. Items go to the model in windows of
  ``w``; each prompt lists the groups created so far, the model assigns each item to one
  or creates a new group; then the same sliding window over (item, group) pairs assigns
  subgroups. Items the model leaves out keep the rule-based assignment, recorded in
  ``fallbacks``.

:func:`load_ontology` returns one ontology per database (memoised by file and manifest).
"""
from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ehrlib import schema
from ehrlib.corpus.io import write_json
from ehrlib.db import read_manifest
from ehrlib.db.connect import first_reads
from ehrlib.disk_cache import cached_value, code_digest, source_files
from ehrlib.errors import ConfigError, DataError
from ehrlib.prompting import get_prompt
from ehrlib.tools.lexical import builder_digest, catalog_for, database_identity

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "OntologyItem",
    "Ontology",
    "default_groups",
    "dictionary_items",
    "assign_by_rules",
    "build_ontology_rules",
    "build_ontology_llm",
    "load_ontology",
    "save_ontology",
    "read_ontology",
]

FORMAT = "ehrlib-ontology"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class OntologyItem:
    """One database item: tool key ``table:item``, its label, and where it sits."""

    key: str
    table: str
    label: str
    group: str
    subgroup: str
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Ontology:
    """The item ontology: group -> subgroups, and every catalogue item placed in one."""
    groups: Mapping[str, tuple[str, ...]]
    items: tuple[OntologyItem, ...]
    method: str = "rules"
    version: int = FORMAT_VERSION
    source: Mapping[str, Any] = field(default_factory=dict)

    @property
    def sha8(self) -> str:
        """Content hash: two builds with the same assignments share it."""
        payload = json.dumps({"groups": {g: list(s) for g, s in self.groups.items()},
                              "items": [[i.key, i.group, i.subgroup] for i in self.items]}, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:8]

    @property
    def group_names(self) -> tuple[str, ...]:
        """The group names, in order."""
        return tuple(self.groups)

    def subgroups(self, group: str) -> tuple[str, ...]:
        """The subgroups of ``group`` (empty when unknown)."""
        return tuple(self.groups.get(group, ()))

    def items_in(self, group: str, subgroup: str | None = None) -> tuple[OntologyItem, ...]:
        """The items of a group, or of one of its subgroups."""
        return tuple(i for i in self.items if i.group == group and (subgroup is None or i.subgroup == subgroup))

    def item(self, key: str) -> OntologyItem | None:
        """The item with this key, or None."""
        return _index(self).get(key)

    def counts(self) -> dict[str, int]:
        """Items per group."""
        out: dict[str, int] = {g: 0 for g in self.groups}
        for i in self.items:
            out[i.group] = out.get(i.group, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written by ``save_ontology``."""
        return {"format": FORMAT, "format_version": self.version, "method": self.method,
                "source": dict(self.source), "sha8": self.sha8,
                "groups": {g: list(s) for g, s in self.groups.items()},
                "items": [{"key": i.key, "table": i.table, "label": i.label, "group": i.group,
                           "subgroup": i.subgroup, "category": i.category} for i in self.items]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ontology:
        """Read the JSON form; DataError for another format or version."""
        if data.get("format") != FORMAT:
            raise DataError(f"not an ehrlib ontology (format={data.get('format')!r})")
        if data.get("format_version") != FORMAT_VERSION:
            raise DataError(f"ontology format_version {data.get('format_version')} is not supported "
                            f"(expected {FORMAT_VERSION}); rebuild it")
        groups = {str(g): tuple(str(s) for s in subs) for g, subs in (data.get("groups") or {}).items()}
        items = []
        for k, raw in enumerate(data.get("items") or ()):
            try:
                item = OntologyItem(str(raw["key"]), str(raw["table"]), str(raw["label"]), str(raw["group"]),
                                    str(raw["subgroup"]), raw.get("category"))
            except KeyError as exc:
                raise DataError(f"ontology item {k}: missing field {exc}") from None
            if item.group not in groups or item.subgroup not in groups[item.group]:
                raise DataError(f"ontology item {item.key}: {item.group} / {item.subgroup} is not in the groups")
            items.append(item)
        return cls(groups, tuple(items), str(data.get("method", "rules")), FORMAT_VERSION,
                   dict(data.get("source") or {}))


_INDEX: dict[int, tuple[Ontology, dict[str, OntologyItem]]] = {}


def _index(o: Ontology) -> dict[str, OntologyItem]:
    """Key index per ontology object (records are frozen with slots, so it lives here)."""
    hit = _INDEX.get(id(o))
    if hit is None or hit[0] is not o:
        hit = _INDEX[id(o)] = (o, {i.key: i for i in o.items})
    return hit[1]


def default_groups() -> dict[str, tuple[str, ...]]:
    """The 12 groups and their subgroups (paper Table 8), from the shipped seed file."""
    ref = importlib.resources.files("ehrlib").joinpath("data/ontology_default.json")
    data = json.loads(ref.read_text(encoding="utf-8"))
    return {g: tuple(s) for g, s in data["groups"].items()}


# --- enumerating the database's items --------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Raw:
    key: str
    table: str
    label: str
    category: str | None
    extra: str | None = None  # fluid (labs), linksto (d_items), icd code


def dictionary_items(con: Any, flavor: str | None = None) -> list[_Raw]:
    """Every item of the database under the tools' item keys (``ehrlib.tools`` catalog:
    d_items by linksto, d_labitems, ICD dictionaries, drug names, microbiology names).
    """
    smap = schema.schema_map(flavor or schema.detect_flavor(con))
    out = []
    with first_reads(database_identity(con)[0] or "(in-memory database)"):   # reads every dictionary table
        catalog = catalog_for(con, smap)
    for it in catalog.items:
        if it.table == "labevents":
            category = it.category.split(" / ")[0] if it.category else None
            out.append(_Raw(it.key, it.table, it.label, category, it.fluid))
        elif it.table == "microbiologyevents":
            kind = {"spec_type_desc": "specimen", "org_name": "organism", "ab_name": "antibiotic"}.get(it.column)
            out.append(_Raw(it.key, it.table, it.label, kind, "micro"))
        elif it.table in ("diagnoses_icd", "procedures_icd"):
            out.append(_Raw(it.key, it.table, it.label, it.category, str(it.value)))
        else:
            out.append(_Raw(it.key, it.table, it.label, it.category, it.table))
    return sorted(out, key=lambda r: r.key)


# --- rule-based assignment --------------------------------------------------------------------

def _rx(*words: str) -> re.Pattern[str]:
    return re.compile(r"(?:" + "|".join(words) + r")", re.IGNORECASE)


_CHART_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (_rx(r"allerg"), "ALLERGY", "ALLERGY"),
    (_rx(r"\bheart rate", r"\bhr\b", r"blood pressure", r"\bnbp", r"\babp", r"arterial bp", r"\bbp\b",
         r"temperature", r"\btemp\b", r"\bspo2", r"o2 sat", r"\bcvp\b", r"central venous", r"pulse",
         r"rhythm", r"cardiac output", r"\bmap\b", r"\bpap\b", r"weight", r"height", r"ectopy"),
     "HEMODYNAMICS & VITALS", "HEMODYNAMICS & VITALS"),
    (_rx(r"resp", r"vent", r"peep", r"fio2", r"tidal", r"o2 flow", r"o2 delivery", r"airway", r"breath",
         r"lung sound", r"sputum", r"\bpaw\b", r"insp", r"minute volume", r"apnea", r"cough", r"etco2",
         r"\bnares", r"trach"), "RESPIRATORY / VENTILATION & GAS MONITORING",
     "RESPIRATORY / VENTILATION & GAS MONITORING"),
    (_rx(r"\bgcs\b", r"pupil", r"orient", r"pain", r"sedation", r"rass", r"strength", r"movement",
         r"follows commands", r"stimuli", r"speech", r"communication", r"level of conscious", r"motor",
         r"verbal", r"eye opening", r"activity", r"ambulat", r"seizure", r"delirium", r"\bcam\b"),
     "NEURO/PAIN/FUNCTIONAL", "NEURO/PAIN/FUNCTIONAL"),
    (_rx(r"skin", r"wound", r"incision", r"braden", r"pressure (?:ulcer|reducing)", r"dressing", r"fall",
         r"restraint", r"line", r"gauge", r"catheter", r"tube", r"drain", r"site", r"edema", r"back care",
         r"turn", r"abdominal", r"bowel", r"stool", r"urine (?:color|source)", r"\bgu\b", r"\bgi\b"),
     "SKIN / WOUNDS & DEVICES / SAFETY", "SKIN / WOUNDS & DEVICES / SAFETY"),
    (_rx(r"\bph\b", r"po2", r"pco2", r"bicarb", r"lactate", r"glucose", r"potassium", r"sodium", r"chloride",
         r"creatinine", r"\bbun\b", r"hemoglobin", r"hematocrit", r"platelet", r"\bwbc\b", r"\binr\b",
         r"\bptt\b", r"magnesium", r"calcium", r"phosph", r"base excess", r"\babg\b", r"\bvbg\b", r"arterial"),
     "LABS / ABG-CHEMISTRY", "LABS / ABG-CHEMISTRY"),
)
_ADMIN = ("SKIN / WOUNDS & DEVICES / SAFETY", "AMBIGUOUS, ADMINISTRATIVE / ADMISSION & DEMOGRAPHICS")

_MED_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_rx(r"cillin", r"cef", r"ceph", r"penem", r"mycin", r"floxacin", r"vancomycin", r"metronidazole",
         r"bactrim", r"sulfameth", r"fluconazole", r"micafungin", r"acyclovir", r"ganciclovir", r"oseltamivir",
         r"tazobactam", r"aztreonam", r"linezolid", r"daptomycin", r"colistin", r"tigecycline", r"doxycycline",
         r"azole\b", r"vaccine", r"immun"), "INFECTIOUS DISEASES & IMMUNOLOGY"),
    (_rx(r"heparin", r"warfarin", r"coumadin", r"enoxaparin", r"aspirin", r"clopidogrel", r"metoprolol",
         r"labetalol", r"carvedilol", r"amiodarone", r"diltiazem", r"digoxin", r"norepinephrine", r"levophed",
         r"phenylephrine", r"neosynephrine", r"vasopressin", r"dopamine", r"dobutamine", r"epinephrine",
         r"milrinone", r"nitroglycerin", r"nitroprusside", r"hydralazine", r"lisinopril", r"amlodipine",
         r"atorvastatin", r"simvastatin", r"esmolol", r"packed r", r"\bprbc", r"platelet", r"plasma", r"\bffp",
         r"cryo", r"albumin", r"argatroban", r"bivalirudin", r"alteplase"), "CARDIO & HEMATOLOGY"),
    (_rx(r"morphine", r"fentanyl", r"hydromorphone", r"dilaudid", r"oxycodone", r"propofol", r"midazolam",
         r"lorazepam", r"diazepam", r"haloperidol", r"quetiapine", r"dexmedetomidine", r"precedex", r"ketamine",
         r"acetaminophen", r"tylenol", r"gabapentin", r"levetiracetam", r"keppra", r"phenytoin", r"sertraline",
         r"trazodone", r"naloxone", r"ketorolac", r"cisatracurium", r"vecuronium", r"rocuronium",
         r"tramadol"), "CNS, PAIN & SEDATION"),
    (_rx(r"insulin", r"glargine", r"levothyrox", r"hydrocortisone", r"prednis", r"methylpred",
         r"dexameth", r"furosemide", r"lasix", r"bumetanide", r"torsemide", r"spironolact", r"pantopra",
         r"omeprazole", r"famotidine", r"ondansetron", r"metoclopramide", r"docusate", r"senna",
         r"lactulose", r"bisacodyl", r"octreotide", r"sevelamer", r"calcitriol", r"polyethylene glycol",
         r"sucralfate", r"rifaximin"), "ENDOCRINE, RENAL & GI"),
    (_rx(r"albuterol", r"ipratropium", r"tiotropium", r"fluticasone", r"budesonide", r"montelukast",
         r"guaifenesin", r"artificial tear", r"ophth", r"eye drop", r"nystatin", r"cream", r"ointment",
         r"lotion", r"lidocaine"), "RESPIRATORY, ENT/OPHTH & DERM"),
    (_rx(r"saline", r"\bns\b", r"\blr\b", r"lactated", r"ringer", r"dextrose", r"\bd5", r"\bd10", r"potassium",
         r"\bkcl\b", r"sodium", r"magnesium", r"calcium", r"phosph", r"bicarbonate", r"\bsw\b", r"water",
         r"tube feed", r"\btf\b", r"nutrition", r"\btpn\b", r"lipid", r"formula", r"free water", r"bolus",
         r"multivitamin", r"thiamine", r"folic", r"vitamin", r"fluid"), "FLUIDS & NUTRITION"),
)
_MED_DEFAULT = "FORMULATIONS, DEVICES, STUDY CODES & AMBIGUOUS"

_OUTPUT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_rx(r"ultrafilt", r"cvvh", r"dialys", r"\bcrrt\b", r"\bhd\b"), "DIALYSIS_ULTRAFILTRATION"),
    (_rx(r"urine", r"foley", r"void", r"\bgu\b", r"nephrostomy", r"suprapubic", r"condom cath", r"straight cath"),
     "URINARY_OUTPUT"),
    (_rx(r"chest tube", r"pleural", r"thoracent"), "PLEURAL_CHEST_TUBES"),
    (_rx(r"paracent", r"ascites", r"peritoneal"), "ABDOMINAL_PARACENTESIS"),
    (_rx(r"\bcsf\b", r"\bevd\b", r"ventriculostomy", r"lumbar drain"), "CSF_DRAINAGE"),
    (_rx(r"\bng\b", r"\bog\b", r"gastric", r"\bgt\b", r"g-tube", r"j-tube", r"peg", r"tube feed residual",
         r"residual"), "GI_TUBES_OUTPUT"),
    (_rx(r"stool", r"ostomy", r"colostomy", r"ileostomy", r"fecal", r"rectal tube", r"bowel"), "BOWEL_OSTOMY_OUTPUT"),
    (_rx(r"emesis", r"vomit"), "EMESIS_ORAL_GASTRIC"),
    (_rx(r"biliary", r"bile", r"pancrea", r"hepat", r"t-tube", r"cholecyst"), "HEPATOBILIARY_PANCREATIC_DRAINS"),
    (_rx(r"blood loss", r"\bebl\b", r"apheresis", r"cell saver", r"\bor\b"), "BLOODLOSS_APHERESIS_OPS"),
    (_rx(r"\bjp\b", r"jackson", r"hemovac", r"blake", r"pigtail", r"drain"), "DRAIN_DEVICES"),
    (_rx(r"wound", r"vac\b", r"incision"), "WOUND_LOCAL_DRAINS"),
    (_rx(r"cardiac output", r"\bco\b"), "CARDIAC OUTPUT"),
    (_rx(r"total", r"adjust", r"\bout\b"), "ADJUSTMENT/AGGREGATED VALUES"),
)

_PROC_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_rx(r"line", r"gauge", r"catheter", r"picc", r"cordis", r"introducer", r"port", r"cannul", r"access",
         r"arterial", r"central venous", r"venous"), "ACCESS & LINES"),
    (_rx(r"intubat", r"extubat", r"ventilat", r"trach", r"airway", r"\bbipap", r"\bcpap", r"bronch"),
     "AIRWAY & VENTILATION"),
    (_rx(r"dialys", r"cvvh", r"\bcrrt", r"hemofilt", r"renal", r"kidney", r"nephro", r"ureter", r"bladder",
         r"cystoscopy"), "RENAL & DIALYSIS"),
    (_rx(r"x-?ray", r"\bct\b", r"\bcat scan", r"\bmri\b", r"ultrasound", r"sono", r"echo", r"culture", r"swab",
         r"\becg\b", r"\bekg\b", r"\beeg\b", r"imaging", r"scan", r"angiogra", r"\bbiops", r"sent"),
     "DIAGNOSTICS (IMAGING/LABS/CULTURES/SWABS/ECG·EEG)"),
    (_rx(r"cardiac", r"heart", r"coronary", r"valve", r"pacemaker", r"pacer", r"defibrill", r"cardiover",
         r"balloon pump", r"\biabp", r"\bcabg", r"ptca", r"stent"), "CARDIAC"),
    (_rx(r"endoscop", r"\begd\b", r"colonoscop", r"gastro", r"bowel", r"colon", r"intestin", r"\bercp",
         r"embolization", r"interventional", r"\bir\b", r"paracent", r"liver", r"biliary", r"gastrostomy"),
     "GI&IR"),
    (_rx(r"cranio", r"ventriculostomy", r"\bevd\b", r"\bicp\b", r"lumbar puncture", r"spinal", r"brain",
         r"nerve"), "NEURO & ICP"),
    (_rx(r"cesarean", r"uter", r"ovar", r"obstet", r"deliver", r"vagin"), "OB/GYN"),
    (_rx(r"fractur", r"joint", r"bone", r"ortho", r"amputat", r"femur", r"hip", r"knee", r"spine fusion"), "MSK"),
    (_rx(r"transfer", r"consult", r"\bor sent", r"code status", r"comm", r"isolation", r"restraint"),
     "CARE FLOW, COMMS, SAFETY ADMIN"),
)
_PROC_DEFAULT = "GENERAL/PLASTICS/ENT/EYE/DENTAL"


def _icd9_diagnosis_subgroup(code: str) -> str:
    """Infectious ICD-9 chapters (001-139) by range, as the paper's DIAGNOSIS subgroups."""
    if not code[:3].isdigit():
        return "NON-INFECTIOUS / NEOPLASTIC DISEASES"  # V and E codes
    n = int(code[:3])
    if 10 <= n <= 18:
        return "TUBERCULOSIS"
    if 1 <= n <= 9:
        return "ENTERIC & FOODBORNE BACTERIAL INFECTIONS"
    if 20 <= n <= 27 or 30 <= n <= 31:
        return "ZOONOTIC & MYCOBACTERIAL DISEASES"
    if n == 42 or 90 <= n <= 99:
        return "SEXUALLY TRANSMITTED INFECTIONS (STIS) & HIV"
    if n == 46:
        return "PRION & SLOW VIRUS DISEASES"
    if 32 <= n <= 41:
        return "OTHER BACTERIAL & SEPTIC INFECTIONS"
    if 45 <= n <= 79:
        return "VIRAL DISEASES"
    if 80 <= n <= 88 or 120 <= n <= 136:
        return "PARASITIC & VECTOR-BORNE PROTOZOAL/TICK-BORNE DISEASES"
    if 481 <= n <= 486:
        return "RESPIRATORY BACTERIAL DISEASES"
    return "NON-INFECTIOUS / NEOPLASTIC DISEASES"


def _lab_subgroup(category: str | None, fluid: str | None, groups: Mapping[str, tuple[str, ...]]) -> str:
    cat = (category or "CHEMISTRY").strip().upper()
    if cat not in ("HEMATOLOGY", "CHEMISTRY", "BLOOD GAS"):
        cat = "CHEMISTRY"
    fl = (fluid or "OTHER BODY FLUID").strip().upper()
    fl = {"CEREBROSPINAL FLUID": "CEREBROSPINAL FLUID (CSF)", "CSF": "CEREBROSPINAL FLUID (CSF)",
          "PLEURAL FLUID": "PLEURAL", "JOINT": "JOINT FLUID"}.get(fl, fl)
    name = f"{cat} ({fl})"
    return name if name in groups["LABORATORY"] else f"{cat} (OTHER BODY FLUID)" \
        if f"{cat} (OTHER BODY FLUID)" in groups["LABORATORY"] else "CHEMISTRY (OTHER BODY FLUID)"


def _first(rules: Iterable[tuple[re.Pattern[str], str]], text: str, default: str) -> str:
    return next((sub for rx, sub in rules if rx.search(text)), default)


def assign_by_rules(raw: _Raw, groups: Mapping[str, tuple[str, ...]]) -> tuple[str, str]:
    """(group, subgroup) of one item by table, category, fluid, code range and label."""
    label = raw.label
    text = f"{label} {raw.category or ''}"
    if raw.table == "labevents":
        return "LABORATORY", _lab_subgroup(raw.category, raw.extra, groups)
    if raw.table == "microbiologyevents":
        kind = (raw.category or "").lower()
        if kind == "antibiotic" or re.search(r"cillin|mycin|cef|penem|floxacin|azole|sulfa|tetracycline|"
                                             r"nitrofurantoin|linezolid|daptomycin|colistin|vancomycin|"
                                             r"sulbactam|tazobactam|aztreonam|rifampin", label, re.I):
            return "MICROBIOLOGY", "ANTIBACTERIUM"
        if kind == "specimen" or re.search(r"culture|urine|blood|sputum|swab|fluid|stool|tissue|csf|"
                                           r"specimen|catheter tip|bronchial|aspirate", label, re.I):
            return "MICROBIOLOGY", "SPECIMEN"
        return "MICROBIOLOGY", "ORGANISM"
    if raw.table == "diagnoses_icd":
        return "DIAGNOSIS", _icd9_diagnosis_subgroup(raw.extra or "")
    if raw.table == "procedures_icd" or raw.table == "procedureevents_mv":
        return "PROCEDURE", _first(_PROC_RULES, text, _PROC_DEFAULT)
    if raw.table in ("prescriptions", "inputevents_mv", "inputevents_cv", "emar"):
        return "MEDICATIONS, FLUIDS & NUTRITION", _first(_MED_RULES, text, _MED_DEFAULT)
    if raw.table == "outputevents":
        return "OUTPUT AND REMOVAL", _first(_OUTPUT_RULES, text, "LOCATION-BASED OUTPUT")
    # chartevents and anything else charted at the bedside
    for rx, group, sub in _CHART_RULES:
        if rx.search(text):
            return group, sub
    return _ADMIN


def _from_assignments(raws: Sequence[_Raw], assigned: Mapping[str, tuple[str, str]], method: str,
                      groups: Mapping[str, tuple[str, ...]], source: Mapping[str, Any]) -> Ontology:
    grouped = {g: list(s) for g, s in groups.items()}
    items = []
    for r in raws:
        g, s = assigned[r.key]
        subs = grouped.setdefault(g, [])
        if s not in subs:
            subs.append(s)
        items.append(OntologyItem(r.key, r.table, r.label, g, s, r.category))
    return Ontology({g: tuple(s) for g, s in grouped.items()}, tuple(items), method, FORMAT_VERSION, dict(source))


def _source(con: Any) -> dict[str, Any]:
    try:
        m = read_manifest(con)
    except Exception:  # noqa: BLE001 - a bare DuckDB file without manifest is still usable here
        m = {}
    return {k: m.get(k) for k in ("layout", "source_kind", "flavor", "version", "built_at") if k in m}


def build_ontology_rules(con: Any, *, flavor: str | None = None) -> Ontology:
    """The offline ontology: every database item assigned by :func:`assign_by_rules`."""
    groups = default_groups()
    raws = dictionary_items(con, flavor)
    assigned = {r.key: assign_by_rules(r, groups) for r in raws}
    return _from_assignments(raws, assigned, "rules", groups, _source(con))


def build_ontology_llm(con: Any, ask: Callable[[str, str], Mapping[str, Any]], *, window: int = 50,
                       flavor: str | None = None, seed_groups: bool = True) -> Ontology:
    """The paper's sliding-window construction.

    ``ask(prompt_stem, rendered_prompt) -> parsed JSON reply`` sends one prompt (the
    caller binds an LLM client; see ``ehrlib.pipeline.llm.caller.json_asker``). With
    ``seed_groups`` the Table 8 groups start the list; otherwise the model grows them
    from nothing, as in the paper.
    """
    if window < 1:
        raise ConfigError("window must be >= 1")
    base = default_groups()
    raws = dictionary_items(con, flavor)
    rules = {r.key: assign_by_rules(r, base) for r in raws}
    groups: dict[str, list[str]] = {g: [] for g in base} if seed_groups else {}
    group_of: dict[str, str] = {}
    fallbacks = 0
    p_groups, p_subs = get_prompt("ontology_build_groups"), get_prompt("ontology_build_subgroups")
    for start in range(0, len(raws), window):
        chunk = raws[start:start + window]
        listing = "\n".join(f"{r.key} | {r.table} | {r.label} | {r.category or ''}" for r in chunk)
        reply = ask(p_groups.prompt_id, p_groups.render(groups="\n".join(groups) or "(none yet)", items=listing))
        got = reply.get("assignments") if isinstance(reply, Mapping) else None
        for r in chunk:
            g = got.get(r.key) if isinstance(got, Mapping) else None
            if not isinstance(g, str) or not g.strip():
                g, fallbacks = rules[r.key][0], fallbacks + 1
            g = g.strip().upper()
            groups.setdefault(g, [])
            group_of[r.key] = g
    sub_of: dict[str, str] = {}
    for start in range(0, len(raws), window):
        chunk = raws[start:start + window]
        listing = "\n".join(f"{r.key} | {r.label} | {group_of[r.key]}" for r in chunk)
        known = "\n".join(f"{g}: {', '.join(s) or '(none yet)'}" for g, s in groups.items())
        reply = ask(p_subs.prompt_id, p_subs.render(subgroups=known, items=listing))
        got = reply.get("assignments") if isinstance(reply, Mapping) else None
        for r in chunk:
            s = got.get(r.key) if isinstance(got, Mapping) else None
            if not isinstance(s, str) or not s.strip():
                rg, rs = rules[r.key]
                s, fallbacks = (rs if rg == group_of[r.key] else group_of[r.key]), fallbacks + 1
            s = s.strip().upper()
            if s not in groups[group_of[r.key]]:
                groups[group_of[r.key]].append(s)
            sub_of[r.key] = s
    assigned = {k: (group_of[k], sub_of[k]) for k in group_of}
    source = {**_source(con), "window": window, "fallbacks": fallbacks,
              "prompt_ids": [p_groups.prompt_id, p_subs.prompt_id]}
    kept = {g: tuple(s) for g, s in groups.items() if s}
    return _from_assignments(raws, assigned, "llm", kept, source)


def save_ontology(ontology: Ontology, path: str | Path) -> Path:
    """Write the ontology as JSON to ``path`` (atomically)."""
    return write_json(ontology.to_dict(), Path(path))


def read_ontology(path: str | Path) -> Ontology:
    """Read an ontology file; ConfigError when it is missing."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"ontology file not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{p}: invalid JSON ({exc.msg})") from None
    return Ontology.from_dict(data)


_CACHE: dict[tuple[str, str], Ontology] = {}
_LOCK = threading.Lock()


def load_ontology(con: Any, *, path: str | Path | None = None) -> Ontology:
    """The ontology for this database: the JSON at ``path`` if given, else the rule-built
    default, built once per database (memoised in the process, and on disk beside the
    database by :mod:`ehrlib.disk_cache`, keyed by this module and its seed groups too).
    """
    if path is not None:
        return read_ontology(path)
    db_path, stamp = database_identity(con)
    key = (f"{db_path}|{stamp}" if db_path else f"memory:{id(con)}", "rules")
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    digest = builder_digest() + code_digest(*source_files(sys.modules[__name__], data=("ontology_default.json",)))
    onto = cached_value(con, db_path, "ontology-rules", digest, lambda: build_ontology_rules(con),
                        Ontology.to_dict, Ontology.from_dict)
    with _LOCK:
        _CACHE[key] = onto
    return onto
