"""CheckEHR baseline: eight stages on the perturbed schema, guarded SQL, same records."""
from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from typing import Any

from ehrlib.corpus.records import Note
from ehrlib.db.connect import connect
from ehrlib.llm import Client, GenerationConfig, LLMResponse, Message
from ehrlib.pipeline.context import note_context
from ehrlib.pipeline.inspector import inspect_note
from ehrlib.pipeline.llm import build_llm_stages
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.stages import StageEnv

SUBJECT, HADM = 10040, 104852
NOTE = "Events:\nOn {md} HR {hr}.\nWBC 99 on {md}."


class CheckEHRDouble:
    """Answers the CheckEHR prompts by reading them (the schema text above all)."""

    name = "checkehr-double"
    endpoint = "http://127.0.0.1:9/v1"

    def __init__(self, day: str, hr: float) -> None:
        self.prompts: list[str] = []
        self.day, self.hr = day, hr

    def describe(self) -> dict[str, Any]:
        return {}

    async def send(self, messages: Sequence[Message], tools: Any, config: GenerationConfig,
                   timeout_s: float) -> LLMResponse:
        text = messages[-1].text if messages[-1].role == "user" else messages[0].text
        text = messages[0].text if len(messages) > 1 and messages[-1].text.startswith("Your previous") else text
        self.prompts.append(text)

        def reply(obj: Any) -> LLMResponse:
            return LLMResponse(text=json.dumps(obj))

        if text.startswith("You split a clinical note"):
            return reply({"segments": [{"start_line": 0, "end_line": 2, "title": "Events", "section": "events"}]})
        if text.startswith("Extract every clinical entity"):
            return reply({"entities": [{"line": 1, "text": "HR", "type": "vital", "value": str(self.hr)},
                                       {"line": 2, "text": "WBC", "type": "lab", "value": "99"}]})
        if text.startswith("Below is the schema"):
            vit = re.search(r"^- (\w+): bedside charting", text, re.MULTILINE).group(1)
            lab = re.search(r"^- (\w+): laboratory results", text, re.MULTILINE).group(1)
            return reply({"tables": [{"index": 0, "tables": [vit]}, {"index": 1, "tables": [lab]}]})
        if text.startswith("For each entity below decide"):
            return reply({"filters": [{"index": 0, "mode": "day", "time": self.day},
                                      {"index": 1, "mode": "day", "time": self.day}]})
        if text.startswith("Write the database row"):
            item = "ITEM_ID" if "ITEM_ID" in text else "ITEMID"
            if "Entity: HR" in text:
                return reply({"rows": [{item: 220045, "VALUE_NUM": self.hr}]})
            return reply({"rows": [{"LAB_ITEM_ID": 51301, "VALUE_NUM": 99}]})
        if text.startswith("Check this pseudo-table") or text.startswith("Rewrite the values"):
            rows = json.loads(text.split("Pseudo-table:\n")[1].split("\n\nReply")[0])
            return reply({"rows": rows})
        if text.startswith("Write one DuckDB SELECT"):
            rows = json.loads(text.split("):\n", 1)[1].split("\n\nTime filter")[0])
            if "VITALS_TIMESERIES" in text and "ITEM_ID" in rows[0]:
                lo, hi = re.search(r"day: (\S+) \.\. (\S+)", text).groups()
                return reply({"sql": f"SELECT ID, VALUE_NUM FROM VITALS_TIMESERIES WHERE HADM_ID = {HADM} "
                                     f"AND ITEM_ID = 220045 AND VALUE_NUM = {self.hr} "
                                     f"AND OBSERVED_AT BETWEEN '{lo}' AND '{hi} 23:59:59'"})
            return reply({"sql": f"SELECT ID FROM LAB_RESULTS WHERE HADM_ID = {HADM} AND LAB_ITEM_ID = 51301 "
                                 "AND VALUE_NUM = 99"})
        raise AssertionError(text[:200])


