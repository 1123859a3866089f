"""Known answers for open-vocabulary results-record values (ehrlib.pipeline.offline.lab_results)."""
from __future__ import annotations

import re

from ehrlib.corpus.records import ItemRef, TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.lab_results import (
    PROSE_RULE,
    PROSE_SPECIMEN_RULE,
    RULE,
    SPECIMEN_RULE,
    label_score,
    line_fluid,
    prose_fluid,
    prose_results,
    prose_specimen_items,
    record_results,
    record_specimen_items,
)
from ehrlib.pipeline.records import Entity, Segment

_LABS = {51244: ("Lymphocytes", "Blood", ("22", "9.5")), 51254: ("Monocytes", "Blood", ("6", "4.1")),
         51200: ("Eosinophils", "Blood", ("1.2",)), 50924: ("Ferritin", "Blood", ("450",)),
         51010: ("Vitamin B12", "Blood", ("512",)), 51196: ("D-Dimer", "Blood", ("900",)),
         51100: ("Sodium, Urine", "Urine", ("40",)), 50983: ("Sodium", "Blood", ("140",)),
         51093: ("Osmolality, Urine", "Urine", ("410",)), 51427: ("Lymphocytes", "Other Body Fluid", ("60",)),
         51498: ("Specific Gravity", "Urine", ("1.015",)), 51508: ("Urine Color", "Urine", ("Yellow",)),
         50986: ("tacroFK", "Blood", ("7.5",)), 50966: ("Phenobarbital", "Blood", ("21",)),
         # differential parts the vocabulary does not name (lymphs, monos, eos are vocabulary concepts)
         51143: ("Atypical Lymphocytes", "Blood", ("2",)), 51251: ("Metamyelocytes", "Blood", ("1",)),
         51252: ("Myelocytes", "Blood", ("1",)), 51414: ("Atypical Lymphocytes", "Other Body Fluid", ("3",))}
_PAIRS = [(ItemRef("labevents", label, itemid), f"labevents:{itemid}") for itemid, (label, _, _) in _LABS.items()]
_FLUID = {f"labevents:{i}": fluid for i, (_, fluid, _) in _LABS.items()}
_PROFILE = {f"labevents:{i}": values for i, (_, _, values) in _LABS.items()}


def _found(*lines: str, known: tuple[Entity, ...] = ()) -> list[tuple[str, float | None, tuple[int, ...]]]:
    seg = Segment(0, 0, len(lines) - 1, "Pertinent Results", "results")
    got = record_results(list(lines), seg, _PAIRS, lambda k: _PROFILE.get(k, ()), _FLUID.get, known)
    out = []
    for e in got:
        assert isinstance(e.claim, NumericClaim) and e.kind == "measurement"
        out.append((e.text, e.claim.reading.value, tuple(int(it.itemid) for it in e.items)))  # type: ignore[arg-type]
    return out


def test_a_record_name_resolves_to_the_patients_own_label_of_its_specimen() -> None:
    got = _found("[**2130-2-4**] 12:35AM BLOOD Neuts-70.1 Atyps-2 Metas-1.0* Myelos-1")
    assert got == [("Atyps-2", 2.0, (51143,)), ("Metas-1.0*", 1.0, (51251,)), ("Myelos-1", 1.0, (51252,))]
    # the label read as one word, a hyphenated name, a drug level the laboratory abbreviates
    assert _found("___ 05:39PM BLOOD VitB12-1214* Ferritn-88 D-Dimer-2361*") == [
        ("VitB12-1214*", 1214.0, (51010,)), ("Ferritn-88", 88.0, (50924,)), ("D-Dimer-2361*", 2361.0, (51196,))]
    assert _found("2101-03-04 08:00AM BLOOD tacroFK-4.2 Metas-11") == [("tacroFK-4.2", 4.2, (50986,)),
                                                                       ("Metas-11", 11.0, (51251,))]


