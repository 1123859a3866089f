"""What extraction reads of a note's patient, derived once per note and shared by its segments.

Every segment of a note asks the same questions of the patient's items (which item pairs,
which drug names, which tables have rows, which procedure-event forms and microbiology test
names) and of the build manifest (which tables are missing); the answers are kept per
``StageEnv`` (one per note) in weak maps, so they go with the note.
"""
from __future__ import annotations

import re
import weakref

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.align import DRUG_TABLES, patient_pairs
from ehrlib.pipeline.offline.event_items import EventForm, event_forms, patient_event_items
from ehrlib.pipeline.offline.microbiology import patient_test_names
from ehrlib.pipeline.offline.precision import absent_tables
from ehrlib.pipeline.stages import NoteContext, StageEnv

__all__ = ["PatientData", "absent", "patient_data"]


#: the build manifest's missing tables, read once per note (its StageEnv), not once per segment
_ABSENT: weakref.WeakKeyDictionary[StageEnv, frozenset[str]] = weakref.WeakKeyDictionary()


def absent(env: StageEnv) -> frozenset[str]:
    """The tables the database's build manifest lists as missing."""
    got = _ABSENT.get(env)
    if got is None:
        got = _ABSENT[env] = absent_tables(env.con)
    return got


PatientData = tuple[list[tuple[ItemRef, str]], list[str], frozenset[str], tuple[EventForm, ...],
                     tuple[tuple[re.Pattern[str], str], ...]]
#: what every segment reads of the note's patient items, derived once per note (its StageEnv)
_PATIENT: weakref.WeakKeyDictionary[StageEnv, tuple[NoteContext, PatientData]] = weakref.WeakKeyDictionary()


def patient_data(ctx: NoteContext, env: StageEnv) -> PatientData:
    """(item pairs, drug names, tables with rows, procedure-event forms, microbiology test
    names) of the note's patient: the same for each of its segments, so built once per note.
    Callers only read them (a segment's extraction never changes the patient's items).
    """
    got = _PATIENT.get(env)
    if got is not None and got[0] is ctx:
        return got[1]
    pairs = patient_pairs(ctx)
    tests = patient_test_names(tuple(sorted({it.label for it, k in pairs
                                             if it.table == "microbiologyevents" and ":spec:" in k and it.label})))
    data: PatientData = (pairs, [it.label for it, _ in pairs if it.table in DRUG_TABLES],
                          frozenset(it.table for it, _ in pairs), event_forms(patient_event_items(pairs)), tests)
    _PATIENT[env] = (ctx, data)
    return data
