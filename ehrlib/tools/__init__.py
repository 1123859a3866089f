"""The table-exploration tools (paper Appendix C) bound to one patient.

>>> tools = make_toolset("hospital.duckdb", load_patient_context(con, MIMIC3, 10006, 142345))
>>> tools.call("Lexical_Search", {"query": "WBC"}).text
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
