"""The logical EHR model and its physical maps (MIMIC-III, MIMIC-IV, perturbed MIMIC-III).

Every module above the database layer speaks the *logical* model: table and column
names taken from MIMIC-III in lower case (``chartevents.charttime``), each column with a
*role* (time, item, value, unit, ...). A :class:`SchemaMap` says where each logical
column lives in one physical database. Tools and the pipeline never write a physical
name; they ask the map, so the same code runs on MIMIC-III, MIMIC-IV (``mimiciv_hosp`` /
``mimiciv_icu`` schemas, ``emar`` + ``emar_detail``) and the perturbed schema of the
EHR-ReasonCon paper (Table 15), whose table and column names a model has never seen.

A logical column mapped to ``None`` does not exist in that flavor (MIMIC-IV has no
``inputevents_cv``; MIMIC-III has no ``icd_version``); :meth:`SchemaMap.select_list`
renders it as ``NULL``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = [
    "LogicalTable",
    "PhysicalTable",
    "SchemaMap",
    "LOGICAL",
    "EVENT_TABLES",
    "DICTIONARY_TABLES",
    "MIMIC3",
    "MIMIC4",
    "PERTURBED",
    "FLAVORS",
    "MANIFEST_TABLE",
    "quote_ident",
    "schema_map",
    "detect_flavor",
]

Flavor = Literal["mimic3", "mimic4", "perturbed", "synthetic"]
TableKind = Literal["core", "event", "dictionary"]

#: Name of the build manifest table every ehrlib-built database carries.
MANIFEST_TABLE = "ehrlib_manifest"


@dataclass(frozen=True, slots=True)
class LogicalTable:
    """One table of the logical model.

    ``roles`` maps a role (``time``, ``start``, ``end``, ``item``, ``value``,
    ``valuenum``, ``unit``, ``flag``, ``route``, ``location``, ``interpretation``,
    ``amount``, ``rate``, ``dose``, ``label`` ...) to a logical column, so code can ask
    "the value column of this table" instead of naming it.
    """

    name: str
    kind: TableKind
    columns: tuple[str, ...]
    roles: Mapping[str, str] = field(default_factory=dict)
    #: logical dictionary table the ``item`` column joins to (on the same column name
    #: unless ``dictionary_key`` says otherwise); None for name-keyed items (drugs).
    dictionary: str | None = None
    dictionary_key: str | None = None
    description: str = ""

    @property
    def time_kind(self) -> Literal["point", "interval", "none"]:
        """Whether rows carry a time point, an interval, or no time."""
        if "start" in self.roles:
            return "interval"
        if "time" in self.roles:
            return "point"
        return "none"

    def role(self, name: str) -> str | None:
        """The logical column playing ``name`` (subject, time, item...), or None."""
        return self.roles.get(name)


def _t(name: str, kind: TableKind, columns: str, description: str = "", dictionary: str | None = None,
       dictionary_key: str | None = None, **roles: str) -> LogicalTable:
    cols = tuple(columns.split())
    for role, col in roles.items():
        if col not in cols:
            raise ValueError(f"{name}: role {role} names unknown column {col}")
    return LogicalTable(name, kind, cols, MappingProxyType(dict(roles)), dictionary, dictionary_key, description)


_TABLES = (
    # --- core -------------------------------------------------------------------------
    _t("patients", "core", "row_id subject_id gender dob dod",
       "one row per patient", row_id="row_id", subject="subject_id"),
    _t("admissions", "core",
       "row_id subject_id hadm_id admittime dischtime deathtime admission_type "
       "admission_location discharge_location edregtime edouttime diagnosis",
       "one row per hospital admission; admit/discharge times anchor narrative time",
       row_id="row_id", subject="subject_id", admission="hadm_id", start="admittime", end="dischtime"),
    _t("icustays", "core",
       "row_id subject_id hadm_id icustay_id first_careunit last_careunit intime outtime los",
       "one row per ICU stay", row_id="row_id", subject="subject_id", admission="hadm_id",
       stay="icustay_id", start="intime", end="outtime"),
    # --- events -------------------------------------------------------------------------
    _t("chartevents", "event",
       "row_id subject_id hadm_id icustay_id itemid charttime storetime value valuenum valueuom "
       "warning error resultstatus stopped",
       "bedside charting: vitals, assessments, ventilator settings", dictionary="d_items",
       row_id="row_id", subject="subject_id", admission="hadm_id", stay="icustay_id", item="itemid",
       time="charttime", value="value", valuenum="valuenum", unit="valueuom"),
    _t("labevents", "event",
       "row_id subject_id hadm_id itemid charttime value valuenum valueuom flag",
       "laboratory results with abnormal flag", dictionary="d_labitems",
       row_id="row_id", subject="subject_id", admission="hadm_id", item="itemid", time="charttime",
       value="value", valuenum="valuenum", unit="valueuom", flag="flag"),
    _t("prescriptions", "event",
       "row_id subject_id hadm_id icustay_id startdate enddate drug_type drug drug_name_generic "
       "prod_strength dose_val_rx dose_unit_rx form_val_disp form_unit_disp route",
       "medication orders (name-keyed: no dictionary)",
       row_id="row_id", subject="subject_id", admission="hadm_id", item="drug", start="startdate",
       end="enddate", dose="dose_val_rx", dose_unit="dose_unit_rx", route="route"),
    _t("inputevents_mv", "event",
       "row_id subject_id hadm_id icustay_id starttime endtime itemid amount amountuom rate rateuom "
       "ordercategoryname statusdescription originalamount originalrate patientweight",
       "MetaVision infusions and boluses with start/end; patientweight (kg) turns a per-kg rate into a rate",
       dictionary="d_items",
       row_id="row_id", subject="subject_id", admission="hadm_id", stay="icustay_id", item="itemid",
       start="starttime", end="endtime", amount="amount", amount_unit="amountuom", rate="rate",
       rate_unit="rateuom", weight="patientweight"),
    _t("inputevents_cv", "event",
       "row_id subject_id hadm_id icustay_id charttime itemid amount amountuom rate rateuom "
       "originalamount originalamountuom originalroute originalrate originalrateuom",
       "CareVue inputs charted at a time point", dictionary="d_items",
       row_id="row_id", subject="subject_id", admission="hadm_id", stay="icustay_id", item="itemid",
       time="charttime", amount="amount", amount_unit="amountuom", rate="rate", rate_unit="rateuom",
       route="originalroute"),
    _t("outputevents", "event",
       "row_id subject_id hadm_id icustay_id charttime itemid value valueuom",
       "urine, drains and other outputs", dictionary="d_items",
       row_id="row_id", subject="subject_id", admission="hadm_id", stay="icustay_id", item="itemid",
       time="charttime", valuenum="value", unit="valueuom"),
    _t("procedureevents_mv", "event",
       "row_id subject_id hadm_id icustay_id starttime endtime itemid value valueuom location "
       "locationcategory statusdescription",
       "lines, tubes, imaging and other procedures with start/end and body site",
       dictionary="d_items",
       row_id="row_id", subject="subject_id", admission="hadm_id", stay="icustay_id", item="itemid",
       start="starttime", end="endtime", valuenum="value", unit="valueuom", location="location"),
    _t("microbiologyevents", "event",
       "row_id subject_id hadm_id chartdate charttime spec_itemid spec_type_desc org_itemid org_name "
       "ab_itemid ab_name interpretation",
       "cultures: specimen, organism, antibiotic susceptibility (S/I/R)",
       row_id="row_id", subject="subject_id", admission="hadm_id", time="charttime", date="chartdate",
       item="spec_type_desc", specimen="spec_type_desc", organism="org_name", antibiotic="ab_name",
       interpretation="interpretation"),
    _t("diagnoses_icd", "event",
       "row_id subject_id hadm_id seq_num icd9_code icd_version",
       "billed diagnoses of the admission (no time: admission scope)", dictionary="d_icd_diagnoses",
       row_id="row_id", subject="subject_id", admission="hadm_id", item="icd9_code",
       version="icd_version"),
    _t("procedures_icd", "event",
       "row_id subject_id hadm_id seq_num icd9_code icd_version",
       "billed procedures of the admission (no time: admission scope)", dictionary="d_icd_procedures",
       row_id="row_id", subject="subject_id", admission="hadm_id", item="icd9_code",
       version="icd_version"),
    _t("emar", "event",
       "row_id subject_id hadm_id emar_id emar_seq charttime medication event_txt scheduletime",
       "MIMIC-IV electronic medication administration record",
       row_id="row_id", subject="subject_id", admission="hadm_id", item="medication", time="charttime",
       value="event_txt"),
    _t("emar_detail", "event",
       "row_id subject_id emar_id emar_seq dose_given dose_given_unit product_description route "
       "infusion_rate infusion_rate_unit site side",
       "MIMIC-IV administration details; has no hadm_id: join through emar.emar_id",
       row_id="row_id", subject="subject_id", item="product_description", dose="dose_given",
       dose_unit="dose_given_unit", route="route", rate="infusion_rate", rate_unit="infusion_rate_unit",
       location="site"),
    # --- dictionaries ---------------------------------------------------------------------
    _t("d_items", "dictionary",
       "row_id itemid label abbreviation dbsource linksto category unitname param_type",
       "chart/input/output/procedure item dictionary",
       item="itemid", label="label", abbreviation="abbreviation", category="category",
       unit="unitname", linksto="linksto"),
    _t("d_labitems", "dictionary",
       "row_id itemid label fluid category loinc_code",
       "laboratory item dictionary", item="itemid", label="label", category="category", fluid="fluid"),
    _t("d_icd_diagnoses", "dictionary",
       "row_id icd9_code icd_version short_title long_title",
       "ICD diagnosis code titles", item="icd9_code", label="long_title", short_label="short_title",
       version="icd_version"),
    _t("d_icd_procedures", "dictionary",
       "row_id icd9_code icd_version short_title long_title",
       "ICD procedure code titles", item="icd9_code", label="long_title", short_label="short_title",
       version="icd_version"),
)

#: The logical model, by logical table name.
LOGICAL: Mapping[str, LogicalTable] = MappingProxyType({t.name: t for t in _TABLES})
EVENT_TABLES: tuple[str, ...] = tuple(t.name for t in _TABLES if t.kind == "event")
DICTIONARY_TABLES: tuple[str, ...] = tuple(t.name for t in _TABLES if t.kind == "dictionary")


def quote_ident(name: str) -> str:
    """Quote one SQL identifier (DuckDB/ANSI double quotes)."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class PhysicalTable:
    """Where one logical table lives: physical (schema, table) and a column map."""

    logical: str
    name: str
    schema: str | None
    columns: Mapping[str, str | None]

    @property
    def ref(self) -> str:
        """Quoted, schema-qualified reference for a FROM clause."""
        if self.schema:
            return f"{quote_ident(self.schema)}.{quote_ident(self.name)}"
        return quote_ident(self.name)

    def has(self, logical_column: str) -> bool:
        """Whether this layout has the logical column."""
        return self.columns.get(logical_column) is not None

    def col(self, logical_column: str, alias: str | None = None) -> str:
        """Quoted physical column for a logical one; raises KeyError if absent."""
        physical = self.columns.get(logical_column)
        if physical is None:
            raise KeyError(f"{self.logical}.{logical_column} does not exist in this schema")
        return f"{alias}.{quote_ident(physical)}" if alias else quote_ident(physical)

    def expr(self, logical_column: str, alias: str | None = None) -> str:
        """Like :meth:`col`, but ``NULL`` for a column this flavor lacks."""
        return self.col(logical_column, alias) if self.has(logical_column) else "NULL"


