"""Clinical notes with gold labels, written from the rows of any database in the logical model.

``write_note`` turns one admission into a MIMIC-III-style discharge summary, physician
progress note or nursing note. Every labeled statement is built from actual rows (see
:mod:`ehrlib.synth.statements`), and a seeded share of them is deliberately made
inconsistent (wrong time, value, route/side, interpretation or trend, or no record at
all) with the gold record saying which. Out-of-scope text (history, home medications,
plans, instructions) is written around them and never labeled, as in the paper's
protocol (Appendix B.3).

``write_corpus`` writes ``notes.jsonl``, ``gold.jsonl`` and ``manifest.json`` with a
validation/test split. Same seed, same database -> byte-identical JSONL: every random
choice comes from a ``random.Random`` seeded by (seed, admission, note type), and every
query orders its rows.

Size: one note writer per note type sharing the section layout and the seeded
choices; splitting it would spread one byte-identical random stream over modules.
"""
from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import duckdb
from tqdm import tqdm

from ehrlib import __version__
from ehrlib.corpus.io import GOLD_FILE, MANIFEST_FILE, NOTES_FILE, write_json, write_jsonl
from ehrlib.corpus.records import SCHEMA_VERSION, GoldEntity, Label, Note, NoteType
from ehrlib.errors import ConfigError, DataError
from ehrlib.schema import MANIFEST_TABLE, SchemaMap, detect_flavor, schema_map
from ehrlib.synth import notes_templates as T
from ehrlib.synth.notes_facts import AdmissionFacts, ItemIndex, list_admissions, load_facts
from ehrlib.synth.statements import BUILDERS, Ctx, Stmt, relation_pair

__all__ = [
    "GENERATOR_VERSION",
    "NOTE_TYPES",
    "NoteOptions",
    "write_note",
    "write_corpus",
    "choose_note_date",
]

log = logging.getLogger(__name__)

GENERATOR_VERSION = "notes-3"
NOTE_TYPES = ("discharge_summary", "physician", "nursing")
_Reasoning = Literal["commonsense", "medical", "none"]  # GoldEntity.reasoning
_Plan = tuple[tuple[str, dict[str, Any]], ...]  # (statement kind, builder options) in writing order
_SHORT = {"discharge_summary": "ds", "physician": "md", "nursing": "rn"}
#: share of inconsistencies that are "missing" per note type (paper Figure 8)
_MISSING_SHARE = {"discharge_summary": 0.501, "physician": 0.412, "nursing": 0.575}
#: preference among feasible column-inconsistency types (time is the most common, Fig. 6)
_COLUMN_WEIGHTS = {"time": 8.0, "value": 1.0, "other": 0.5, "interpretation": 1.0, "trend": 1.0}
_NO_TIME_DAMPING = 0.85
#: trends are stated rarely; damp their contradictions less so every corpus has some
_KIND_DAMPING = {"trend": 0.3}
#: missing statements also stand in for infeasible column errors, so draw them less often
_MISSING_DRAW = 0.42
#: damping turns some drawn inconsistencies back into consistent statements; drawing a
#: little more often keeps the achieved rate at the requested one (measured on the demo)
_DRAW_BOOST = 1.95
_MISSING_CAPABLE = ["lab_value", "medication", "procedure", "microbiology", "infusion"]
#: list-like sections (vital signs, exam findings) where another statement would be out of place
_NO_SUBSTITUTE = ("vital_range", "finding")


@dataclass(frozen=True, slots=True)
class NoteOptions:
    """Knobs of the note writer."""
    inconsistency_rate: float = 0.27


Piece = "str | Stmt"


class _Doc:
    """Lines under construction; a line is a list of strings and statements."""

    def __init__(self) -> None:
        self.lines: list[list[Any]] = []

    def add(self, *pieces: Any) -> None:
        self.lines.append([p for p in pieces if p is not None and p != ""])

    def blank(self) -> None:
        self.lines.append([])

    def render(self) -> tuple[str, list[tuple[int, Stmt]]]:
        out, stmts = [], []
        for i, pieces in enumerate(self.lines):
            text = ""
            for p in pieces:
                text += p if isinstance(p, str) else p.text
                if isinstance(p, Stmt):
                    stmts.append((i, p))
            out.append(text)
        return "\n".join(out), stmts


