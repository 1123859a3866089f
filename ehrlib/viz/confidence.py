"""Figures of a confidence calibrator: a reliability diagram and risk–coverage curves.

Both take plain frames (the CSVs the calibration benchmark writes), so a notebook can redraw
them from ``figures/bench_calibration_*.csv``.
"""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ehrlib.viz.plots import _figure

__all__ = ["plot_reliability", "plot_risk_coverage"]


def plot_reliability(bins: pd.DataFrame, *, title: str = "Reliability (leave-one-set-out)") -> Figure:
    """Observed share right vs mean confidence per bin, one line per ``label``, point size = count.

    ``bins`` columns: label, mean_confidence, observed, n.
    """
    fig, axes = _figure(width=4.6, height=4.2)
    ax = axes[0]
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfectly calibrated")
    for label, sel in bins.groupby("label", sort=True):
        ax.plot(sel["mean_confidence"], sel["observed"], marker="o", lw=1.5, label=f"{label} verdicts")
        ax.scatter(sel["mean_confidence"], sel["observed"], s=8 + 2 * sel["n"].clip(upper=200), alpha=0.25)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="confidence (predicted P(verdict right))",
           ylabel="observed share right", title=title)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def plot_risk_coverage(curves: pd.DataFrame, *, target: float | None = 0.80,
                       title: str = "Alarms kept by confidence (leave-one-set-out)") -> Figure:
    """Alarm precision and inconsistent recall vs the share of alarms kept, per ``set``.

    ``curves`` columns: set, threshold, coverage, alarm_precision, inconsistent_recall; the
    pooled curve (set ``all``) is drawn bold.
    """
    fig, axes = _figure(ncols=2, width=4.4, height=3.8)
    for ax, metric, name in ((axes[0], "alarm_precision", "alarm precision"),
                             (axes[1], "inconsistent_recall", "inconsistent recall")):
        for set_name, sel in curves.groupby("set", sort=True):
            bold = set_name == "all"
            ax.plot(sel["coverage"], sel[metric], lw=2.5 if bold else 0.8, alpha=1.0 if bold else 0.5,
                    color="black" if bold else None, label="pooled" if bold else None)
        if target is not None and metric == "alarm_precision":
            ax.axhline(target, ls=":", color="red", lw=1, label=f"target {target:.2f}")
        ax.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="share of alarms kept (coverage)", ylabel=name)
        ax.legend(loc="lower left", fontsize=8)
    fig.suptitle(title)
    return fig