@dataclass(frozen=True, slots=True)
class SchemaMap:
    """The physical layout of one database flavor."""

    flavor: str
    tables: Mapping[str, PhysicalTable]

    def has(self, logical_table: str) -> bool:
        """Whether this layout has the logical table."""
        return logical_table in self.tables

    def table(self, logical_table: str) -> PhysicalTable:
        """The physical table of a logical one; KeyError when the layout lacks it."""
        try:
            return self.tables[logical_table]
        except KeyError:
            raise KeyError(f"table {logical_table!r} does not exist in the {self.flavor} schema") from None

    def select_list(self, logical_table: str, columns: tuple[str, ...] | list[str] | None = None,
                    alias: str | None = None) -> str:
        """``phys AS logical, ...`` for the given logical columns (all by default)."""
        table = self.table(logical_table)
        cols = columns if columns is not None else LOGICAL[logical_table].columns
        return ", ".join(f"{table.expr(c, alias)} AS {quote_ident(c)}" for c in cols)

    def renames(self) -> dict[str, tuple[str, dict[str, str]]]:
        """{logical table: (physical table, {logical column: physical column})}."""
        return {
            name: (t.name, {c: p for c, p in t.columns.items() if p is not None})
            for name, t in self.tables.items()
        }


def _map(flavor: str, spec: Mapping[str, tuple[str, str | None, Mapping[str, str | None]]],
         default_case: Literal["upper", "lower"]) -> SchemaMap:
    """Build a map: every logical column maps to itself (in ``default_case``) unless
    the spec overrides it (``None`` = absent).
    """
    tables = {}
    for logical, (name, schema, overrides) in spec.items():
        cols: dict[str, str | None] = {}
        for c in LOGICAL[logical].columns:
            cols[c] = overrides[c] if c in overrides else (c.upper() if default_case == "upper" else c)
        unknown = set(overrides) - set(cols)
        if unknown:
            raise ValueError(f"{flavor}.{logical}: unknown logical columns {sorted(unknown)}")
        tables[logical] = PhysicalTable(logical, name, schema, MappingProxyType(cols))
    return SchemaMap(flavor, MappingProxyType(tables))