class _Writer:
    """Draws modes and calls builders for one note."""

    def __init__(self, ctx: Ctx, options: NoteOptions) -> None:
        self.ctx, self.rng, self.options = ctx, ctx.rng, options
        self.dx_used: set = set()

    def modes(self, feasible: Sequence[str], damping: float = 0.0) -> list[str]:
        """Modes to try in order (the drawn one, then fallbacks that keep the rate)."""
        rng = self.rng
        if rng.random() >= min(1.0, self.options.inconsistency_rate * _DRAW_BOOST):
            return ["ok"]
        if rng.random() < _MISSING_SHARE[self.ctx.note_type] * _MISSING_DRAW:
            return ["missing", *feasible, "ok"]
        if "time" not in feasible and rng.random() < damping:
            # statements that cannot carry a time error (interpretations, ranges) would
            # otherwise crowd out time errors, the paper's most common type
            return ["ok"]
        if not feasible:  # e.g. billed diagnoses: present or absent, nothing to contradict
            return ["missing", "ok"]
        weights = [_COLUMN_WEIGHTS[m] for m in feasible]
        first = rng.choices(list(feasible), weights=weights)[0]
        if first == "time":
            # when the data leave no clean wrong time (daily labs), keep the statement right
            # rather than turning it into a value error: time must stay the commonest type
            return ["time", "ok"]
        return [first, *[m for m in feasible if m != first], "missing", "ok"]

    def stmt(self, kind: str, feasible: Sequence[str] | None = None, damping: float = 0.0, **kw: Any) -> Stmt | None:
        builder, default_feasible = BUILDERS[kind]
        feasible = default_feasible if feasible is None else feasible
        if kind == "diagnosis":
            kw["exclude"] = self.dx_used
        damping = max(damping, _KIND_DAMPING.get(kind, _NO_TIME_DAMPING))
        for mode in self.modes(feasible, damping):
            s = builder(self.ctx, mode, **kw)
            if s is not None:
                return s
            if mode == "missing" and kind in _NO_SUBSTITUTE:
                return builder(self.ctx, "ok", **kw)
            if mode == "missing":
                # this statement type has nothing absent to talk about here: say something
                # else that has no record (notes do mention unrecorded care)
                for other in self.rng.sample(_MISSING_CAPABLE, len(_MISSING_CAPABLE)):
                    s = BUILDERS[other][0](self.ctx, "missing")
                    if s is not None:
                        return s
        return None

    def relation(self) -> list[Any]:
        """A culture and the antibiotic it led to, e.g. 'Blood cx grew E. coli (HD 2); started on ceftriaxone'."""
        pair = relation_pair(self.ctx)
        if pair is None:
            return []
        anchor, order, diff = pair
        culture = BUILDERS["microbiology"][0](self.ctx, "ok", row_id=anchor.row_id)
        rel = self.stmt("relation", anchor=anchor, order=order, diff=diff)
        if culture is None or rel is None or rel.kind != "relation":
            return self.sentence("microbiology")
        culture.text = culture.text[:1].upper() + culture.text[1:] if culture.text[:1] != culture.entity[:1] \
            else culture.text
        return [culture, "; ", rel, ". "]

    def sentence(self, kind: str, prefix: str = "", suffix: str = ". ", **kw: Any) -> list[Any]:
        s = self.stmt(kind, **kw)
        if s is None:
            return []
        if not prefix:
            s.text = s.text[:1].upper() + s.text[1:] if not s.text[:1].isupper() and s.entity[:1] != s.text[:1] \
                else s.text
        return [prefix, s, suffix]


def _age_sex(f: AdmissionFacts) -> str:
    age = f"{f.age}" if f.age and f.age < 90 else "[**Age over 90 **]"
    sex = {"M": "M", "F": "F"}.get((f.gender or "").upper()[:1], "pt")
    return f"{age} yo {sex}"


