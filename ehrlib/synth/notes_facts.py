"""What the note writer knows about one admission, read through the logical model.

Every query goes through :mod:`ehrlib.schema` (``select_list``, ``table().ref/.col``) with
bound parameters, so the same writer runs on the synthetic hospital, the MIMIC-III demo
and credentialed MIMIC (MIMIC-III, MIMIC-IV or perturbed layout). Items are found by
*label* (regular expressions over the dictionaries), never by hard-coded item ids: the
synthetic hospital and MIMIC need not share ids.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ehrlib.errors import DataError
from ehrlib.schema import SchemaMap
from ehrlib.criteria import load_criteria

__all__ = [
    "Concept",
    "ItemInfo",
    "Obs",
    "MedOrder",
    "InputEvent",
    "ProcEvent",
    "MicroRow",
    "DxRow",
    "AdmissionFacts",
    "ItemIndex",
    "LAB_CONCEPTS",
    "VITAL_CONCEPTS",
    "CATEGORICAL_CONCEPTS",
    "MISSING_LAB_CONCEPTS",
    "list_admissions",
    "load_facts",
    "rows_exist",
]


@dataclass(frozen=True, slots=True)
class Concept:
    """A clinical quantity the writer talks about, found in a DB by dictionary label."""

    key: str
    table: str
    label: str  # regex (case-insensitive, re.search) on the dictionary label
    surfaces: tuple[str, ...]
    unit: str = ""
    decimals: int = 1
    fluid: str | None = None


def _c(key: str, table: str, label: str, surfaces: str, unit: str = "", decimals: int = 1,
       fluid: str | None = None) -> Concept:
    return Concept(key, table, label, tuple(s.strip() for s in surfaces.split("|")), unit, decimals, fluid)


_BLOOD = "^blood$"
LAB_CONCEPTS: tuple[Concept, ...] = (
    _c("wbc", "labevents", r"^(white blood cells|wbc count|wbc)$", "WBC|white count|leukocytes|WBC count",
       "K/uL", 1, _BLOOD),
    _c("hgb", "labevents", r"^(hemoglobin|hgb)$", "Hgb|hemoglobin|Hb|hgb", "g/dL", 1, _BLOOD),
    _c("plt", "labevents", r"^platelet count$", "Plt|platelets|PLT|plt count", "K/uL", 0, _BLOOD),
    _c("cr", "labevents", r"^creatinine$", "Cr|creatinine|creat|Creat", "mg/dL", 1, _BLOOD),
    _c("bun", "labevents", r"^urea nitrogen$", "BUN|urea nitrogen|BUN", "mg/dL", 0, _BLOOD),
    _c("na", "labevents", r"^sodium$", "Na|sodium|serum Na", "mEq/L", 0, _BLOOD),
    _c("k", "labevents", r"^potassium$", "K|potassium|K+", "mEq/L", 1, _BLOOD),
    _c("hco3", "labevents", r"^bicarbonate$", "HCO3|bicarb|bicarbonate", "mEq/L", 0, _BLOOD),
    _c("glucose", "labevents", r"^glucose$", "glucose|serum glucose|BG", "mg/dL", 0, _BLOOD),
    _c("lactate", "labevents", r"^lactate$", "lactate|lactic acid|lactate level", "mmol/L", 1, _BLOOD),
    _c("inr", "labevents", r"^inr\(pt\)$", "INR|inr", "", 1, _BLOOD),
    _c("tbili", "labevents", r"^bilirubin, total$", "T bili|total bilirubin|Tbili", "mg/dL", 1, _BLOOD),
)
#: labs a note may mention although never drawn (for "missing" statements).
MISSING_LAB_CONCEPTS: tuple[Concept, ...] = (
    _c("lipase", "labevents", r"^lipase$", "lipase", "IU/L", 0, _BLOOD),
    _c("trop", "labevents", r"^troponin t$", "trop|troponin T|TropT", "ng/mL", 2, _BLOOD),
    _c("bnp", "labevents", r"^ntprobnp$", "proBNP|NT-proBNP|BNP", "pg/mL", 0, _BLOOD),
    _c("ammonia", "labevents", r"^ammonia$", "ammonia|NH3", "umol/L", 0, _BLOOD),
    _c("tsh", "labevents", r"^thyroid stimulating hormone$", "TSH", "uIU/mL", 1, _BLOOD),
    _c("ck", "labevents", r"^creatine kinase \(ck\)$", "CK|CPK", "IU/L", 0, _BLOOD),
    _c("ferritin", "labevents", r"^ferritin$", "ferritin", "ng/mL", 0, _BLOOD),
    _c("ddimer", "labevents", r"^d-dimer$", "D-dimer|d-dimer", "ng/mL", 0, _BLOOD),
    _c("mg", "labevents", r"^magnesium$", "Mg|magnesium", "mg/dL", 1, _BLOOD),
    _c("alt", "labevents", r"^alanine aminotransferase \(alt\)$", "ALT|SGPT", "IU/L", 0, _BLOOD),
)
VITAL_CONCEPTS: tuple[Concept, ...] = (
    _c("hr", "chartevents", r"^heart rate$", "HR|heart rate|pulse|HR", "bpm", 0),
    _c("rr", "chartevents", r"^(respiratory rate|resp rate)( \(total\))?$", "RR|resp rate|respiratory rate",
       "insp/min", 0),
    _c("spo2", "chartevents", r"^(spo2|o2 saturation pulseoxymetry)$", "SpO2|O2 sat|sat|pulse ox", "%", 0),
    _c("temp_f", "chartevents", r"^temp(erature)?\.? ?(f|fahrenheit)\b", "T|temp|Tmax|temperature", "F", 1),
    _c("temp_c", "chartevents", r"^temp(erature)?\.? ?(c|celsius)\b", "T|temp|Tmax|temperature", "C", 1),
    _c("sbp", "chartevents",
       r"^(arterial bp( #2)? \[systolic\]|nbp \[systolic\]|arterial blood pressure systolic|"
       r"non invasive blood pressure systolic|art bp systolic)$", "SBP|systolic|SBP", "mmHg", 0),
    _c("dbp", "chartevents",
       r"^(arterial bp( #2)? \[diastolic\]|nbp \[diastolic\]|arterial blood pressure diastolic|"
       r"non invasive blood pressure diastolic|art bp diastolic)$", "DBP|diastolic", "mmHg", 0),
    _c("map", "chartevents",
       r"^(arterial bp mean( #2)?|nbp mean|arterial blood pressure mean|non invasive blood pressure mean|"
       r"art bp mean)$", "MAP|mean arterial pressure|MAPs", "mmHg", 0),
)
CATEGORICAL_CONCEPTS: tuple[Concept, ...] = (
    _c("rhythm", "chartevents", r"^heart rhythm$", "rhythm|HR rhythm|tele"),
    _c("loc", "chartevents", r"^level of consciousness$", "LOC|mental status|level of consciousness"),
    _c("bowel", "chartevents", r"^bowel sounds$", "BS|bowel sounds|BSx4"),
    _c("abd", "chartevents", r"^abdominal assessment$", "abd|abdomen|Abd"),
    _c("skin", "chartevents", r"^skin integrity$", "skin|skin integrity"),
    _c("edema", "chartevents", r"^edema (location|amount)$", "edema|swelling"),
)


@dataclass(frozen=True, slots=True)
class ItemInfo:
    table: str  # logical event table the rows live in
    itemid: int | str
    label: str


@dataclass(frozen=True, slots=True)
class Obs:
    """A point-in-time row (chartevents/labevents/outputevents)."""

    table: str
    row_id: int
    item: ItemInfo
    time: dt.datetime
    value: str | None
    valuenum: float | None
    unit: str | None
    flag: str | None = None


@dataclass(frozen=True, slots=True)
class MedOrder:
    row_id: int
    drug: str
    start: dt.datetime | None
    end: dt.datetime | None
    dose: str | None
    dose_unit: str | None
    route: str | None


@dataclass(frozen=True, slots=True)
class InputEvent:
    table: str
    row_id: int
    item: ItemInfo
    start: dt.datetime
    end: dt.datetime | None
    rate: float | None
    rate_unit: str | None
    amount: float | None
    amount_unit: str | None


@dataclass(frozen=True, slots=True)
class ProcEvent:
    row_id: int
    item: ItemInfo
    start: dt.datetime
    end: dt.datetime | None
    location: str | None


@dataclass(frozen=True, slots=True)
class MicroRow:
    row_id: int
    time: dt.datetime
    specimen: str | None
    organism: str | None
    antibiotic: str | None
    interpretation: str | None


@dataclass(frozen=True, slots=True)
class DxRow:
    row_id: int
    seq: int | None
    code: str
    short_title: str | None
    long_title: str | None


@dataclass(frozen=True, slots=True)
class AdmissionFacts:
    subject_id: int
    hadm_id: int
    admittime: dt.datetime
    dischtime: dt.datetime
    gender: str | None
    age: int | None
    admit_diagnosis: str | None
    series: Mapping[str, tuple[Obs, ...]]  # concept key -> rows (time order)
    categorical: Mapping[str, tuple[Obs, ...]]
    outputs: tuple[Obs, ...]
    meds: tuple[MedOrder, ...]
    inputs: tuple[InputEvent, ...]
    procedures: tuple[ProcEvent, ...]
    micro: tuple[MicroRow, ...]
    diagnoses: tuple[DxRow, ...]
    icu_intime: dt.datetime | None = None

    def hd(self, t: dt.datetime | dt.date) -> int:
        """Hospital day (HD 1 = admission date)."""
        d = t.date() if isinstance(t, dt.datetime) else t
        return (d - self.admittime.date()).days + 1

    def day_start(self, hd: int) -> dt.datetime:
        return dt.datetime.combine(self.admittime.date() + dt.timedelta(days=hd - 1), dt.time())

    @property
    def n_days(self) -> int:
        return self.hd(self.dischtime)


@dataclass(slots=True)
class ItemIndex:
    """Dictionary items by concept for one database (built once per corpus)."""

    items: dict[str, list[ItemInfo]] = field(default_factory=dict)
    labels: dict[tuple[str, Any], str] = field(default_factory=dict)
    value_distribution: dict[tuple[str, Any], list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, con, smap: SchemaMap) -> ItemIndex:
        idx = cls()
        d_items = _fetch(con, smap, "d_items", ("itemid", "label", "linksto"), order=("itemid",))
        d_lab = _fetch(con, smap, "d_labitems", ("itemid", "label", "fluid"), order=("itemid",))
        # D_ITEMS.LINKSTO holds the physical table name of the layout (VITALS_TIMESERIES in
        # the perturbed schema, chartevents in MIMIC-IV): map it back to the logical table
        linked = {t.name.lower(): logical for logical, t in smap.tables.items()}
        linked.update({logical: logical for logical in smap.tables})

        def links(r: Mapping[str, Any], default: str) -> str:
            return linked.get((r["linksto"] or default).strip().lower(), "")

        chart_items = [(r["itemid"], r["label"]) for r in d_items
                       if r["label"] and links(r, "chartevents") == "chartevents"]
        out_items = [(r["itemid"], r["label"]) for r in d_items
                     if r["label"] and links(r, "") == "outputevents"]
        for r in d_items:
            if r["label"]:
                idx.labels[("d_items", r["itemid"])] = r["label"]
        for r in d_lab:
            if r["label"]:
                idx.labels[("d_labitems", r["itemid"])] = r["label"]
        for concept in (*LAB_CONCEPTS, *MISSING_LAB_CONCEPTS):
            idx.items[concept.key] = [
                ItemInfo("labevents", r["itemid"], r["label"]) for r in d_lab
                if r["label"] and re.search(concept.label, r["label"].strip(), re.I)
                and (concept.fluid is None or re.search(concept.fluid, (r["fluid"] or "").strip(), re.I))]
        for concept in (*VITAL_CONCEPTS, *CATEGORICAL_CONCEPTS):
            idx.items[concept.key] = [ItemInfo("chartevents", i, lab) for i, lab in chart_items
                                      if re.search(concept.label, lab.strip(), re.I)]
        # items each clinical criterion applies to, exactly as the criteria file says,
        # so "febrile" is judged on the same rows a verifier's criterion tool points at
        by_table = {"chartevents": [(i, lab, None) for i, lab in chart_items],
                    "labevents": [(r["itemid"], r["label"], r["fluid"]) for r in d_lab if r["label"]],
                    "outputevents": [(i, lab, None) for i, lab in out_items]}
        for crit in load_criteria().values():
            if crit.kind == "delta":
                continue
            for suffix, tests in (("", crit.tests), (":weight", crit.weight_tests)):
                if tests:
                    idx.items[f"crit:{crit.id}{suffix}"] = [
                        ItemInfo(table, i, lab) for table, rows in by_table.items() for i, lab, fluid in rows
                        if any(t.matches(table, lab, fluid) for t in tests)]
        idx.items["urine"] = [ItemInfo("outputevents", i, lab) for i, lab in out_items
                              if re.search(r"^(urine|foley$|void$)", lab.strip(), re.I)]
        return idx

    def label(self, table: str, itemid: Any) -> str | None:
        dictionary = "d_labitems" if table == "labevents" else "d_items"
        return self.labels.get((dictionary, itemid))


def _fetch(con, smap: SchemaMap, table: str, columns: Sequence[str], where: str = "",
           params: Sequence[Any] = (), order: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Rows of one logical table as dicts keyed by logical column names.

    ``where``/``order`` are written with logical column names in ``{braces}`` and are
    filled with quoted physical names here, so callers never see a physical name.
    """
    pt = smap.table(table)

    def phys(text: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: pt.expr(m.group(1)), text)

    sql = f"SELECT {smap.select_list(table, tuple(columns))} FROM {pt.ref}"  # noqa: S608 - identifiers only
    if where:
        sql += " WHERE " + phys(where)
    if order:
        sql += " ORDER BY " + ", ".join(phys("{" + c + "}") for c in order)
    cur = con.execute(sql, list(params))
    return [dict(zip(columns, row)) for row in cur.fetchall()]


