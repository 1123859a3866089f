"""Ontology tables: sizes, subgroups, the diff of two builds, save/load; coverage on a real build."""
from __future__ import annotations

import pytest

from ehrlib.analysis.ontology_views import (diff_summary, group_sizes, ontology_diff, saved_roundtrip,
                                            subgroup_table)
from ehrlib.ontology import Ontology, OntologyItem


def _onto(*items):
    groups = {"LAB": ("CHEM", "HEME"), "VITALS": ("VITALS",)}
    return Ontology(groups, tuple(OntologyItem(k, "labevents", k.upper(), g, s) for k, g, s in items))


A = _onto(("k1", "LAB", "CHEM"), ("k2", "LAB", "CHEM"), ("k3", "LAB", "HEME"), ("k4", "VITALS", "VITALS"))
B = _onto(("k1", "LAB", "CHEM"), ("k2", "LAB", "HEME"), ("k3", "VITALS", "VITALS"), ("k5", "LAB", "CHEM"))


def test_group_sizes_and_subgroups():
    sizes = group_sizes(A).set_index("group")
    assert sizes.loc["LAB", "n_items"] == 3 and sizes.loc["LAB", "n_subgroups"] == 2
    assert sizes.loc["LAB", "largest_subgroup"] == "CHEM" and sizes.loc["LAB", "largest_share"] == pytest.approx(2 / 3)
    subs = subgroup_table(A, examples=1).set_index("subgroup")
    assert subs.loc["CHEM", "examples"] == "K1" and subs.loc["HEME", "n_items"] == 1


def test_diff_names_each_kind_of_change():
    diff = ontology_diff(A, B, names=("rules", "llm")).set_index("key")
    assert diff["change"].to_dict() == {"k2": "subgroup", "k3": "group", "k4": "only_rules", "k5": "only_llm"}
    summary = diff_summary(A, B, diff.reset_index()).set_index("measure")["value"]
    assert summary["items in both"] == "3" and summary["same place in both"].startswith("1 ")


def test_save_and_load_round_trip(tmp_path):
    path, same = saved_roundtrip(A, tmp_path / "o.json")
    assert same and path.exists()


@pytest.mark.slow
def test_a_patients_items_are_covered_by_the_rule_built_ontology(tmp_path):
    from ehrlib.analysis.ontology_views import build_ontology, first_patient, patient_coverage
    from ehrlib.inputs import prepare_inputs

    db, _ = prepare_inputs(tmp_path, patients=2, with_corpus=False)
    onto = build_ontology(db)
    cov = patient_coverage(db, onto, first_patient(db))
    assert cov["patient_items"].sum() > 0
    assert (cov["in_ontology"] == cov["patient_items"]).all()


@pytest.mark.slow
def test_the_sliding_window_build_goes_through_a_configured_backend(tmp_path):
    """With llm settings the model-built ontology is asked for; items it leaves out keep
    their rule-based place (here: a scripted backend that assigns nothing)."""
    from ehrlib.analysis.ontology_views import build_ontology
    from ehrlib.inputs import prepare_inputs

    db, _ = prepare_inputs(tmp_path, patients=2, with_corpus=False)
    rules = build_ontology(db)
    empty = '{"assignments": {}}'
    onto = build_ontology(db, llm={"backend": "scripted", "replies": [empty, empty]}, window=100_000)
    assert onto.method == "llm" and onto.source["fallbacks"] == 2 * len(rules.items)
    assert ontology_diff(rules, onto).empty