def _listing(doc: _Doc, w: _Writer, title: str, kind: str, n: int) -> None:
    """A heading followed by one statement a line (results, diagnoses)."""
    doc.add(title)
    for _ in range(n):
        s = w.stmt(kind)
        if s:
            doc.add(s)


def _oos(rng: random.Random, pool: Sequence[str], k: int) -> list[str]:
    return rng.sample(list(pool), min(k, len(pool)))


# --- the three note types ------------------------------------------------------------------

_PANEL = ["wbc", "hgb", "plt", "na", "k", "hco3", "bun", "cr", "glucose", "lactate", "inr", "tbili"]
_HEMO = {"keys": ("hypotension", "tachycardia", "bradycardia", "hypertension")}
_ID = {"keys": ("fever", "leukocytosis", "leukopenia")}
_RENAL = {"keys": ("cr", "bun", "k", "na", "hco3")}
_HEME = {"keys": ("hgb", "plt", "inr")}
_RESP = {"keys": ("hypoxia", "tachypnea", "bradypnea")}


def _discharge_summary(w: _Writer) -> _Doc:
    rng, f = w.rng, w.ctx.facts
    doc = _Doc()
    doc.add(f"Admission Date:  {T.deid_date(f.admittime, rng, True)}     Discharge Date:   "
            f"{T.deid_date(f.dischtime, rng, True)}")
    doc.blank()
    doc.add(f"Service: {rng.choice(('MEDICINE', 'MICU', 'SURGERY', 'CARDIOLOGY'))}")
    doc.blank()
    doc.add("Allergies:")
    doc.add(rng.choice(T.ALLERGIES))
    doc.blank()
    doc.add(f"Attending:{T.deid_name(rng, '')}")
    doc.blank()
    doc.add("Chief Complaint:")
    doc.add((f.admit_diagnosis or rng.choice(T.CHIEF_COMPLAINTS)).lower())
    doc.blank()
    doc.add("Major Surgical or Invasive Procedure:")
    p = w.stmt("procedure")
    doc.add(p) if p else doc.add("None")
    doc.blank()
    doc.add("History of Present Illness:")
    doc.add(f"{_age_sex(f)} with PMH of {', '.join(_oos(rng, T.PAST_HISTORY, 3))} who presented to "
            f"{T.deid_hospital(rng)} with {rng.choice(T.CHIEF_COMPLAINTS)}. Per family, pt had been in usual "
            f"state of health until {rng.randint(2, 6)} days prior.")
    admit_day = f.admittime.date()
    doc.add("In the ED, ", *w.sentence("lab_value", prefix="", suffix="; ", on_date=admit_day),
            *w.sentence("interpretation", prefix="", on_date=admit_day))
    doc.blank()
    doc.add("Past Medical History:")
    for item in _oos(rng, T.PAST_HISTORY, rng.randint(3, 6)):
        doc.add(f"- {item}")
    doc.blank()
    doc.add("Social History:")
    doc.add(rng.choice(T.SOCIAL_HISTORY))
    doc.blank()
    doc.add("Family History:")
    doc.add(rng.choice(T.FAMILY_HISTORY))
    doc.blank()
    doc.add("Pertinent Results:")
    lab_days = sorted({o.time.date() for k in _PANEL for o in f.series.get(k, ())})
    picks = sorted({d for d in (lab_days[:1] + lab_days[-1:] + rng.sample(lab_days, min(2, len(lab_days))))})
    for d in picks:
        keys = rng.sample(_PANEL, rng.randint(4, 7))
        line: list[Any] = [f"{T.deid_date(d, rng, True)} {rng.randint(1, 11):02d}:{rng.randint(0, 59):02d}"
                           f"{rng.choice(('AM', 'PM'))} BLOOD"]
        for key in keys:
            s = w.stmt("lab_value", feasible=("value",), damping=0.9, concept_key=key, on_date=d, panel=True)
            if s is not None:
                line += [" ", s]
        if len(line) > 1:
            doc.add(*line)
    doc.blank()
    doc.add("Brief Hospital Course:")
    doc.add(f"{_age_sex(f)} admitted with {(f.admit_diagnosis or 'the above').lower()}, course as follows.")
    problems = ["# Hemodynamics:", "# ID:", "# Renal:", "# Heme:", "# FEN:", "# Lines/procedures:"]
    kinds: dict[str, _Plan] = {
             "# Hemodynamics:": (("interpretation", _HEMO), ("infusion", {}), ("interpretation", _HEMO)),
             "# ID:": (("microbiology", {}), ("medication", {"antibiotics": True}), ("interpretation", _ID)),
             "# Renal:": (("trend", _RENAL), ("interpretation", {"keys": ("aki", "oliguria")}), ("lab_value", _RENAL)),
             "# Heme:": (("trend", _HEME), ("lab_value", _HEME), ("interpretation", {"keys": ("anemia",)})),
             "# Lines/procedures:": (("procedure", {}), ("procedure", {}), ("procedure", {})),
             "# FEN:": (("lab_value", {"keys": ("k", "na", "glucose", "hco3")}), ("medication", {}),
                        ("output", {}))}
    if rng.random() < 0.4:
        problems = []
        days = sorted({f.admittime.date() + dt.timedelta(days=i) for i in range(f.n_days)})
        for d in sorted(set(days[:1] + rng.sample(days, min(3, len(days))))):
            line = [f"HD {f.hd(d)} ({T.deid_date(d, rng, False)}): "]
            line += w.sentence("interpretation", on_date=d)
            line += w.sentence("lab_value", on_date=d)
            line += w.sentence("medication", on_date=d)
            if len(line) > 1:
                doc.add(*line)
    for head in problems:
        line = [head + " "]
        for kind, kw in kinds[head]:
            if kind == "microbiology" and rng.random() < 0.6:
                line += w.relation() or w.sentence(kind, **kw)
            else:
                line += w.sentence(kind, **kw)
        if len(line) > 1:
            line.append(rng.choice(T.PLANS))
            doc.add(*line)
    doc.add(rng.choice(("Pt remained hemodynamically stable on the floor.", "Transferred to the floor.",
                        "Tolerated a regular diet prior to discharge.")))
    doc.blank()
    doc.add("Medications on Admission:")
    for med in _oos(rng, T.HOME_MEDS, rng.randint(3, 5)):
        doc.add(med)
    doc.blank()
    doc.add("Discharge Medications:")
    for i, med in enumerate(_oos(rng, T.HOME_MEDS, rng.randint(2, 4)), start=1):
        doc.add(f"{i}. {med}")
    doc.blank()
    doc.add("Discharge Disposition:")
    doc.add(rng.choice(("Home", "Home With Service", "Extended Care")))
    doc.blank()
    _listing(doc, w, "Discharge Diagnosis:", "diagnosis", rng.randint(4, 8))
    doc.blank()
    doc.add("Discharge Condition:")
    doc.add(rng.choice(("Stable. Mental status clear and coherent.", "Good; ambulating independently.")))
    doc.blank()
    doc.add("Discharge Instructions:")
    doc.add(" ".join(_oos(rng, T.INSTRUCTIONS, 3)))
    doc.blank()
    doc.add("Followup Instructions:")
    doc.add(f"Provider: {T.deid_name(rng)} Phone:[**Telephone/Fax (1) {rng.randint(100, 9999)}**] "
            f"Date/Time:[**{f.dischtime.year}-{f.dischtime.month}-{min(f.dischtime.day + 7, 28)} 10:00**]")
    return doc