def test_checkehr_on_perturbed_schema(synth_db_perturbed):
    con = connect(synth_db_perturbed)
    when, hr = con.execute(f"SELECT OBSERVED_AT, VALUE_NUM FROM VITALS_TIMESERIES WHERE HADM_ID = {HADM} "
                           "AND ITEM_ID = 220045 ORDER BY OBSERVED_AT LIMIT 1 OFFSET 10").fetchone()
    day = str(when.date())
    backend = CheckEHRDouble(day, hr)
    params = RunParams(method="checkehr", backend="scripted")
    stages = build_llm_stages("checkehr", params, Client(backend, GenerationConfig(model="double")))
    note = NOTE.format(md=f"{when.month}/{when.day}", hr=f"{hr:g}")
    ctx = note_context(con.cursor(), Note("c1", SUBJECT, HADM, "physician", day, note),
                       source_kind="synthetic")
    assert ctx.flavor == "perturbed"
    env = StageEnv(connect=con.cursor)
    try:
        res = inspect_note(ctx, stages, env, run_id="c")
    finally:
        env.close()
        con.close()
    preds = {p.entity: p for p in res.predictions}
    hr_pred, wbc = preds["HR"], preds["WBC"]
    assert hr_pred.label == "consistent" and hr_pred.evidence_row_ids
    assert hr_pred.evidence_row_ids[0].table == "chartevents"
    assert [c.tool for c in hr_pred.tool_calls] == ["SQL"] and "VITALS_TIMESERIES" in hr_pred.tool_calls[0].args["sql"]
    assert wbc.label == "inconsistent" and wbc.evidence_row_ids == ()
    d = datetime.date.fromisoformat(day)
    # a day back, and up to the note's own time (the end of its chart date): never past the note
    assert (hr_pred.time_window.start, hr_pred.time_window.end) == (str(d - datetime.timedelta(days=1)),
                                                                    f"{day} 23:59:59")
    assert all(p.prompt_id and p.prompt_id.startswith("checkehr_sql@") for p in res.predictions)
    # the model only ever saw physical names of the perturbed layout
    schema_prompts = [p for p in backend.prompts if p.startswith("Below is the schema")]
    assert schema_prompts and "VITALS_TIMESERIES" in schema_prompts[0] and "CHARTEVENTS" not in schema_prompts[0]
    # eight stages: segmentation + NER/tables/time (per segment) + 4 per entity
    assert hr_pred.usage.calls == 4 and len(backend.prompts) == 1 + 3 + 2 * 4




class HostileSQLDouble(CheckEHRDouble):
    """The same model, but its SQL tries to widen the patient scope and to read a host file."""

    def __init__(self, day: str, hr: float, canary: str) -> None:
        super().__init__(day, hr)
        self.canary = canary

    async def send(self, messages: Sequence[Message], tools: Any, config: GenerationConfig,
                   timeout_s: float) -> LLMResponse:
        text = messages[-1].text if messages[-1].role == "user" else messages[0].text
        if text.startswith("Write one DuckDB SELECT"):
            self.prompts.append(text)
            if "Pseudo-table (VITALS_TIMESERIES)" in text:
                return LLMResponse(text=json.dumps({"sql": f"SELECT ID FROM VITALS_TIMESERIES WHERE "
                                                           f"'{HADM}' = '{HADM}' OR 1 = 1"}))
            return LLMResponse(text=json.dumps({"sql": f"SELECT content AS ID FROM read_text('{self.canary}')"}))
        return await super().send(messages, tools, config, timeout_s)


def test_checkehr_model_sql_reaches_only_the_patient(synth_db_perturbed, tmp_path):
    canary = tmp_path / "secret.txt"
    canary.write_text("EHRLIB-CHECKEHR-CANARY")
    con = connect(synth_db_perturbed)
    when, hr = con.execute(f"SELECT OBSERVED_AT, VALUE_NUM FROM VITALS_TIMESERIES WHERE HADM_ID = {HADM} "
                           "AND ITEM_ID = 220045 ORDER BY OBSERVED_AT LIMIT 1 OFFSET 10").fetchone()
    day = str(when.date())
    backend = HostileSQLDouble(day, hr, str(canary))
    stages = build_llm_stages("checkehr", RunParams(method="checkehr", backend="scripted"),
                              Client(backend, GenerationConfig(model="double")))
    ctx = note_context(con.cursor(), Note("c1", SUBJECT, HADM, "physician", day,
                                          NOTE.format(md=f"{when.month}/{when.day}", hr=f"{hr:g}")),
                       source_kind="synthetic")
    env = StageEnv(connect=con.cursor)
    try:
        res = inspect_note(ctx, stages, env, run_id="c")
        cited = [r.row_id for p in res.predictions for r in p.evidence_row_ids]
        owners = {r[0] for r in con.execute("SELECT DISTINCT SUBJECT_ID FROM VITALS_TIMESERIES WHERE ID IN "
                                            "(SELECT unnest(?))", [cited]).fetchall()} if cited else set()
    finally:
        env.close()
        con.close()
    assert cited and owners == {SUBJECT}           # a tautology widened nothing
    assert all("EHRLIB-CHECKEHR-CANARY" not in p for p in backend.prompts)   # not even in the repair prompt
    calls = [c for p in res.predictions for c in p.tool_calls]
    assert any(c.error and "not allowed" in c.error for c in calls)