_NO_VERSION = {"icd_version": None}

#: MIMIC-III v1.4 as built by `ehrlib build-db` (upper-case names, as PhysioNet ships them).
MIMIC3 = _map("mimic3", {
    "patients": ("PATIENTS", None, {}),
    "admissions": ("ADMISSIONS", None, {}),
    "icustays": ("ICUSTAYS", None, {}),
    "chartevents": ("CHARTEVENTS", None, {}),
    "labevents": ("LABEVENTS", None, {}),
    "prescriptions": ("PRESCRIPTIONS", None, {}),
    "inputevents_mv": ("INPUTEVENTS_MV", None, {}),
    "inputevents_cv": ("INPUTEVENTS_CV", None, {}),
    "outputevents": ("OUTPUTEVENTS", None, {}),
    "procedureevents_mv": ("PROCEDUREEVENTS_MV", None, {}),
    "microbiologyevents": ("MICROBIOLOGYEVENTS", None, {}),
    "diagnoses_icd": ("DIAGNOSES_ICD", None, _NO_VERSION),
    "procedures_icd": ("PROCEDURES_ICD", None, _NO_VERSION),
    "d_items": ("D_ITEMS", None, {}),
    "d_labitems": ("D_LABITEMS", None, {}),
    "d_icd_diagnoses": ("D_ICD_DIAGNOSES", None, _NO_VERSION),
    "d_icd_procedures": ("D_ICD_PROCEDURES", None, _NO_VERSION),
}, "upper")

