"""Reports of runs: metrics tables as CSV + Markdown, figures, the findings viewer, and the
inputs/variant helpers and DataFrame views the notebooks call.

The notebooks import everything from here; inputs (:mod:`ehrlib.inputs`) and table
writers (:mod:`ehrlib.result_tables`) live lower in the package and are re-exported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ehrlib.lazy import lazy_package

if TYPE_CHECKING:  # exports, imported on first use (lazy_package): importing the package stays cheap
    from ehrlib.inputs import layout_variants, prepare_inputs, project_path
    from ehrlib.report.build import ReportResult, build_comparison, build_report, method_label
    from ehrlib.report.tool_ablation import tool_ablation_runs, tool_ablation_table, tool_ablation_variants
    from ehrlib.report.variants import run_variants
    from ehrlib.report.views import (
        ablation_table,
        compare_runs,
        database_overview,
        note_findings,
        run_failures,
        schema_mapping,
        schema_overview,
        stage_overview,
    )
    from ehrlib.result_tables import PERCENT_COLUMNS, markdown_table, paper_table, write_markdown_sections, write_table

__all__ = ["ReportResult", "build_comparison", "build_report", "method_label", "layout_variants", "prepare_inputs",
           "project_path",
           "run_variants", "PERCENT_COLUMNS", "markdown_table", "paper_table", "write_markdown_sections", "write_table",
           "ablation_table", "compare_runs", "database_overview", "note_findings", "run_failures", "schema_mapping",
           "schema_overview", "stage_overview", "tool_ablation_runs", "tool_ablation_table", "tool_ablation_variants"]

lazy_package(__name__)
