"""Known answers for the specimen of a results line (ehrlib.pipeline.offline.specimen_scope):
named on the line, or by the record or specimen heading the line continues."""
from __future__ import annotations

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.lab_results import record_results, record_specimen_items
from ehrlib.pipeline.offline.specimen_scope import RULE, line_fluid, scoped_fluid
from ehrlib.pipeline.records import Segment

_BLOCK = """___ 07:10AM BLOOD Na-131 K-4.4 Glucose-140
SYNOVIAL FLUID ___ 11:20AM: WBC-41000* Polys-88* Crystal-NONE
Glucose-22 TotProt-4.1
___ 01:05PM BLOOD WBC-13.1 Glucose-155

Peritoneal fluid studies:
  TNC 410, albumin 1.1, glucose 96
  LDH 120
Cr 1.9 today

# Pleural effusion:
  glucose 130 this AM
UA: SG 1.020, WBC 7
albumin 3.0 on recheck""".split("\n")


def _fluids() -> list[str]:
    return [scoped_fluid(_BLOCK, i) for i in range(len(_BLOCK))]


def test_a_record_names_its_specimen_before_or_after_its_stamp() -> None:
    assert line_fluid("SYNOVIAL FLUID ___ 11:20AM: WBC-41000*") == "Joint"
    assert line_fluid("[**2101-3-4**] 09:15PM CEREBROSPINAL FLUID (CSF) WBC-3 Glucose-60") == "Cerebrospinal"
    assert line_fluid("___ 02:00PM PERICARDIAL FLUID: TNC 900, LD 300") == "Other Body Fluid"
    assert line_fluid("___ 02:00PM BLOOD WBC-9") == "Blood"
    # a problem word alone opens no specimen heading; a pleural heading takes "fluid"
    assert line_fluid("Pleural: small effusion, Cr 1.2") == "Blood"
    assert line_fluid("Pleural fluid: LDH 400") == "Pleural"
    # a record whose stamp was left off still names its specimen before its Name-value items
    assert line_fluid("URINE SpecGr-1.015 pH-7.5 Protein-300 RBC-4 WBC-25") == "Urine"
    assert line_fluid("CSF WBC-3 Glucose-60") == "Cerebrospinal"
    # a specimen word before a single number, or before one item, is no record
    assert line_fluid("Urine 500 cc, Cr-1.1") == "Blood" and line_fluid("Urine output-450 since MN") == "Blood"


def test_wrapped_lines_and_lines_under_a_specimen_heading_keep_its_specimen() -> None:
    got = _fluids()
    assert got[0] == "Blood" and got[1] == "Joint" and got[2] == "Joint"  # the record wraps onto the next line
    assert got[3] == "Blood"  # the next record names its own specimen
    assert got[6] == "Ascites" and got[7] == "Ascites"  # under "Peritoneal fluid studies:"
    assert got[8] == "Ascites"  # no blank line yet: still the heading's lines
    assert got[11] == "Blood"  # a problem heading names a disease, not a sample
    assert got[13] == "Blood"  # a labelled entry ("UA:") opens its own context: prose reads it by clause


def test_a_blank_line_ends_the_scope() -> None:
    lines = ["Pleural fluid studies:", "  LDH 524, glucose 111", "", "  glucose 180"]
    assert [scoped_fluid(lines, i) for i in (1, 3)] == ["Pleural", "Blood"]
    assert RULE.rule_id == "extract.specimen_scope" and "blank line" in RULE.principle


_LABS = {50931: ("Glucose", "Blood"), 51022: ("Glucose, Joint Fluid", "Joint Fluid"),
         51025: ("Total Protein, Joint Fluid", "Joint Fluid"), 50976: ("Protein, Total", "Blood")}
_PAIRS = [(ItemRef("labevents", label, str(i)), f"labevents:{i}") for i, (label, _) in _LABS.items()]
_FLUID = {f"labevents:{i}": fluid for i, (_, fluid) in _LABS.items()}


def test_a_wrapped_records_values_read_the_specimens_items() -> None:
    serum = [p for p in _PAIRS if p[0].itemid == "50931"]
    got = record_specimen_items(_BLOCK, 2, "Glucose", serum, _PAIRS, lambda k: ("20",), _FLUID.get)
    assert [it.label for it, _ in got] == ["Glucose, Joint Fluid"]
    assert record_specimen_items(_BLOCK, 3, "Glucose", serum, _PAIRS, lambda k: (), _FLUID.get) == serum
    seg = Segment(0, 0, 3, "Pertinent Results", "results")
    found = record_results(_BLOCK[:4], seg, _PAIRS, lambda k: ("4",), _FLUID.get)
    assert [(e.text, e.items[0].label) for e in found if e.line == 2] == [("TotProt-4.1", "Total Protein, Joint Fluid")]