# MIMIC-IV v2.2/v3.x, in the mimic-code DuckDB layout (schemas mimiciv_hosp / mimiciv_icu).
# Tables without a natural row key get a `row_id` column (1-based file order) at build
# time so evidence can cite rows; labevents and microbiologyevents keep their own ids.
_H, _I = "mimiciv_hosp", "mimiciv_icu"
MIMIC4 = _map("mimic4", {
    "patients": ("patients", _H, {"dob": None}),
    "admissions": ("admissions", _H, {"diagnosis": None}),
    "icustays": ("icustays", _I, {"icustay_id": "stay_id"}),
    "chartevents": ("chartevents", _I, {"icustay_id": "stay_id", "error": None, "resultstatus": None,
                                        "stopped": None}),
    "labevents": ("labevents", _H, {"row_id": "labevent_id"}),
    "prescriptions": ("prescriptions", _H, {"icustay_id": None, "startdate": "starttime",
                                            "enddate": "stoptime", "drug_name_generic": None}),
    "inputevents_mv": ("inputevents", _I, {"icustay_id": "stay_id"}),
    "outputevents": ("outputevents", _I, {"icustay_id": "stay_id"}),
    "procedureevents_mv": ("procedureevents", _I, {"icustay_id": "stay_id"}),
    "microbiologyevents": ("microbiologyevents", _H, {"row_id": "microevent_id"}),
    "diagnoses_icd": ("diagnoses_icd", _H, {"icd9_code": "icd_code"}),
    "procedures_icd": ("procedures_icd", _H, {"icd9_code": "icd_code"}),
    "emar": ("emar", _H, {}),
    "emar_detail": ("emar_detail", _H, {}),
    "d_items": ("d_items", _I, {"row_id": None, "dbsource": None}),
    "d_labitems": ("d_labitems", _H, {"row_id": None, "loinc_code": None}),
    "d_icd_diagnoses": ("d_icd_diagnoses", _H, {"row_id": None, "icd9_code": "icd_code",
                                                "short_title": None}),
    "d_icd_procedures": ("d_icd_procedures", _H, {"row_id": None, "icd9_code": "icd_code",
                                                  "short_title": None}),
}, "lower")

