"""Known-answer tests of the checkability rules (which event statements the database can check)."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.claims import ProcedureClaim
from ehrlib.pipeline.offline.checkable import CHECKABLE_RULES, not_checkable
from ehrlib.pipeline.offline.mention import Mention

VENT = ItemRef("procedureevents_mv", "Invasive Ventilation", "225792")
RHYTHM = ItemRef("chartevents", "Heart Rhythm", "220048")
CV_FLUSH = ItemRef("inputevents_cv", "Dextrose Flush", "40001")
ORDER = ItemRef("prescriptions", "Dextrose", "Dextrose")
CAREVUE = frozenset({"chartevents", "labevents", "outputevents", "prescriptions"})
METAVISION = CAREVUE | {"procedureevents_mv"}


def _m(text: str, kind: str = "procedure") -> Mention:
    return Mention(0, 0, len(text), text, kind, "x", None, ProcedureClaim())


def _neg(text: str) -> Mention:
    return Mention(0, 0, len(text), text, "procedure", "x", None, ProcedureClaim(negated=True))


@pytest.mark.parametrize("m, items, tables, after, step, note_type, want", [
    # an ICU procedure item on a stay charted without procedure events: nothing to look in
    (_m("extubated"), [VENT], CAREVUE, " this morning", "ontology", "nursing", "checkable.table_not_recorded"),
    (_m("extubated"), [VENT], METAVISION, " this morning", "ontology", "nursing", None),
    # a bedside rhythm word where the build has no chartevents at all
    (_m("AF", "finding"), [RHYTHM], frozenset({"labevents"}), "", "ontology", "physician",
     "checkable.table_not_recorded"),
    # a phrase that found no item anywhere is no evidence of absence
    (_m("oriented x3", "finding"), [], METAVISION, ".", "ontology", "physician", "checkable.unresolved_phrase"),
    (_m("oriented x3", "finding"), [], METAVISION, ".", "patient", "physician", None),
    # an order is not a done event
    (_m("head CT"), [VENT], METAVISION, " ordered for tonight", "patient", "physician", "checkable.ordered_not_done"),
    (_m("head CT"), [VENT], METAVISION, " was requested", "patient", "physician", "checkable.ordered_not_done"),
    (_m("head CT"), [VENT], METAVISION, " showed no bleed", "patient", "physician", None),
    # a discharge summary's procedure is checked against the billed codes instead
    (_m("ERCP"), [], CAREVUE, " on day 2", "ontology", "discharge_summary", None),
    (_m("ERCP"), [VENT], CAREVUE, " on day 2", "ontology", "discharge_summary", None),
    # a finding only the catalogue names: nobody charted it for this patient
    (_m("guaiac positive", "finding"), [RHYTHM], METAVISION, ".", "ontology", "physician",
     "checkable.finding_not_charted"),
    (_m("guaiac positive", "finding"), [RHYTHM], METAVISION, ".", "patient", "physician", None),
    (_m("extubated"), [VENT], METAVISION, ".", "ontology", "physician", None),  # an event with a table: checkable
    # a negated procedure followed by its result noun denies the result
    (_neg("EEG"), [VENT], METAVISION, " changes overnight", "patient", "physician", "checkable.negated_result"),
    (_neg("EEG"), [VENT], METAVISION, " done yet", "patient", "physician", None),
    # labs and drugs keep their verdicts: their tables are recorded for every admission
    (_m("lactate", "measurement"), [], METAVISION, " 2.1", "ontology", "physician", None),
    # a fluid known only as an input item of the other charting system: its absence is no evidence
    (_m("dextrose flush", "medication"), [CV_FLUSH], METAVISION | {"inputevents_mv"}, "es", "ontology",
     "physician", "checkable.drug_table_not_recorded"),
    # an admission with no infusions charted at all: a drug's absence is still evidence
    (_m("dextrose flush", "medication"), [CV_FLUSH], METAVISION, "es", "ontology", "physician", None),
    (_m("dextrose flush", "medication"), [CV_FLUSH, ORDER], METAVISION | {"inputevents_mv"}, "es", "ontology",
     "physician", None),
    (_m("dextrose flush", "medication"), [CV_FLUSH], METAVISION | {"inputevents_cv"}, "", "ontology", "physician",
     None),
])
def test_not_checkable(m, items, tables, after, step, note_type, want):
    assert not_checkable(m, items, tables, after, step, note_type) == want


def test_rule_ids_are_stable_and_documented():
    ids = [r.rule_id for r in CHECKABLE_RULES]
    assert ids == ["checkable.ordered_not_done", "checkable.time_reference", "checkable.unresolved_phrase",
                   "checkable.drug_table_not_recorded", "checkable.table_not_recorded",
                   "checkable.finding_not_charted", "checkable.negated_result"]
    assert all(r.principle.endswith(".") for r in CHECKABLE_RULES)


@pytest.mark.parametrize("before, text, want", [
    ("Gas drawn post-", "intubation", "checkable.time_reference"),
    ("sedation held prior to ", "extubation", "checkable.time_reference"),
    ("washings sent from ", "bronchoscopy", "checkable.time_reference"),
    ("Resp: ", "intubation", None),                      # the procedure itself
    ("and with family present she was ", "extubated", None),  # a verb form is a claim
])
def test_a_procedure_named_as_a_time(before, text, want):
    assert not_checkable(_m(text), [VENT], METAVISION, "", "patient", "nursing", before) == want
