"""One heart-rate statement of the synthetic hospital, its toolset and the tool call that finds its row:
the shared case of the LLM verifier's wire tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ehrlib.corpus.records import Note, TimeSpan
from ehrlib.db.connect import connect
from ehrlib.pipeline.records import Entity


@dataclass
class HRCase:
    con: Any
    tools: Any
    note: Note
    entity: Entity
    args: dict[str, str]
    rows: list[dict[str, Any]]


def hr_case(synth_db: Any, note_id: str) -> HRCase:
    """Patient 10040's first charted heart rate on the admission day, as a physician-note statement."""
    from ehrlib.tools import PatientContext, make_toolset

    con = connect(synth_db)
    adm = con.execute("SELECT ADMITTIME, DISCHTIME FROM ADMISSIONS WHERE HADM_ID = 104852").fetchone()
    day = str(adm[0].date())
    tools = make_toolset(con.cursor(), PatientContext(10040, 104852, adm[0], adm[1], day))
    args = {"item": "chartevents:220045", "time": day}
    rows = tools.call("Get_Item_Status_History", args).rows
    assert rows
    note = Note(note_id, 10040, 104852, "physician", day, f"Events:\nHR {rows[0]['value']} today.")
    entity = Entity(f"{note_id}:e0", 1, "HR", "measurement", value=str(rows[0]["value"]),
                    item_keys=("chartevents:220045",), window=TimeSpan(day, day))
    return HRCase(con, tools, note, entity, args, list(rows))