def _physician(w: _Writer) -> _Doc:
    ctx, rng, f = w.ctx, w.rng, w.ctx.facts
    doc = _Doc()
    doc.add("Chief Complaint:  " + (f.admit_diagnosis or rng.choice(T.CHIEF_COMPLAINTS)).lower())
    doc.add("24 Hour Events:")
    for kind in ("infusion", "procedure", "medication"):
        s = w.stmt(kind)
        if s:
            doc.add(" - ", s)
    doc.add(" - " + rng.choice(("Family meeting held.", "No acute events overnight.", "Pt comfortable.")))
    doc.add("Allergies:")
    doc.add(rng.choice(T.ALLERGIES))
    doc.add("Last dose of Antibiotics:")
    s = w.stmt("medication", antibiotics=True)
    if s:
        doc.add(s)
    doc.add("Infusions:")
    s = w.stmt("infusion", with_rate=True)
    doc.add(s) if s else doc.add("None")
    doc.add(f"Flowsheet Data as of  {T.deid_date(ctx.note_date, rng, True)} 06:{rng.randint(10, 59)} AM")
    doc.add("Vital signs")
    for key in ("temp", "hr", "bp", "rr", "spo2"):
        s = w.stmt("vital_range", concept_key=key)
        if s:
            doc.add(s)
    doc.add("Physical Examination")
    doc.add(f"General Appearance: {rng.choice(('No acute distress', 'Well nourished', 'Intubated, sedated'))}")
    s = w.stmt("finding", concept_key="abd")
    doc.add("Abdominal: ", s) if s else doc.add("Abdominal: Soft")
    s = w.stmt("finding", concept_key="rhythm")
    if s:
        doc.add("Cardiovascular: ", s)
    _listing(doc, w, "Labs / Radiology", "lab_value", rng.randint(5, 9))
    doc.add("Assessment and Plan")
    doc.add(f"{_age_sex(f)} with {(f.admit_diagnosis or 'the above').lower()}.")
    for head, kinds in (("# Shock/hemodynamics: ", (("interpretation", _HEMO), ("interpretation", _HEMO))),
                        ("# Resp: ", (("interpretation", _RESP),)),
                        ("# Infection: ", (("microbiology", {}), ("interpretation", _ID), ("trend", {"keys": ("wbc",
                                                                                                              )}))),
                        ("# Renal: ", (("trend", _RENAL), ("interpretation", {"keys": ("aki", "oliguria")}),
                                       ("output", {}))),
                        ("# Heme: ", (("trend", _HEME), ("interpretation", {"keys": ("anemia",)})))):
        line: list[Any] = [head]
        for kind, kw in kinds:
            line += w.sentence(kind, **kw)
        if len(line) > 1:
            line.append("Plan: " + rng.choice(T.PLANS))
            doc.add(*line)
    doc.add(f"ICU Care: {rng.choice(('Nutrition: TF at goal', 'Glycemic Control: RISS'))}. "
            f"Code status: {rng.choice(('Full code', 'DNR/DNI'))}. Disposition: ICU")
    return doc