def test_the_specimen_word_picks_the_fluid_item() -> None:
    # a urine record's sodium is the urine sodium, not the serum one
    assert _found("___ 03:12PM URINE Osmolal-410 Metas-2") == [("Osmolal-410", 410.0, (51093,))]  # no urine metas
    assert _found("___ 04:00PM OTHER BODY FLUID Atyps-3")[0][2] == (51414,)
    assert _found("UA: SpecGr-1.015 Color-Yellow") == []   # one item is no record line
    assert line_fluid("___ 10:00AM ASCITES TotPro-1.2") == "Ascites" and line_fluid("BLOOD WBC-4") == "Blood"


def test_vocabulary_names_taken_values_and_prose_are_left_alone() -> None:
    assert _found("___ 02:52AM BLOOD WBC-12.3* Hgb-9.6*") == []            # concept names: the scanner's
    assert _found("Lymphocytes were 19 percent on the smear, ferritin pending") == []
    known = (Entity("e1", 0, "Atyps-2", "measurement", span=(30, 37),
                    window=TimeSpan("2130-02-04 00:00:00", "2130-02-04 23:59:59"), time_text="[**2130-2-4**]"),)
    got = record_results(["[**2130-2-4**] 12:35AM BLOOD Atyps-2 Metas-6.0*"],
                         Segment(0, 0, 0, "Pertinent Results", "results"), _PAIRS,
                         lambda k: _PROFILE.get(k, ()), _FLUID.get, known)
    assert [(e.text, e.time_text) for e in got] == [("Metas-6.0*", "[**2130-2-4**]")]  # the stamp's time
    assert _found("___ 09:00AM BLOOD Zinc-80 Qwerty-5") == []   # no such item for this patient


def test_label_scores() -> None:
    assert label_score("Ferritin", "Ferritin") == 3 and label_score("Lymphs", "Lymphocytes") == 1
    assert label_score("VitB12", "Vitamin B12") == 3 and label_score("AnGap", "Anion Gap") == 1  # listed; one word
    assert label_score("Lymphs", "Monocytes") == 0 and label_score("Na", "Sodium, Urine") == 0
    assert RULE.rule_id == "extract.record_result" and "specimen" in RULE.principle


def test_a_vocabulary_analyte_on_a_urine_record_is_the_urine_item() -> None:
    serum = [(ItemRef("labevents", "Sodium", 50983), "labevents:50983")]
    got = record_specimen_items(["___ 03:12PM URINE Creat-88 Sodium-40"], 0, "Sodium", serum, _PAIRS,
                                lambda k: _PROFILE.get(k, ()), _FLUID.get)
    assert [it.itemid for it, _ in got] == [51100]
    # a blood record, prose, or a patient without the urine item keep the items as aligned
    assert record_specimen_items(["___ 03:12PM BLOOD Na-140 K-4"], 0, "Na", serum, _PAIRS, lambda k: (),
                                 _FLUID.get) == serum
    assert record_specimen_items(["urine sodium sent"], 0, "sodium", serum, _PAIRS, lambda k: (), _FLUID.get) == serum
    assert record_specimen_items(["___ 03:12PM URINE Potassium-30 Na-2"], 0, "Potassium", serum, _PAIRS,
                                 lambda k: (), _FLUID.get) == serum
    assert SPECIMEN_RULE.rule_id == "extract.record_specimen"


_CATALOG = [*_PAIRS, (ItemRef("labevents", "Haptoglobin", 50935), "labevents:50935"),
            (ItemRef("labevents", "Valproic Acid", 51008), "labevents:51008")]


def _prose(line: str, section: str = "results", known: tuple[Entity, ...] = ()) -> list[tuple[str, tuple[int, ...]]]:
    seg = Segment(0, 0, 0, "Labs", section)
    got = prose_results([line], seg, _PAIRS, lambda k: _PROFILE.get(k, ()), known, _CATALOG)
    return [(e.text, tuple(int(it.itemid) for it in e.items)) for e in got]  # type: ignore[arg-type]


