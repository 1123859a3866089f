"""Evidence rows read back from the database: content for people, scoped to the patient."""
from __future__ import annotations

from ehrlib.corpus.records import RowRef
from ehrlib.db.connect import connect
from ehrlib.viz.evidence import EvidenceReader, EvidenceRow, describe


def test_rows_show_charted_content_and_stay_with_the_patient(mimic3_demo_db):
    con = connect(mimic3_demo_db)
    lab = con.execute("SELECT row_id, subject_id, valuenum, valueuom FROM LABEVENTS WHERE itemid = 51301 "
                      "AND valuenum IS NOT NULL ORDER BY row_id LIMIT 1").fetchone()
    rx = con.execute("SELECT row_id, subject_id, drug, route FROM PRESCRIPTIONS WHERE route IS NOT NULL "
                     "ORDER BY row_id LIMIT 1").fetchone()
    other = con.execute("SELECT subject_id FROM PATIENTS WHERE subject_id <> ? LIMIT 1", [lab[1]]).fetchone()[0]
    con.close()
    with EvidenceReader(mimic3_demo_db) as reader:
        (row,) = reader.rows(lab[1], [RowRef("labevents", lab[0])])
        assert row.found and row.label == "White Blood Cells" and row.unit == lab[3]
        assert float(row.value) == lab[2] and row.time
        text = describe(row)
        assert "White Blood Cells" in text and lab[3] in text
        (drug,) = reader.rows(rx[1], [RowRef("prescriptions", rx[0])])
        assert drug.label == rx[2] or drug.item == rx[2]
        assert f"route {rx[3]}" in describe(drug) and " → " in describe(drug)
        # the same row id asked for another patient, an unknown table, a bogus id: not found
        gone = reader.rows(other, [RowRef("labevents", lab[0]), RowRef("nosuch", 1), RowRef("labevents", -5)])
        assert [r.found for r in gone] == [False, False, False]
        assert "not found for this patient" in describe(gone[0])


def test_without_a_database_only_ids():
    reader = EvidenceReader(None)
    assert reader.error and reader.rows(1, [RowRef("labevents", 3)]) == [EvidenceRow("labevents", 3, found=False)]
    reader.close()
