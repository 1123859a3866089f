"""Reports of runs: metrics tables as CSV + Markdown, figures, and the findings viewer."""
from __future__ import annotations

from ehrlib.report.build import ReportResult, build_report, method_label
from ehrlib.report.tables import PERCENT_COLUMNS, markdown_table, write_markdown_sections, write_table

__all__ = ["ReportResult", "build_report", "method_label", "PERCENT_COLUMNS", "markdown_table",
           "write_markdown_sections", "write_table"]