def _nursing(w: _Writer) -> _Doc:
    rng, f = w.rng, w.ctx.facts
    doc = _Doc()
    doc.add((f.admit_diagnosis or "Altered mental status").title())
    doc.add("Assessment:")
    systems: tuple[tuple[str, _Plan], ...] = (
               ("Neuro: ", (("finding", {"concept_key": "loc"}),)),
               ("CV: ", (("finding", {"concept_key": "rhythm"}), ("interpretation", _HEMO))),
               ("Resp: ", (("interpretation", _RESP),)),
               ("GI/Abd: ", (("finding", {"concept_key": "abd"}), ("finding", {"concept_key": "bowel"}))),
               ("GU: ", (("output", {}), ("interpretation", {"keys": ("oliguria",)}),
                         ("lab_value", {"keys": ("cr", "bun", "k")}))),
               ("Skin: ", (("finding", {"concept_key": "skin"}), ("finding", {"concept_key": "edema"}))))
    for head, kinds in systems:
        line: list[Any] = [head]
        for kind, kw in kinds:
            s = w.stmt(kind, **kw)
            if s:
                line += [s, ", "]
        if len(line) > 1:
            line[-1] = "."
        else:
            line.append(rng.choice(("WNL.", "no changes.", "see flowsheet.")))
        doc.add(*line)
    doc.add("Action:")
    for kind in ("medication", "infusion"):
        s = w.stmt(kind)
        if s:
            doc.add(s)
    doc.add("Response:")
    line = []
    responses: _Plan = (
        ("trend", {}), ("interpretation", {"keys": ("fever", "tachycardia", "hypotension")}))
    for kind, kw in responses:
        line += w.sentence(kind, **kw)
    doc.add(*line) if line else doc.add("Tolerating well.")
    doc.add("Plan:")
    doc.add(" ".join(_oos(rng, T.PLANS, 2)))
    return doc