def _ts(v: Any) -> dt.datetime | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    if isinstance(v, dt.date):
        return dt.datetime.combine(v, dt.time())
    try:
        return dt.datetime.fromisoformat(str(v))
    except ValueError:
        return None


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f else None  # NaN -> None


def list_admissions(con, smap: SchemaMap) -> list[dict[str, Any]]:
    """Admissions with admit and discharge times, in hadm_id order."""
    rows = _fetch(con, smap, "admissions", ("subject_id", "hadm_id", "admittime", "dischtime"),
                  "{admittime} IS NOT NULL AND {dischtime} IS NOT NULL", order=("hadm_id",))
    return rows


def rows_exist(con, smap: SchemaMap, table: str, hadm_id: int, item_col: str, item: Any,
               subject_id: int | None = None, window: tuple[dt.datetime, dt.datetime] | None = None) -> bool:
    """Any row of ``item`` in the admission (or, with subject+window, around it)."""
    pt = smap.table(table)
    sql = f"SELECT 1 FROM {pt.ref} WHERE {pt.col(item_col)} = ? AND ({pt.col('hadm_id')} = ?"  # noqa: S608
    params: list[Any] = [item, hadm_id]
    time_col = "charttime" if pt.has("charttime") and table != "prescriptions" else None
    if table == "prescriptions":
        time_col = "startdate"
    if subject_id is not None and window is not None and time_col:
        sql += f" OR ({pt.col('subject_id')} = ? AND {pt.col(time_col)} BETWEEN ? AND ?)"
        params += [subject_id, window[0], window[1]]
    sql += ") LIMIT 1"
    return con.execute(sql, params).fetchone() is not None