def test_a_lab_name_in_prose_is_its_value_in_a_labs_context() -> None:
    assert _prose("Ferritin 442, D-dimer of 1120 on admission") == [("Ferritin 442", (50924,)),
                                                                    ("D-dimer of 1120", (51196,))]
    assert _prose("FK506 4.2 (was 7.5)") == [("FK506 4.2", (50986,))]           # the listed abbreviation
    # the admission has no haptoglobin: the dictionary's item, a result the record lacks
    assert _prose("haptoglobin: 12") == [("haptoglobin: 12", (50935,))]
    # a level word is a lab context of its own, and lets a short form name the patient's drug level
    assert _prose("Phenobarb level 19.5, VPA level 46", section="nursing") == [
        ("Phenobarb level 19.5", (50966,)), ("VPA level 46", (51008,))]


def test_prose_without_a_labs_context_doses_and_times_are_no_lab_values() -> None:
    assert _prose("ferritin 442", section="assessment") == []      # no labs context on the line
    assert _prose("Ferritin 3 days ago, lymphocytes 2 weeks") == []
    assert _prose("valproic acid 500 mg PO BID") == []             # a dose
    assert _prose("Monos at 0400") == []                          # short forms need a level word
    assert _prose("FK506 2340: 7.1, tacro 0653 8.2") == []          # a draw time before the value
    assert PROSE_RULE.rule_id == "extract.prose_result"


def test_a_record_name_only_the_dictionary_holds_is_a_result_the_admission_lacks() -> None:
    seg = Segment(0, 0, 0, "Pertinent Results", "results")
    got = record_results(["___ 09:00AM BLOOD Hapto-40 Haptoglobin-35"], seg, _PAIRS, lambda k: (), _FLUID.get,
                         (), _CATALOG)
    assert [(e.text, [it.itemid for it in e.items]) for e in got] == [("Haptoglobin-35", [50935])]  # short: not enough


_URINE = {51082: ("Creatinine, Urine", "Urine", ("60",)), 51104: ("Urea Nitrogen, Urine", "Urine", ("300",)),
          51479: ("Granular Casts", "Urine", ("4",)), 51516: ("WBC", "Urine", ("5",)),
          51301: ("White Blood Cells", "Blood", ("8.1",)), 50912: ("Creatinine", "Blood", ("1.1",)),
          51492: ("Protein", "Urine", ("100", "TR"))}
_UPAIRS = [*_PAIRS, *((ItemRef("labevents", label, i), f"labevents:{i}") for i, (label, _, _) in _URINE.items())]
_UFLUID = {**_FLUID, **{f"labevents:{i}": fluid for i, (_, fluid, _) in _URINE.items()}}
_UPROFILE = {**_PROFILE, **{f"labevents:{i}": values for i, (_, _, values) in _URINE.items()}}


def test_prose_words_name_the_specimen_of_a_lab_name() -> None:
    line = "UA: SG 1.020, WBC 4; urine Na 35, UOsm 500"
    assert prose_fluid(line, line.index("SG"), "SG") == ("Urine", "SG")        # the heading opens the clause
    assert prose_fluid(line, line.index("Na"), "Na") == ("Urine", "Na")        # the word right before
    assert prose_fluid(line, line.index("UOsm"), "UOsm") == ("Urine", "Osm")   # the fused letter
    assert prose_fluid("Na 135, K 4.1; UA pending", 0, "Na") is None          # the heading opens a later clause
    assert prose_fluid("Uric acid 7.0", 0, "Uric") is None and prose_fluid("US 3 cm", 0, "US") is None
    # a "Urine:" label opens its line's clause of urine results, as "UA:" does; a clause after it does not
    line = "Urine: Uosm 806, UNa 14 (c/w hypovolemia), SG 1.025, RBC 49; Cr 1.2"
    assert prose_fluid(line, line.index("RBC"), "RBC") == ("Urine", "RBC")
    assert prose_fluid(line, line.index("Cr"), "Cr") is None


