"""Figures (DataFrame in, matplotlib Figure out), figure saving, and the per-note HTML
findings viewer.
"""
from __future__ import annotations

from ehrlib.viz.plots import (
    METRICS,
    plot_ablation,
    plot_category_counts,
    plot_dataset_scores,
    plot_error_distribution,
    plot_group_sizes,
    plot_main_results,
    plot_method_scores,
    plot_metric_heatmap,
    plot_note_scores,
    plot_share_heatmap,
    plot_stacked_shares,
    plot_table,
    plot_trace_graphs,
)
from ehrlib.viz.save import FIGURES_DIR, savefig
from ehrlib.viz.viewer import findings_html, method_verdict, notebook_view, prediction_verdicts
from ehrlib.viz.viewer_site import write_findings_viewer

__all__ = [
    "METRICS", "plot_ablation", "plot_category_counts", "plot_error_distribution", "plot_main_results",
    "plot_note_scores",
    "plot_metric_heatmap", "plot_share_heatmap", "plot_stacked_shares", "plot_table", "plot_trace_graphs",
    "plot_group_sizes",
    "plot_dataset_scores", "plot_method_scores", "FIGURES_DIR", "savefig",
    "findings_html", "method_verdict", "notebook_view", "prediction_verdicts", "write_findings_viewer",
]
