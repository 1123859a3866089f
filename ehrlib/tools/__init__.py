"""The table-exploration tools (paper Appendix C) bound to one patient.

    con = ehrlib.db.connect("hospital.duckdb")                      # read-only
    ctx = load_patient_context(con, schema_map(detect_flavor(con)), subject_id, hadm_id,
                               note_date="2130-06-28", anchors={"surgery": "2130-06-24 09:00"})
    tools = make_toolset(con, ctx, categories=("alignment", "profiling", "temporal", "criterion"))
    res = tools.call("Get_Item_Value_History", {"item": "HR", "operator": "more", "value": "100",
                                                "time": "admission"})
    res.text, res.rows, res.evidence(), tools.tracer.records

Tools: Lexical_Search, Semantic_Search (alignment); Get_Item_Value_Distribution,
Analyze_Category_Trend (profiling); Get_Item_Status_History, Get_Item_Value_History,
Analyze_Value_Trend, View_General_Timeline (temporal); Get_Clinical_Criterion (criterion).
Items are named by keys such as ``labevents:50912`` or ``microbiologyevents:org:ESCHERICHIA
COLI`` (``ehrlib.tools.items``). Declarations for model backends: ``ehrlib.tools.declarations``.
A database build calls :func:`build_item_profile` once so value distributions are precomputed.
"""
from __future__ import annotations

from ehrlib.tools.context import PatientContext, load_patient_context
from ehrlib.tools.profile import PROFILE_TABLE, build_item_profile
from ehrlib.tools.result import ToolResult
from ehrlib.tools.timespec import TimeWindow, parse_time_spec
from ehrlib.tools.toolset import CATEGORIES, TOOL_CATEGORIES, TOOL_NAMES, Toolset, make_toolset
from ehrlib.tools.tracing import Tracer

__all__ = [
    "make_toolset",
    "Toolset",
    "ToolResult",
    "PatientContext",
    "load_patient_context",
    "Tracer",
    "build_item_profile",
    "PROFILE_TABLE",
    "parse_time_spec",
    "TimeWindow",
    "CATEGORIES",
    "TOOL_CATEGORIES",
    "TOOL_NAMES",
]
