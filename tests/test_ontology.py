"""The hierarchical item ontology: Table 8 seed, rule build, LLM sliding-window build, JSON."""
from __future__ import annotations

import json

import pytest

from ehrlib.db.connect import connect
from ehrlib.errors import DataError
from ehrlib.ontology import (
    FORMAT_VERSION,
    Ontology,
    build_ontology_llm,
    build_ontology_rules,
    default_groups,
    load_ontology,
    read_ontology,
    save_ontology,
)


@pytest.fixture(scope="module")
def rules(synth_db) -> Ontology:
    con = connect(synth_db)
    try:
        return build_ontology_rules(con)
    finally:
        con.close()


def test_seed_has_the_twelve_groups_of_table_8():
    groups = default_groups()
    assert len(groups) == 12
    assert groups["MICROBIOLOGY"] == ("SPECIMEN", "ORGANISM", "ANTIBACTERIUM")
    assert "URINARY_OUTPUT" in groups["OUTPUT AND REMOVAL"]
    assert "TUBERCULOSIS" in groups["DIAGNOSIS"] and "HEMATOLOGY (BLOOD)" in groups["LABORATORY"]


@pytest.mark.parametrize("key,group,subgroup", [
    ("labevents:50912", "LABORATORY", "CHEMISTRY (BLOOD)"),                        # creatinine
    ("labevents:51301", "LABORATORY", "HEMATOLOGY (BLOOD)"),                       # WBC
    ("chartevents:220045", "HEMODYNAMICS & VITALS", "HEMODYNAMICS & VITALS"),       # heart rate
    ("prescriptions:Vancomycin", "MEDICATIONS, FLUIDS & NUTRITION", "INFECTIOUS DISEASES & IMMUNOLOGY"),
    ("outputevents:226559", "OUTPUT AND REMOVAL", "URINARY_OUTPUT"),              # Foley
    ("diagnoses_icd:0389", "DIAGNOSIS", "OTHER BACTERIAL & SEPTIC INFECTIONS"),    # unspecified septicemia
    ("microbiologyevents:ab:VANCOMYCIN", "MICROBIOLOGY", "ANTIBACTERIUM"),
])
def test_rule_assignments(rules, key, group, subgroup):
    item = rules.item(key)
    assert item is not None, key
    assert (item.group, item.subgroup) == (group, subgroup)


def test_every_item_sits_in_a_known_subgroup(rules):
    assert len(rules.items) > 500
    for i in rules.items:
        assert i.subgroup in rules.subgroups(i.group)
    assert {i.table for i in rules.items} >= {"chartevents", "labevents", "prescriptions", "microbiologyevents",
                                              "diagnoses_icd", "procedures_icd", "outputevents"}


def test_json_round_trip_and_version_check(rules, tmp_path):
    path = save_ontology(rules, tmp_path / "onto.json")
    again = read_ontology(path)
    assert again.sha8 == rules.sha8 and again.items == rules.items and again.method == "rules"
    data = json.loads(path.read_text())
    data["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(DataError, match="format_version"):
        Ontology.from_dict(data)


def test_same_assignment_on_other_layouts(rules, synth_db_perturbed):
    con = connect(synth_db_perturbed)
    try:
        other = build_ontology_rules(con)
    finally:
        con.close()
    shared = {i.key for i in rules.items} & {i.key for i in other.items}
    assert len(shared) > 0.95 * len(rules.items)
    mine = {i.key: (i.group, i.subgroup) for i in rules.items}
    assert all(mine[i.key] == (i.group, i.subgroup) for i in other.items if i.key in shared)


def test_llm_sliding_window_build(synth_db):
    """The paper's procedure with a model double: windows of w items, groups so far in each
    prompt, a new group created once, then subgroups from item-group pairs."""
    prompts: list[tuple[str, str]] = []

    def ask(prompt_id: str, text: str) -> dict:
        prompts.append((prompt_id, text))
        rows = [line.split(" | ") for line in text.splitlines() if line.count(" | ") >= 2]
        if prompt_id.startswith("ontology_build_groups"):
            out = {}
            for r in rows:
                out[r[0]] = "ALLERGY" if "allerg" in r[2].lower() else (
                    "BEDSIDE VITALS" if r[1] == "chartevents" else "LABORATORY" if r[1] == "labevents" else None)
            return {"assignments": {k: v for k, v in out.items() if v}}
        return {"assignments": {r[0]: ("CORE VITALS" if r[2] == "BEDSIDE VITALS" else "") for r in rows}}

    con = connect(synth_db)
    try:
        onto = build_ontology_llm(con, ask, window=200)
    finally:
        con.close()
    n_windows = -(-len(onto.items) // 200)
    assert len(prompts) == 2 * n_windows
    group_prompts = [t for p, t in prompts if p.startswith("ontology_build_groups")]
    assert "BEDSIDE VITALS" not in group_prompts[0].split("Assign each item")[0].splitlines()
    # created in window 1, offered in window 2
    assert "BEDSIDE VITALS" in group_prompts[1].split("Assign each item")[0].splitlines()
    assert onto.method == "llm" and onto.source["fallbacks"] > 0
    hr = onto.item("chartevents:220045")
    assert (hr.group, hr.subgroup) == ("BEDSIDE VITALS", "CORE VITALS")
    assert onto.item("labevents:50912").group == "LABORATORY"
    assert Ontology.from_dict(onto.to_dict()).sha8 == onto.sha8  # same versioned format as the rule build


def test_load_ontology_is_memoised_per_database(synth_db, tmp_path, rules):
    con = connect(synth_db)
    try:
        assert load_ontology(con) is load_ontology(con)
        path = save_ontology(rules, tmp_path / "o.json")
        assert load_ontology(con, path=path).sha8 == rules.sha8
    finally:
        con.close()


def test_ontology_command(synth_db, tmp_path, rules, capsys):
    from ehrlib.cli import main

    assert main(["ontology", str(synth_db), str(tmp_path / "o.json")]) == 0
    assert read_ontology(tmp_path / "o.json").sha8 == rules.sha8
    assert rules.sha8 in capsys.readouterr().out