_LAYOUTS = {"discharge_summary": _discharge_summary, "physician": _physician, "nursing": _nursing}


def choose_note_date(facts: AdmissionFacts, note_type: str) -> dt.date:
    """Discharge summaries are dated at discharge; progress notes on the busiest day (HD >= 2)."""
    if note_type == "discharge_summary":
        return facts.dischtime.date()
    counts: dict[dt.date, int] = {}
    for rows in facts.series.values():
        for o in rows:
            counts[o.time.date()] = counts.get(o.time.date(), 0) + 1
    days = sorted(d for d in counts if facts.hd(d) >= 2 and d <= facts.dischtime.date())
    if not days:
        return facts.admittime.date()
    # later days leave earlier days to misdate events to (progress notes never cite the future)
    later = [d for d in days if facts.hd(d) >= 4]
    days = later or days
    return max(days, key=lambda d: (counts[d], -facts.hd(d)))


def write_note(con, smap: SchemaMap, admission: AdmissionFacts | int, note_type: NoteType, rng: random.Random, *,
               index: ItemIndex | None = None, options: NoteOptions | None = None,
               note_id: str | None = None, cache: dict | None = None) -> tuple[Note, list[GoldEntity]]:
    """One note of ``note_type`` for an admission, and its gold entities.

    ``admission`` is a hadm_id or already-loaded facts; ``rng`` decides every surface form
    and inconsistency.
    """
    if note_type not in _LAYOUTS:
        raise ConfigError(f"unknown note type {note_type!r}; expected one of {NOTE_TYPES}")
    index = index or ItemIndex.build(con, smap)
    facts = admission if isinstance(admission, AdmissionFacts) else load_facts(con, smap, int(admission), index)
    note_date = choose_note_date(facts, note_type)
    ctx = Ctx(con, smap, index, facts, rng, note_type, note_date, cache if cache is not None else {})
    doc = _LAYOUTS[note_type](_Writer(ctx, options or NoteOptions()))
    text, stmts = doc.render()
    note_id = note_id or f"{facts.hadm_id}-{_SHORT[note_type]}"
    # a progress or nursing note's statements describe its whole calendar day (.statements), so
    # it is written at the day's end: judged up to its own time (pipeline/offline/note_time.py)
    # it sees every row they were drawn from
    charttime = None
    if note_type != "discharge_summary":
        rng.choice(range(4))  # the hour drawn before: the seeded stream, and every later note, stay as they were
        charttime = f"{note_date:%Y-%m-%d} 23:{rng.randint(0, 59):02d}:00"
    note = Note(note_id, facts.subject_id, facts.hadm_id, note_type, f"{note_date:%Y-%m-%d}", text, charttime)
    gold = []
    for k, (line, s) in enumerate(stmts):
        assert s.entity in text.split("\n")[line], (s.entity, s.text)
        gold.append(GoldEntity(
            note_id=note_id, entity_id=f"{note_id}-e{k:03d}", line=line, entity=s.entity, label=cast(Label, s.label),
            items=s.items, columns=s.columns, value=s.value, time=s.time, inconsistency=s.inconsistency,
            evidence_row_ids=s.evidence, reasoning=cast(_Reasoning, s.reasoning), medical_knowledge_source=s.source,
            check_path=s.check_path, claim=s.claim))
    return note, gold


def _db_source(con) -> dict[str, Any]:
    try:
        rows = con.execute(f"SELECT key, value FROM {MANIFEST_TABLE} ORDER BY key").fetchall()  # noqa: S608
        return {str(k): str(v) for k, v in rows if k in ("layout", "source_kind", "source", "flavor", "seed")}
    except Exception:  # not an ehrlib-built database: record what we can
        return {}