def load_facts(con, smap: SchemaMap, hadm_id: int, index: ItemIndex) -> AdmissionFacts:
    """Everything the note writer may state about one admission (rows in time order)."""
    adm = _fetch(con, smap, "admissions",
                 ("subject_id", "hadm_id", "admittime", "dischtime", "diagnosis"), "{hadm_id} = ?", [hadm_id])
    if not adm:
        raise DataError(f"admission {hadm_id} not found")
    a = adm[0]
    subject_id = int(a["subject_id"])
    admittime, dischtime = _ts(a["admittime"]), _ts(a["dischtime"])
    if admittime is None or dischtime is None or dischtime < admittime:
        raise DataError(f"admission {hadm_id} has no usable admit/discharge times")
    pat = _fetch(con, smap, "patients", ("gender", "dob"), "{subject_id} = ?", [subject_id])
    gender = pat[0]["gender"] if pat else None
    dob = _ts(pat[0]["dob"]) if pat else None
    age = None
    if dob is not None:
        age = admittime.year - dob.year
        age = age if 0 < age < 90 else (91 if age >= 90 else None)

    def point_rows(table: str, concept_items: Mapping[str, list[ItemInfo]]) -> dict[str, list[Obs]]:
        by_id: dict[Any, list[str]] = {}
        info: dict[Any, ItemInfo] = {}
        for key, items in concept_items.items():
            for it in items:
                by_id.setdefault(it.itemid, []).append(key)
                info[it.itemid] = it
        out: dict[str, list[Obs]] = {k: [] for k in concept_items}
        if not by_id:
            return out
        cols = ("row_id", "itemid", "charttime", "value", "valuenum", "valueuom", "flag")
        pt = smap.table(table)
        present = tuple(c for c in cols if c in pt.columns)
        rows = _fetch(con, smap, table, present,
                      "{hadm_id} = ? AND list_contains(?, {itemid}) AND {charttime} IS NOT NULL",
                      [hadm_id, list(by_id)], order=("charttime", "row_id"))
        for r in rows:
            t = _ts(r["charttime"])
            num = _num(r.get("valuenum")) if "valuenum" in r else None
            if table == "outputevents":
                num = _num(r.get("value"))
            obs = Obs(table, int(r["row_id"]), info[r["itemid"]], t,
                      None if r.get("value") is None else str(r["value"]), num, r.get("valueuom"), r.get("flag"))
            for key in by_id[r["itemid"]]:
                out[key].append(obs)
        return out

    lab_keys = {c.key: index.items.get(c.key, []) for c in LAB_CONCEPTS}
    vital_keys = {c.key: index.items.get(c.key, []) for c in VITAL_CONCEPTS}
    cat_keys = {c.key: index.items.get(c.key, []) for c in CATEGORICAL_CONCEPTS}
    crit_keys = {k: v for k, v in index.items.items() if k.startswith("crit:")}
    series = {**point_rows("labevents", lab_keys), **point_rows("chartevents", {**vital_keys, **cat_keys})}
    categorical = {k: tuple(series.pop(k)) for k in cat_keys}
    crit_rows = [point_rows(table, {k: [i for i in v if i.table == table] for k, v in crit_keys.items()})
                 for table in ("labevents", "chartevents", "outputevents")]
    for k in crit_keys:
        series[k] = sorted((o for rows in crit_rows for o in rows[k]), key=lambda o: (o.time, o.table, o.row_id))
    outputs = tuple(point_rows("outputevents", {"urine": index.items.get("urine", [])})["urine"])

    meds = tuple(
        MedOrder(int(r["row_id"]), str(r["drug"]).strip(), _ts(r["startdate"]), _ts(r["enddate"]),
                 None if r["dose_val_rx"] is None else str(r["dose_val_rx"]).strip(), r["dose_unit_rx"], r["route"])
        for r in _fetch(con, smap, "prescriptions",
                        ("row_id", "drug", "startdate", "enddate", "dose_val_rx", "dose_unit_rx", "route"),
                        "{hadm_id} = ? AND {drug} IS NOT NULL", [hadm_id], order=("startdate", "row_id")))

    inputs: list[InputEvent] = []
    for table in ("inputevents_mv", "inputevents_cv"):
        if not smap.has(table):
            continue
        interval = table == "inputevents_mv"
        cols = ("row_id", "itemid", "starttime", "endtime") if interval else ("row_id", "itemid", "charttime")
        cols += ("rate", "rateuom", "amount", "amountuom")
        for r in _fetch(con, smap, table, cols, "{hadm_id} = ?", [hadm_id],
                        order=("starttime" if interval else "charttime", "row_id")):
            start = _ts(r["starttime"] if interval else r["charttime"])
            label = index.label(table, r["itemid"])
            if start is None or not label:
                continue
            inputs.append(InputEvent(table, int(r["row_id"]), ItemInfo(table, r["itemid"], label), start,
                                     _ts(r["endtime"]) if interval else None, _num(r["rate"]), r["rateuom"],
                                     _num(r["amount"]), r["amountuom"]))

    procedures: list[ProcEvent] = []
    if smap.has("procedureevents_mv"):
        for r in _fetch(con, smap, "procedureevents_mv", ("row_id", "itemid", "starttime", "endtime", "location"),
                        "{hadm_id} = ?", [hadm_id], order=("starttime", "row_id")):
            label = index.label("procedureevents_mv", r["itemid"])
            start = _ts(r["starttime"])
            if label and start is not None:
                procedures.append(ProcEvent(int(r["row_id"]), ItemInfo("procedureevents_mv", r["itemid"], label),
                                            start, _ts(r["endtime"]), r["location"]))

    micro = tuple(
        MicroRow(int(r["row_id"]), _ts(r["charttime"]) or _ts(r["chartdate"]), r["spec_type_desc"], r["org_name"],
                 r["ab_name"], r["interpretation"])
        for r in _fetch(con, smap, "microbiologyevents",
                        ("row_id", "chartdate", "charttime", "spec_type_desc", "org_name", "ab_name",
                         "interpretation"),
                        "{hadm_id} = ? AND coalesce({charttime}, {chartdate}) IS NOT NULL", [hadm_id],
                        order=("chartdate", "row_id"))
    )

    dx = _fetch(con, smap, "diagnoses_icd", ("row_id", "seq_num", "icd9_code"), "{hadm_id} = ?", [hadm_id],
                order=("seq_num", "row_id"))
    titles: dict[str, tuple[str | None, str | None]] = {}
    codes = [r["icd9_code"] for r in dx if r["icd9_code"]]
    if codes:
        for r in _fetch(con, smap, "d_icd_diagnoses", ("icd9_code", "short_title", "long_title"),
                        "list_contains(?, {icd9_code})", [codes]):
            titles[r["icd9_code"]] = (r["short_title"], r["long_title"])
    diagnoses = tuple(DxRow(int(r["row_id"]), r["seq_num"], r["icd9_code"], *titles.get(r["icd9_code"], (None, None)))
                      for r in dx if r["icd9_code"])

    icu = _fetch(con, smap, "icustays", ("intime",), "{hadm_id} = ?", [hadm_id], order=("intime",))
    return AdmissionFacts(
        subject_id=subject_id, hadm_id=int(hadm_id), admittime=admittime, dischtime=dischtime,
        gender=gender, age=age, admit_diagnosis=a.get("diagnosis"),
        series={k: tuple(v) for k, v in series.items()}, categorical=categorical, outputs=outputs,
        meds=meds, inputs=tuple(inputs), procedures=tuple(procedures), micro=micro, diagnoses=diagnoses,
        icu_intime=_ts(icu[0]["intime"]) if icu else None,
    )