# The perturbed MIMIC-III schema of the EHR-ReasonCon paper (Appendix M.3, Table 15).
# The paper's table lists D_ITEMS, D_LABITEMS and the two ICD link tables twice with
# different targets; we take the later, complete entries (ITEM_INFORMATION,
# LAB_TEST_INFO, DIAGNOSIS_ICD_CODES, PROCEDURE_ICD_CODES). The three core tables are
# not in Table 15; they get new names too so that no original table name survives.
PERTURBED = _map("perturbed", {
    "patients": ("PERSONS", None, {}),
    "admissions": ("HOSPITAL_STAYS", None, {}),
    "icustays": ("CRITICAL_CARE_STAYS", None, {}),
    "chartevents": ("VITALS_TIMESERIES", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "charttime": "OBSERVED_AT", "value": "VALUE_TEXT",
        "valuenum": "VALUE_NUM", "valueuom": "VALUE_UNIT"}),
    "labevents": ("LAB_RESULTS", None, {
        "row_id": "ID", "itemid": "LAB_ITEM_ID", "charttime": "MEASURED_AT", "value": "VALUE_TEXT",
        "valuenum": "VALUE_NUM", "valueuom": "VALUE_UNIT", "flag": "ABNORMAL_FLAG"}),
    "prescriptions": ("MEDICATION_ORDERS", None, {
        "row_id": "ID", "startdate": "START_AT", "enddate": "END_AT", "drug": "DRUG_NAME",
        "prod_strength": "PRODUCT_STRENGTH", "dose_val_rx": "DOSE_VALUE", "dose_unit_rx": "DOSE_UNIT",
        "form_val_disp": "DISPENSE_VALUE", "form_unit_disp": "DISPENSE_UNIT", "route": "ADMIN_ROUTE"}),
    "inputevents_mv": ("FLUID_INPUTS_MV", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "starttime": "START_AT", "endtime": "END_AT",
        "amount": "AMOUNT_VALUE", "amountuom": "AMOUNT_UNIT", "rate": "RATE_VALUE", "rateuom": "RATE_UNIT",
        "originalamount": "ORIG_AMOUNT_VALUE", "originalrate": "ORIG_RATE_VALUE", "patientweight": "WEIGHT_KG"}),
    "inputevents_cv": ("FLUID_INPUTS_CV", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "charttime": "CHART_AT", "amount": "AMOUNT_VALUE",
        "amountuom": "AMOUNT_UNIT", "rate": "RATE_VALUE", "rateuom": "RATE_UNIT",
        "originalamount": "ORIG_AMOUNT_VALUE", "originalamountuom": "ORIG_AMOUNT_UNIT",
        "originalroute": "ORIG_ROUTE", "originalrate": "ORIG_RATE_VALUE",
        "originalrateuom": "ORIG_RATE_UNIT"}),
    "outputevents": ("OUTPUT_FLUIDS", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "charttime": "RECORDED_AT", "value": "VALUE",
        "valueuom": "VALUE_UNIT"}),
    "procedureevents_mv": ("PROCEDURES_MV_LOG", None, {
        "row_id": "ID", "starttime": "START_AT", "endtime": "END_AT", "itemid": "ITEM_ID",
        "location": "PROCEDURE_LOCATION"}),
    "microbiologyevents": ("MICRO_RESULTS", None, {
        "row_id": "ID", "charttime": "COLLECTED_AT", "spec_itemid": "SPECIMEN_ITEM_ID",
        "spec_type_desc": "SPECIMEN_TYPE", "org_itemid": "ORGANISM_ITEM_ID", "org_name": "ORGANISM_NAME",
        "ab_itemid": "ANTIBIOTIC_ITEM_ID", "ab_name": "ANTIBIOTIC_NAME", "interpretation": "SUSCEPTIBILITY"}),
    "diagnoses_icd": ("DIAGNOSIS_ICD_CODES", None, {"row_id": "ID", "icd9_code": "ICD9CODE", **_NO_VERSION}),
    "procedures_icd": ("PROCEDURE_ICD_CODES", None, {"row_id": "ID", "icd9_code": "ICD9CODE", **_NO_VERSION}),
    "d_items": ("ITEM_INFORMATION", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "label": "ITEM_NAME", "abbreviation": "ITEM_ABBREVIATION",
        "dbsource": "DATASOURCE", "linksto": "LINKED_TABLE", "category": "ITEM_CATEGORY",
        "unitname": "UNIT_NAME", "param_type": "PARAMETER_TYPE"}),
    "d_labitems": ("LAB_TEST_INFO", None, {
        "row_id": "ID", "itemid": "ITEM_ID", "label": "TEST_NAME", "fluid": "SAMPLE_FLUID",
        "category": "TEST_CATEGORY"}),
    "d_icd_diagnoses": ("ICD_DIAGNOSIS_REF", None, {
        "row_id": "ID", "icd9_code": "ICD9CODE", "short_title": "DX_SHORT_NAME", "long_title": "DX_LONG_NAME",
        **_NO_VERSION}),
    "d_icd_procedures": ("ICD_PROCEDURE_REF", None, {
        "row_id": "ID", "icd9_code": "ICD9CODE", "short_title": "PROC_SHORT_NAME",
        "long_title": "PROC_LONG_NAME", **_NO_VERSION}),
}, "upper")