def _rng(seed: int, *parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def write_corpus(db_path: str | Path, out_dir: str | Path, *, seed: int = 0, notes_per_type: int = 10,
                 split: tuple[int, int] = (22, 83), admissions: Sequence[int] | None = None,
                 note_types: Sequence[str] = NOTE_TYPES, inconsistency_rate: float = 0.27,
                 progress: bool = True) -> Path:
    """Write a corpus folder (notes.jsonl, gold.jsonl, manifest.json) and return its path.

    Admissions are drawn (seeded) from those with at least two hospital days; each note
    type gets ``notes_per_type`` notes on distinct admissions where the data allow it.
    """
    db_path = Path(db_path)
    if not db_path.exists():
        raise DataError(f"database not found: {db_path}")
    if notes_per_type < 1:
        raise ConfigError("notes_per_type must be at least 1")
    if not 0 <= inconsistency_rate <= 1:
        raise ConfigError("inconsistency_rate must be between 0 and 1")
    if len(split) != 2 or min(split) < 0 or sum(split) <= 0:
        raise ConfigError("split must be two non-negative weights (validation, test)")
    out_dir = Path(out_dir)
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        flavor = detect_flavor(con)
        smap = schema_map(flavor)
        index = ItemIndex.build(con, smap)
        all_adm = list_admissions(con, smap)
        if admissions:
            wanted = {int(a) for a in admissions}
            all_adm = [a for a in all_adm if int(a["hadm_id"]) in wanted]
            missing = wanted - {int(a["hadm_id"]) for a in all_adm}
            if missing:
                raise DataError(f"admission(s) not found in {db_path}: {sorted(missing)}")
        candidates = [int(a["hadm_id"]) for a in all_adm
                      if (a["dischtime"] - a["admittime"]).total_seconds() >= 36 * 3600]
        if not candidates:
            raise DataError(f"no admission of at least two days in {db_path}")
        order = sorted(candidates)
        _rng(seed, "admissions").shuffle(order)
        options = NoteOptions(inconsistency_rate)
        notes: list[Note] = []
        gold: list[GoldEntity] = []
        cache: dict = {}
        facts_cache: dict[int, AdmissionFacts] = {}
        jobs = [(t, k) for t in note_types for k in range(notes_per_type)]
        for note_type, k in tqdm(jobs, desc="notes", disable=not progress, unit="note"):
            hadm = order[(k + NOTE_TYPES.index(note_type) * 7) % len(order)] if note_type in NOTE_TYPES else order[k]
            if hadm not in facts_cache:
                facts_cache[hadm] = load_facts(con, smap, hadm, index)
            note_id = f"{hadm}-{_SHORT[note_type]}"
            if any(n.note_id == note_id for n in notes):
                note_id = f"{note_id}-{k}"
            note, ents = write_note(con, smap, facts_cache[hadm], note_type, _rng(seed, hadm, note_type, k),
                                    index=index, options=options, note_id=note_id, cache=cache)
            notes.append(note)
            gold.extend(ents)
        source = _db_source(con)
    finally:
        con.close()
    ids = [n.note_id for n in notes]
    shuffled = list(ids)
    _rng(seed, "split").shuffle(shuffled)
    n_val = round(len(ids) * split[0] / (split[0] + split[1]))
    val = set(shuffled[:n_val])
    splits = {"validation": [i for i in ids if i in val], "test": [i for i in ids if i not in val]}
    write_jsonl(notes, out_dir / NOTES_FILE)
    write_jsonl(gold, out_dir / GOLD_FILE)
    n_incon = sum(g.label == "inconsistent" for g in gold)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "generator": "ehrlib.synth.notes",
        "generator_version": GENERATOR_VERSION,
        "ehrlib_version": __version__,
        "seed": seed,
        "db": {"path": str(db_path), "flavor": flavor, **source},
        "params": {"notes_per_type": notes_per_type, "note_types": list(note_types),
                   "inconsistency_rate": inconsistency_rate, "split": list(split),
                   "admissions": sorted(int(a) for a in admissions) if admissions else None},
        "counts": {"notes": len(notes), "entities": len(gold), "consistent": len(gold) - n_incon,
                   "inconsistent": n_incon,
                   "by_note_type": {t: sum(n.note_type == t for n in notes) for t in note_types}},
        "splits": splits,
    }
    write_json(manifest, out_dir / MANIFEST_FILE)
    log.info("wrote %d notes, %d entities (%d inconsistent) to %s", len(notes), len(gold), n_incon, out_dir)
    return out_dir