def test_a_vocabulary_analyte_in_urine_prose_is_the_urine_item() -> None:
    serum = [(ItemRef("labevents", "Creatinine", 50912), "labevents:50912")]
    wbc = [(ItemRef("labevents", "White Blood Cells", 51301), "labevents:51301")]
    prof = lambda k: _UPROFILE.get(k, ())  # noqa: E731

    def items(text: str, name: str, aligned: list[tuple[ItemRef, str]], pattern: str) -> list[int]:
        got = prose_specimen_items(text, text.index(name), name, re.compile(pattern), aligned, _UPAIRS, prof,
                                   _UFLUID.get)
        return [int(it.itemid) for it, _ in got]  # type: ignore[arg-type]

    assert items("spot urine Cr 62 sent", "Cr", serum, "^creatinine$") == [51082]
    assert items("U/A with WBC 12, nitrite pos", "WBC", wbc, "^(white blood cells|wbc)$") == [51516]
    # the serum value, a record line, and a patient without the urine item keep the items
    assert items("Cr 1.2 today, urine output fine", "Cr", serum, "^creatinine$") == [50912]
    assert items("urine K 30", "K", serum, "^potassium$") == [50912]  # no urine potassium item
    assert PROSE_SPECIMEN_RULE.rule_id == "extract.prose_specimen" and "specimen" in PROSE_SPECIMEN_RULE.principle


def _uprose(line: str, section: str = "assessment") -> list[tuple[str, tuple[int, ...]]]:
    seg = Segment(0, 0, 0, "A/P", section)
    got = prose_results([line], seg, _UPAIRS, lambda k: _UPROFILE.get(k, ()), (), _CATALOG, _UFLUID.get)
    return [(e.text, tuple(int(it.itemid) for it in e.items)) for e in got]  # type: ignore[arg-type]


def test_urine_prose_reads_the_urine_dictionary_names() -> None:
    assert _uprose("UA with granular casts 6, SG 1.011, protein 30") == [
        ("casts 6", (51479,)), ("SG 1.011", (51498,)), ("protein 30", (51492,))]
    assert _uprose("urine lytes: UNa 22, UUN 410") == [("UNa 22", (51100,)), ("UUN 410", (51104,))]
    assert _uprose("protein 30 g/day diet, SG 1.011") == []   # no specimen cue, no lab list


def test_a_list_of_lab_values_is_a_labs_context_of_its_own() -> None:
    assert _uprose("Anemia w/u: ferritin 300, B12 410.") == [("ferritin 300", (50924,)), ("B12 410", (51010,))]
    assert _uprose("ferritin 300 noted") == []                 # one value outside a labs context


def test_an_analyte_on_a_record_of_another_specimen_is_named_by_its_concept_without_the_specimen_word() -> None:
    serum = [(ItemRef("labevents", "Sodium", 50983), "labevents:50983")]
    # "Na" does not abbreviate "Sodium, Urine" letter by letter; the concept's pattern takes the label
    # once its specimen words are off
    got = record_specimen_items(["___ 12:16PM URINE Na-155 Osmolal-410"], 0, "Na", serum, _PAIRS,
                                lambda k: _PROFILE.get(k, ()), _FLUID.get, re.compile("^sodium$"))
    assert [it.itemid for it, _ in got] == [51100]
    assert record_specimen_items(["___ 12:16PM URINE Na-155 Osmolal-410"], 0, "Na", serum, _PAIRS,
                                 lambda k: _PROFILE.get(k, ()), _FLUID.get) == serum  # no pattern: as aligned


def test_a_panels_draw_time_is_no_value_of_its_name() -> None:
    assert _prose("Ferritin 0631 (fasting): 442") == []
    assert _prose("Ferritin 1608: 442") == []
    assert _prose("Ferritin 1608 today") == [("Ferritin 1608", (50924,))]  # no value after it: the value
