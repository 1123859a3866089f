"""Known answers for categorical lab results on results records (ehrlib.pipeline.offline.lab_categories)."""
from __future__ import annotations

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.lab_categories import PROSE_RULE, abbreviates, categorical_results, grade
from ehrlib.pipeline.records import Segment

_PATIENT = [(ItemRef("labevents", "Leukocytes", 51486), "labevents:51486"),
            (ItemRef("labevents", "Nitrite", 51487), "labevents:51487"),
            (ItemRef("labevents", "Glucose", 50931), "labevents:50931"),   # serum: numbers only
            (ItemRef("labevents", "Glucose", 51478), "labevents:51478"),   # urine: result words
            (ItemRef("labevents", "Barbiturate Screen, Urine", 51074), "labevents:51074"),
            (ItemRef("labevents", "Bilirubin", 51464), "labevents:51464"),
            (ItemRef("labevents", "Bilirubin, Total", 50885), "labevents:50885")]
_PROFILE = {"labevents:51486": ("NEG", "SM"), "labevents:51487": ("NEG",), "labevents:50931": ("112", "98"),
            "labevents:51478": ("NEG", "250"), "labevents:51074": ("NEG",), "labevents:51464": ("NEG",),
            "labevents:50885": ("0.4", "1.1")}


def _found(*lines: str) -> list[tuple[str, str, tuple[str, ...]]]:
    seg = Segment(0, 0, len(lines) - 1, "Pertinent Results", "results")
    got = categorical_results(list(lines), seg, _PATIENT, lambda k: _PROFILE.get(k, ()))
    return [(e.text, e.value or "", tuple(str(it.itemid) for it in e.items)) for e in got]


def test_result_words_on_a_results_record_resolve_to_the_patients_own_labels() -> None:
    got = _found("[**2101-3-4**] 11:20PM URINE Color-Straw Bilirub-NEG Leuk-MOD Nitrite-Pos Glucose-TR")
    assert got == [("Bilirub", "NEG", ("51464",)), ("Leuk", "MOD", ("51486",)), ("Nitrite", "POS", ("51487",)),
                   ("Glucose", "TR", ("51478",))]   # the urine glucose, not the serum one
    assert _found("___ 02:10AM URINE bnzodzp-NEG Barbitr-NEG") == [("Barbitr", "NEG", ("51074",))]


def test_prose_and_unknown_names_are_no_results() -> None:
    assert _found("Patient is HIV-NEG per outside records") == []     # no results record
    assert _found("UA: nitrite neg, leuks small") == []                # prose: not a record line
    assert _found("___ 08:00AM URINE Yeast-NONE Ketone-NEG") == []     # no such item for this patient


def test_grades_and_short_forms() -> None:
    assert [grade(w) for w in ("neg", "TR", "Sm", "MOD", "LGE", "POS", "0", "500", "Hazy")] == [0, 1, 2, 3, 4, -1,
                                                                                                  0, -1, None]
    assert abbreviates("Leuks", "Leukocytes") == 1 and abbreviates("Nitrite", "Nitrite") == 2
    assert abbreviates("Lymphs", "Leukocytes") == 0 and abbreviates("Glu", "Glucose") == 0   # too short


def _prose(line: str) -> list[tuple[str, str, tuple[str, ...]]]:
    from ehrlib.pipeline.offline.lab_results import prose_fluid
    seg = Segment(0, 0, 0, "A/P", "assessment")
    profile = {**_PROFILE, "labevents:51519": ("NONE", "FEW")}
    got = categorical_results([line], seg, [*_PATIENT, (ItemRef("labevents", "Yeast", 51519), "labevents:51519")],
                              lambda k: profile.get(k, ()), (), lambda text, at: (prose_fluid(text, at) or (None,))[0])
    return [(e.text, e.value or "", tuple(str(it.itemid) for it in e.items)) for e in got]


def test_result_words_in_a_specimen_clause_of_prose_are_results() -> None:
    assert _prose("UA: nitrite pos, LE trace, few yeast") == [("nitrite pos", "POS", ("51487",)),
                                                               ("LE trace", "TRACE", ("51486",)),
                                                               ("few yeast", "FEW", ("51519",))]
    assert _prose("U/A with no yeast") == [("no yeast", "NONE", ("51519",))]
    assert _prose("nitrite neg on the dipstick yesterday") == []        # no specimen words
    assert _prose("CXR: no yeast") == []                               # another clause heading
    assert [grade(w) for w in ("RARE", "few", "MANY")] == [1, 2, 4]
    assert PROSE_RULE.rule_id == "extract.prose_category"
