"""Error analysis and trace analysis of runs: the heuristic 5-type error taxonomy
(Appendix H), tool-trace path-frequency graphs (Figure 5, Appendix K) and bootstrap
statistics over notes.
"""
from __future__ import annotations

from ehrlib.analysis.stats import bootstrap_ci, paired_bootstrap, run_spread
from ehrlib.analysis.taxonomy import ERROR_TYPES, classify_error, classify_errors, error_distribution
from ehrlib.analysis.traces import (
    END,
    START,
    TOOL_CATEGORIES,
    compare_dispersion,
    path_dispersion,
    path_frequencies,
    path_frequency_table,
    paths_from_gold,
    paths_from_predictions,
    paths_from_tool_calls,
    read_tool_calls,
    run_trace_paths,
    tool_category,
    transition_graph,
    transition_graphs,
)

__all__ = [
    "bootstrap_ci", "paired_bootstrap", "run_spread", "ERROR_TYPES", "classify_error", "classify_errors",
    "error_distribution", "compare_dispersion", "END", "START", "TOOL_CATEGORIES", "path_dispersion",
    "path_frequencies",
    "paths_from_gold", "paths_from_predictions", "paths_from_tool_calls", "read_tool_calls", "tool_category",
    "transition_graph", "transition_graphs", "run_trace_paths", "path_frequency_table",
]