#: Physical column renames the perturbed build applies beyond the logical columns
#: (Table 15 renames CONCEPTID too, which the logical model does not use).
PERTURBED_EXTRA_COLUMNS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "D_ITEMS": MappingProxyType({"CONCEPTID": "CONCEPT_ID"}),
})

FLAVORS: Mapping[str, SchemaMap] = MappingProxyType({
    "mimic3": MIMIC3, "mimic4": MIMIC4, "perturbed": PERTURBED,
    # the synthetic hospital is written in the MIMIC-III layout unless rendered otherwise
    "synthetic": MIMIC3,
})


def schema_map(flavor: str) -> SchemaMap:
    """The schema map of a layout; KeyError naming the known layouts otherwise."""
    try:
        return FLAVORS[flavor]
    except KeyError:
        raise KeyError(f"unknown schema flavor {flavor!r}; expected one of {sorted(FLAVORS)}") from None


def detect_flavor(con) -> str:
    """The physical layout of an open DuckDB connection.

    Reads the ``layout`` recorded in the build manifest when present; otherwise probes
    for a table that only one flavor has.
    """
    tables = {
        (r[0] or "").lower() + "." + r[1].lower()
        for r in con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()
    }
    names = {t.split(".", 1)[1] for t in tables}
    if MANIFEST_TABLE in names:
        try:
            row = con.execute(
                f"SELECT value FROM {MANIFEST_TABLE} WHERE key = 'layout'"  # noqa: S608 - constant
            ).fetchone()
        except Exception:  # an older manifest without key/value rows: fall back to probing
            row = None
        if row and row[0] in FLAVORS:
            return row[0]
    if "mimiciv_hosp.labevents" in tables or "mimiciv_icu.d_items" in tables:
        return "mimic4"
    if "lab_results" in names or "vitals_timeseries" in names:
        return "perturbed"
    if "labevents" in names or "chartevents" in names:
        return "mimic3"
    raise LookupError("no MIMIC-III, MIMIC-IV or perturbed tables found in this database")
