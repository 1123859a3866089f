"""Model-facing table names: physical on the perturbed schema, identity elsewhere."""
from __future__ import annotations

from ehrlib import schema
from ehrlib.tools.naming import table_names


def test_perturbed_names_go_out_physical_and_come_back_logical():
    names = table_names(schema.schema_map("perturbed"))
    assert names.hides
    assert names.outward("[labevents:51301] and inputevents_mv rows") == "[lab_results:51301] and fluid_inputs_mv rows"
    assert names.outward("LABEVENTS, not labeventsX or my_labevents") == "lab_results, not labeventsX or my_labevents"
    assert names.inward("LAB_RESULTS:51301") == "labevents:51301"
    assert names.inward("fluid_inputs_mv") == "inputevents_mv"
    assert names.inward("lab results of today") == "lab results of today"  # a query is no key
    assert names.inward(3) == 3
    assert names.outward_args({"item": "labevents:1", "k": 5}) == {"item": "lab_results:1", "k": 5}


def test_schemas_that_show_their_names_are_left_alone():
    for flavor in ("mimic3", "mimic4"):
        names = table_names(schema.schema_map(flavor))
        assert not names.hides
        assert names.outward("labevents:51301") == "labevents:51301"
        assert names.inward("lab_results:1") == "lab_results:1"


def test_a_perturbed_toolset_speaks_physical_names_and_accepts_them(tmp_path):
    from ehrlib.db import connect
    from ehrlib.inputs import prepare_inputs
    from ehrlib.tools.context import load_patient_context
    from ehrlib.tools.toolset import make_toolset

    db, _ = prepare_inputs(tmp_path, layout="perturbed", patients=2, with_corpus=False)
    con = connect(db)
    smap = schema.schema_map("perturbed")
    persons = smap.table("patients")
    stays = smap.table("admissions")
    subject = con.execute(f"SELECT min({persons.col('subject_id')}) FROM {persons.ref}").fetchone()[0]  # noqa: S608
    hadm = con.execute(f"SELECT min({stays.col('hadm_id')}) FROM {stays.ref} "  # noqa: S608
                       f"WHERE {stays.col('subject_id')} = ?", [subject]).fetchone()[0]
    with make_toolset(con, load_patient_context(con, smap, subject, hadm)) as tools:
        found = tools.call("Lexical_Search", {"query": "heart rate"})
        assert "vitals_timeseries:" in found.text and "chartevents" not in found.text.lower()
        key = next(w.strip("[],") for w in found.text.split() if w.strip("[").startswith("vitals_timeseries:"))
        history = tools.call("Get_Item_Status_History", {"item": key})
        assert history.ok, history.error
        assert tools.tracer.records[-1].args["item"] == key
        assert all("labevents" not in s.description.lower() for s in tools.specs())
