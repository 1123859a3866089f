"""Figures of the paper, regenerated from run tables: DataFrame in, matplotlib Figure out.

Every function builds a ``matplotlib.figure.Figure`` directly (no pyplot state, so a
notebook shows each figure once and a batch job leaks nothing) with seaborn's
``whitegrid`` look; it is an :class:`~ehrlib.viz.inline.InlineFigure`, so a notebook
cell ending in ``fig`` shows the picture. Metric values are fractions in 0..1 and drawn as percentages, like
the paper's tables. Save with :func:`ehrlib.viz.savefig`.

Expected inputs (the column names are those ``ehrlib.judge`` / ``ehrlib.analysis`` and
``ehrlib.corpus.stats`` write):

==============================  ===============================================
function                        columns
==============================  ===============================================
plot_main_results               method, mode, recall, precision, f1 [, f1_low, f1_high]
plot_metric_heatmap             method, mode, <column>, <metric>
plot_category_counts            <category>, n [, <hue>]
plot_share_heatmap              <rows>, <columns>, n
plot_error_distribution         <group>, error_type, share
plot_ablation                   variant, f1 [, mode, f1_low, f1_high]
plot_stacked_shares             one row per bar, one count column per part
plot_table                      any (drawn as a table, e.g. Table 1)
plot_method_scores              <label>, <hue>, f1, n_notes
==============================  ===============================================

Size: one small function per figure kind, all sharing the figure, palette and
column-check helpers at the top; splitting them would only scatter those helpers.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ehrlib.analysis.traces import END, START, TOOL_CATEGORIES
from ehrlib.viz.inline import InlineFigure

__all__ = [
    "METRICS",
    "plot_main_results",
    "plot_metric_heatmap",
    "plot_category_counts",
    "plot_share_heatmap",
    "plot_error_distribution",
    "plot_note_scores",
    "plot_ablation",
    "plot_stacked_shares",
    "plot_table",
    "plot_trace_graphs",
    "plot_group_sizes",
    "plot_method_scores",
    "plot_dataset_scores",
]

METRICS = ("recall", "precision", "f1")
_METRIC_LABEL = {"recall": "Recall", "precision": "Precision", "f1": "F1"}
_PALETTE = "colorblind"
# a fixed tool order so annotator and model graphs put every tool in the same place
_TOOL_ORDER = tuple(TOOL_CATEGORIES)


def _figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.6,
            **kw: Any) -> tuple[Figure, np.ndarray]:
    sns.set_theme(style="whitegrid", context="paper", palette=_PALETTE)
    fig = InlineFigure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, **kw)).ravel()
    return fig, axes


def _heatmap(data: pd.DataFrame, **kwargs: object) -> None:
    # seaborn 0.13 calls a matplotlib API that warns of its own future deprecation; the
    # warning is about seaborn's internals, not our call, so keep it out of user output.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=PendingDeprecationWarning, module="seaborn")
        sns.heatmap(data, **kwargs)


def _no_rows(title: str) -> Figure:
    """An empty frame plots as a labelled blank figure, not an error: a run over
    unlabelled notes has no metrics, and a notebook showing them should still run.
    """
    fig, (ax,) = _figure(height=1.6)
    ax.set_axis_off()
    ax.text(0.5, 0.5, "no rows to plot (e.g. no gold labels: nothing was scored)", ha="center", va="center")
    ax.set_title(title)
    return fig


def _require(df: pd.DataFrame, cols: Sequence[str], fn: str) -> pd.DataFrame:
    """``df`` with ``cols`` as columns (index levels of that name are moved into columns,
    so ``ehrlib.corpus.stats`` frames indexed by type or note type plot as they are).
    """
    if any(c not in df.columns for c in cols) and any(n in cols for n in df.index.names if n):
        df = df.reset_index()
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{fn}: missing column(s) {missing}; got {list(df.columns)}")
    return df


def plot_main_results(summary: pd.DataFrame, *, methods: Sequence[str] | None = None, label: str = "method",
                      title: str = "Main results", panel: str = "mode", caption: str = "") -> Figure:
    """Recall / precision / F1 per method, one panel per judge mode (Table 2 as bars).

    ``label`` names the column whose values are the bar groups (``method``, or ``variant``
    when one method runs on several models). ``panel`` names the column that splits the
    panels (``mode``; or e.g. ``corpus`` to set two evaluation sets side by side, panels in
    order of appearance). When every run scores harsh and lenient alike (the matcher) one
    panel is drawn. With ``f1_low``/``f1_high`` columns (``ehrlib.analysis.bootstrap_ci``)
    F1 bars get error bars, never a zero-width one. ``caption`` goes under the plot.
    """
    if summary.empty:
        return _no_rows(title)
    summary = _require(summary, [label, panel, *METRICS], "plot_main_results")
    same = False
    if panel == "mode":
        modes = [m for m in ("lenient", "harsh") if m in set(summary["mode"])] or sorted(set(summary["mode"]))
        same = _modes_identical(summary, label)
        if same:  # two equal panels would suggest two measurements
            modes = modes[:1]
    else:
        modes = list(dict.fromkeys(summary[panel]))
    methods = list(methods or dict.fromkeys(summary[label]))
    fig, axes = _figure(len(modes), sharey=True, height=4.0)
    colors = sns.color_palette(_PALETTE, len(methods))
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(METRICS))
    for ax, mode in zip(axes, modes, strict=False):
        part = summary[summary[panel] == mode].set_index(label)
        for i, method in enumerate(methods):
            if method not in part.index:
                continue
            row = part.loc[method]
            vals = [100 * float(row[m]) for m in METRICS]
            err = None
            if {"f1_low", "f1_high"} <= set(part.columns) and pd.notna(row.get("f1_low")):
                lo, hi = 100 * float(row["f1_low"]), 100 * float(row["f1_high"])
                if hi - lo > 1e-9:  # a zero-width interval is no interval: draw none
                    err = np.array([[vals[2] - lo], [hi - vals[2]]])
            offset = (i - (len(methods) - 1) / 2) * width
            bars = ax.bar(x + offset, vals, width, color=colors[i], label=str(method))
            if err is not None:  # the interval belongs to F1 only
                ax.errorbar([x[2] + offset], [vals[2]], yerr=err, fmt="none", ecolor="black", capsize=3)
            ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=2)
        ax.set_xticks(x, [_METRIC_LABEL[m] for m in METRICS])
        name = mode.capitalize() if panel == "mode" else str(mode)
        ax.set_title("Harsh = lenient (identical scores)" if same else name, fontsize=9)
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("score (%)")
    # the legend hangs under the first panel's tick labels: an axes legend is inside the
    # layout's bounding boxes, so the caption below it never overlaps it
    axes[0].legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), ncols=min(len(methods), 4), fontsize=7,
                   frameon=False)
    fig.suptitle(title)
    if caption:
        fig.supxlabel(caption, fontsize=7)
    return fig


def _modes_identical(summary: pd.DataFrame, label: str) -> bool:
    """True when every run's harsh and lenient scores are equal (the matcher judge)."""
    if not {"harsh", "lenient"} <= set(summary["mode"]):
        return False
    metrics = [m for m in METRICS if m in summary.columns]
    wide = summary.pivot_table(index=label, columns="mode", values=metrics, aggfunc="first")
    return all(np.allclose(wide[(m, "harsh")], wide[(m, "lenient")], equal_nan=True) for m in metrics)


def plot_metric_heatmap(df: pd.DataFrame, column: str, metric: str = "f1", *,
                        rows: Sequence[str] = ("method", "mode"), order: Sequence[str] | None = None,
                        title: str | None = None, n: str | None = None) -> Figure:
    """A heatmap of ``metric`` (%) with one row per method × mode and one column per ``column``
    value (note type, gold inconsistency type, ...); ``n`` names a count column shown per cell.
    """
    if df.empty:
        return _no_rows(title or f"{metric} by {column}")
    row_keys = [r for r in rows if r in df.columns]
    df = _require(df, [*row_keys, column, metric], "plot_metric_heatmap")
    if "mode" in row_keys and {"harsh", "lenient"} <= set(df["mode"]):
        by_mode = df.pivot_table(index=[*row_keys, column], values=metric, aggfunc="mean").unstack("mode")
        if np.allclose(by_mode[(metric, "harsh")], by_mode[(metric, "lenient")], equal_nan=True):
            df = df[df["mode"] == "lenient"].assign(mode="harsh = lenient")
    table = df.pivot_table(index=row_keys, columns=column, values=metric, aggfunc="mean") * 100
    if order is not None:
        table = table.reindex(columns=[c for c in order if c in table.columns])
    annot: object = True
    if n is not None and n in df.columns:  # each cell says how many entities/notes it averages
        counts = df.pivot_table(index=row_keys, columns=column, values=n, aggfunc="sum").reindex_like(table)
        annot = np.vectorize(lambda v, k: "" if pd.isna(v) else f"{v:.1f}\n(n={int(k)})")(table.to_numpy(),
                                                                                          counts.fillna(0).to_numpy())
    table.index = [" / ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in table.index]
    fig, (ax,) = _figure(width=1.3 * max(table.shape[1], 3) + 2.5, height=0.6 * max(table.shape[0], 1) + 1.6)
    # a score has one direction (higher is better): a sequential map, not a diverging one
    _heatmap(table, ax=ax, annot=annot, fmt="" if annot is not True else ".1f", cmap="viridis", vmin=0, vmax=100,
             annot_kws={"fontsize": 7}, cbar_kws={"label": f"{_METRIC_LABEL.get(metric, metric)} (%)"})
    ax.set_xlabel(column.replace("_", " "))
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelrotation=0)
    ax.set_title(title or f"{_METRIC_LABEL.get(metric, metric)} by {column.replace('_', ' ')}")
    return fig


def plot_category_counts(df: pd.DataFrame, category: str, *, hue: str | None = None, value: str = "n",
                         percent: bool = True, order: Sequence[str] | None = None, title: str = "",
                         log: bool = False) -> Figure:
    """Bars of counts or shares per category: the paper's Figures 6-8.

    With ``percent`` bars show shares: of the total, or with a ``hue`` of each category
    (Figure 8: column inconsistency vs missing evidence within each note type).
    """
    data = _require(df, [category, value] + ([hue] if hue else []), "plot_category_counts").copy()
    keys = [category] if hue else []
    data["_share"] = 100 * data[value] / (data.groupby(keys)[value].transform("sum") if keys else data[value].sum())
    cats = list(order or dict.fromkeys(data[category]))
    fig, (ax,) = _figure(width=max(4.0, 0.9 * len(cats) * (1 + 0.4 * bool(hue))))
    sns.barplot(data=data, x=category, y="_share" if percent else value, hue=hue, order=cats, ax=ax,
                palette=_PALETTE if hue else None, color=None if hue else sns.color_palette(_PALETTE)[0],
                errorbar=None)
    if len(cats) > 6:
        ax.tick_params(axis="x", labelrotation=45)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.1f%%" if percent else "%d", fontsize=7, padding=2)
    if log:  # counts spanning orders of magnitude (rows per table); bars grow from 1
        ax.set_yscale("log")
        ax.set_ylim(bottom=1, top=float(data[value].max()) * 3)
    ax.set_ylabel("share (%)" if percent else ("count (log scale)" if log else "count"))
    ax.set_xlabel(category.replace("_", " "))
    ax.set_title(title)
    return fig


def plot_share_heatmap(df: pd.DataFrame, rows: str | None = None, columns: str | None = None, *,
                       value: str = "n", column_order: Sequence[str] | None = None, title: str = "") -> Figure:
    """Row-normalised shares (%) as a heatmap, e.g. inconsistency type by note type (Figure 9).

    ``df`` is long (``rows``, ``columns``, ``value`` columns) or, with ``rows``/``columns``
    left out, already a count matrix (``ehrlib.corpus.stats.type_by_note_type``).
    """
    if rows is None or columns is None:
        table = df.astype(float)
        rows, columns = df.index.name or "", df.columns.name or ""
    else:
        df = _require(df, [rows, columns, value], "plot_share_heatmap")
        table = df.pivot_table(index=rows, columns=columns, values=value, aggfunc="sum", fill_value=0)
    if column_order is not None:
        table = table.reindex(columns=[c for c in column_order if c in table.columns])
    shares = 100 * table.div(table.sum(axis=1).replace(0, np.nan), axis=0)
    fig, (ax,) = _figure(width=1.1 * max(shares.shape[1], 3) + 2, height=0.55 * max(shares.shape[0], 2) + 1.4)
    _heatmap(shares, ax=ax, annot=True, fmt=".1f", cmap="Blues", vmin=0, vmax=100,
                cbar_kws={"label": "share of row (%)"})
    ax.set_xlabel(columns.replace("_", " "))
    ax.set_ylabel(rows.replace("_", " "))
    ax.set_title(title)
    return fig


def plot_note_scores(scores: pd.DataFrame, metric: str = "f1", *, by: str = "note_type",
                     title: str | None = None) -> Figure:
    """Per-note ``metric`` (one dot per note over a box) per ``by`` group, one panel per
    mode: the spread that the paper's mean over notes hides (``note_scores.csv``).
    """
    scores = _require(scores, [by, "mode", metric], "plot_note_scores")
    data = scores.dropna(subset=[metric]).assign(_v=lambda d: 100 * d[metric])
    modes = [m for m in ("lenient", "harsh") if m in set(data["mode"])] or sorted(set(data["mode"]))
    order = list(dict.fromkeys(data[by]))
    fig, axes = _figure(len(modes), width=max(4.0, 1.3 * len(order) + 1.5), sharey=True)
    for ax, mode in zip(axes, modes, strict=False):
        part = data[data["mode"] == mode]
        groups = [part.loc[part[by] == g, "_v"].to_numpy() for g in order]
        ax.boxplot([g if len(g) else [np.nan] for g in groups], positions=range(len(order)), widths=0.5,
                   showfliers=False, medianprops={"color": "0.3"})
        sns.stripplot(data=part, x=by, y="_v", order=order, ax=ax, size=4, jitter=0.15,
                      color=sns.color_palette(_PALETTE)[0])
        ax.set_xticks(range(len(order)), order)
        ax.set_title(mode.capitalize())
        ax.set_xlabel(by.replace("_", " "))
        ax.set_ylabel(f"{_METRIC_LABEL.get(metric, metric)} per note (%)")
        ax.set_ylim(-5, 105)
    fig.suptitle(title or f"{_METRIC_LABEL.get(metric, metric)} per note")
    return fig


def plot_error_distribution(dist: pd.DataFrame, group: str = "method", *,
                            title: str = "Error types (rule-assigned, heuristic)") -> Figure:
    """Share of each error type per group (Figure 4); input from ``error_distribution``."""
    if dist.empty:
        return _no_rows(title)
    dist = _require(dist, [group, "error_type", "share"], "plot_error_distribution")
    data = dist.assign(share_pct=100 * dist["share"])
    types = list(dict.fromkeys(data["error_type"]))
    fig, (ax,) = _figure(width=max(5.0, 1.1 * len(types)))
    sns.barplot(data=data, x="error_type", y="share_pct", hue=group, order=types, ax=ax, palette=_PALETTE,
                errorbar=None)
    ax.set_xticks(range(len(types)), [t.replace("_", "\n") for t in types])
    ax.set_xlabel("")
    ax.set_ylabel("share of errors (%)")
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, title=group)
    ax.set_title(title)
    return fig


def plot_ablation(df: pd.DataFrame, metric: str = "f1", *, baseline: str | None = None,
                  title: str = "Ablations") -> Figure:
    """Horizontal bars of ``metric`` per variant (Tables 3-5 / 11), optional CI and a
    dashed line at the ``baseline`` variant's value.
    """
    if df.empty:
        return _no_rows(title)
    df = _require(df, ["variant", metric], "plot_ablation")
    if "mode" in df.columns and _modes_identical(df.rename(columns={metric: "f1"}) if metric != "f1" else df,
                                                 "variant"):
        df = df[df["mode"] == "lenient"]  # harsh == lenient: one bar says it all
        title = f"{title} (harsh = lenient)"
    hue = "mode" if "mode" in df.columns and df["mode"].nunique() > 1 else None
    variants = list(dict.fromkeys(df["variant"]))
    fig, (ax,) = _figure(width=6.0, height=0.45 * len(variants) * (1 + bool(hue)) + 1.2)
    data = df.assign(_v=100 * df[metric])
    sns.barplot(data=data, y="variant", x="_v", hue=hue, order=variants, ax=ax, orient="h",
                palette=_PALETTE if hue else None, color=None if hue else sns.color_palette(_PALETTE)[0],
                errorbar=None)
    lo, hi = f"{metric}_low", f"{metric}_high"
    if not hue and {lo, hi} <= set(df.columns) and ((df[hi] - df[lo]).abs() > 1e-9).any():
        mid = data.set_index("variant").loc[variants]
        ax.errorbar(mid["_v"], np.arange(len(variants)),
                    xerr=[mid["_v"] - 100 * mid[lo], 100 * mid[hi] - mid["_v"]], fmt="none", ecolor="black",
                    capsize=3)
    if baseline is not None and baseline in variants:
        ax.axvline(float(data.loc[data["variant"] == baseline, "_v"].iloc[0]), ls="--", color="grey", lw=1)
    for container in ax.containers:
        if hasattr(container, "patches"):
            ax.bar_label(container, fmt="%.1f", fontsize=7, padding=2)
    ax.set_xlabel(f"{_METRIC_LABEL.get(metric, metric)} (%)")
    ax.set_ylabel("")
    ax.set_xlim(0, 105)
    if ax.get_legend() is not None:  # beside the plot, never over a bar
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, title=hue)
    ax.set_title(title)
    return fig


def plot_stacked_shares(df: pd.DataFrame, parts: Sequence[str], *, title: str = "") -> Figure:
    """One horizontal 100% bar per row of ``df`` split into ``parts`` (count columns), e.g.
    column inconsistency vs missing evidence per note type (Figure 8,
    ``ehrlib.corpus.stats.column_vs_missing``).
    """
    missing = [p for p in parts if p not in df.columns]
    if missing:
        raise ValueError(f"plot_stacked_shares: missing column(s) {missing}; got {list(df.columns)}")
    counts = df[list(parts)].astype(float)
    shares = 100 * counts.div(counts.sum(axis=1).replace(0, np.nan), axis=0).fillna(0)
    fig, (ax,) = _figure(width=6.0, height=0.5 * len(shares) + 1.4)
    left = np.zeros(len(shares))
    labels = [str(i) for i in shares.index]
    for part, color in zip(parts, sns.color_palette(_PALETTE, len(parts)), strict=False):
        bars = ax.barh(labels, shares[part].to_numpy(), left=left, color=color, label=part)
        ax.bar_label(bars, labels=[f"{v:.1f}%" if v >= 5 else "" for v in shares[part]], label_type="center",
                     fontsize=7)
        left += shares[part].to_numpy()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share (%)")
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title(title)
    return fig


def plot_table(df: pd.DataFrame, *, title: str = "", float_format: str = "{:.2f}") -> Figure:
    """A DataFrame drawn as a table figure (Table 1 style corpus statistics); a named
    index is drawn as the first column.
    """
    if df.index.name is not None:
        df = df.reset_index()
    cells = [[float_format.format(v) if isinstance(v, (float, np.floating)) else str(v) for v in row]
             for row in df.itertuples(index=False)]
    fig, (ax,) = _figure(width=max(4.0, 1.3 * len(df.columns)), height=0.35 * (len(df) + 2) + 0.4)
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=[str(c).replace("_", " ") for c in df.columns], loc="center",
                     cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1, 1.3)
    for (r, _), cell in table.get_celld().items():
        if r == 0:
            cell.set_text_props(weight="bold")
    ax.set_title(title)
    return fig


def _trace_layout(nodes: Sequence[str]) -> dict[str, tuple[float, float]]:
    tools = [t for t in _TOOL_ORDER if t in nodes] + sorted(n for n in nodes if n not in _TOOL_ORDER
                                                             and n not in (START, END))
    pos = {n: (1.3 * float(np.cos(a)), float(np.sin(a)))
           for n, a in zip(tools, np.linspace(np.pi * 0.85, -np.pi * 0.85, max(len(tools), 1)), strict=False)}
    pos[START], pos[END] = (-2.1, 0.0), (2.1, 0.0)
    return pos


def plot_trace_graphs(graphs: Mapping[str, nx.DiGraph], *, title: str = "Tool usage traces",
                      min_share: float = 0.0) -> Figure:
    """Side-by-side path-frequency graphs (Figure 5 / 31): edge width ∝ transition count.

    All panels share one layout (tools on an arc in category order, START left, END
    right) so annotators and models can be compared at a glance. ``min_share`` hides
    transitions rarer than that share of a graph's total weight.
    """
    all_nodes = sorted({n for g in graphs.values() for n in g.nodes})
    pos = _trace_layout(all_nodes)
    fig, axes = _figure(len(graphs), width=7.0, height=5.6)
    cat_colors = dict(zip(["alignment", "profiling", "temporal", "criterion", "other", "endpoint"],
                          sns.color_palette(_PALETTE, 6), strict=False))
    for ax, (name, g) in zip(axes, graphs.items(), strict=False):
        total = sum(w for _, _, w in g.edges(data="weight")) or 1
        edges = [(a, b) for a, b, w in g.edges(data="weight") if w / total >= min_share]
        widths = [0.5 + 8 * g[a][b]["weight"] / total for a, b in edges]
        nx.draw_networkx_nodes(g, pos, ax=ax, node_size=[60 + 6 * min(g.nodes[n].get("count", 1), 40)
                                                          for n in g.nodes],
                               node_color=[cat_colors.get(g.nodes[n].get("category", "other"), "grey")
                                           for n in g.nodes])
        nx.draw_networkx_edges(g, pos, ax=ax, edgelist=edges, width=widths, alpha=0.6, arrows=True,
                               arrowsize=8, connectionstyle="arc3,rad=0.15", node_size=200)
        # counts on the heavy transitions only, so the figure stays readable
        heavy = {(a, b): g[a][b]["weight"] for a, b in edges if g[a][b]["weight"] / total >= 0.08}
        nx.draw_networkx_edge_labels(g, pos, ax=ax, edge_labels=heavy, font_size=7, label_pos=0.5,
                                     connectionstyle="arc3,rad=0.15", bbox={"alpha": 0.6, "lw": 0, "fc": "white"})
        below = {n: (x, y - 0.2) for n, (x, y) in pos.items()}
        nx.draw_networkx_labels(g, below, ax=ax, labels={n: _wrap_tool(n) for n in g.nodes}, font_size=7,
                                bbox={"alpha": 0.8, "lw": 0, "fc": "white", "pad": 0.5})
        ax.set_title(f"{name} ({g.graph.get('n_paths', 0)} paths, {g.number_of_edges()} transitions)")
        ax.axis("off")
        ax.set_xlim(-2.5, 2.5)
        ax.set_ylim(-1.35, 1.15)
    used = {g.nodes[n].get("category", "other") for g in graphs.values() for n in g.nodes}
    handles = [Line2D([], [], marker="o", ls="", color=c, markersize=8, label=k)
               for k, c in cat_colors.items() if k in used]
    handles.append(Line2D([], [], color="grey", lw=3, alpha=0.6, label="edge width: share of transitions"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7, frameon=False,
               title="tool category")
    fig.suptitle(title)
    return fig


def _wrap_tool(name: str) -> str:
    """A tool name on at most two short lines ('Get Item / Status History')."""
    words = name.replace("_", " ").split()
    if len(words) <= 2:
        return " ".join(words)
    half = (len(words) + 1) // 2
    return " ".join(words[:half]) + "\n" + " ".join(words[half:])


def plot_group_sizes(sizes: pd.DataFrame, *, title: str = "Ontology groups") -> Figure:
    """Items per ontology group (horizontal bars, log scale: groups span orders of
    magnitude); input from ``ehrlib.analysis.ontology_views.group_sizes``.
    """
    sizes = _require(sizes, ["group", "n_items", "n_subgroups"], "plot_group_sizes")
    data = sizes.sort_values("n_items", ascending=True)
    fig, (ax,) = _figure(width=6.5, height=0.35 * len(data) + 1.4)
    y = np.arange(len(data))
    labels = [f"{n} item{'s' * (n != 1)} · {k} subgroup{'s' * (k != 1)}"
              for n, k in zip(data["n_items"], data["n_subgroups"], strict=False)]
    items = data["n_items"].to_numpy()
    ax.barh(y, np.where(items > 0, items, np.nan), color=sns.color_palette(_PALETTE)[0])
    for yi, n, text in zip(y, items, labels, strict=False):  # an empty group has no bar (log scale), only its label
        ax.text(max(n, 1) * 1.15, yi, text, va="center", fontsize=7)
    ax.set_yticks(y, data["group"].astype(str))
    ax.set_ylim(-0.7, len(data) - 0.3)
    ax.set_xscale("log")
    ax.set_xlim(0.8, data["n_items"].max() * 12)
    ax.set_xlabel("items (log scale)")
    ax.set_title(title)
    return fig


def plot_dataset_scores(table: pd.DataFrame, *, label: str = "dataset",
                        title: str = "Scores per dataset") -> Figure:
    """F1 (%) per dataset and judge mode as grouped horizontal bars (paper Tables 13-14 as a
    figure); one bar per dataset when the two modes agree. Input: ``label``, mode, f1, n_notes.
    """
    table = _require(table, [label, "mode", "f1", "n_notes"], "plot_dataset_scores")
    same = _modes_identical(table, label)
    data = table[table["mode"] == "lenient"] if same else table
    names = list(dict.fromkeys(data[label]))
    hue = None if same else "mode"
    fig, (ax,) = _figure(width=6.5, height=0.55 * len(names) * (1 + bool(hue)) + 1.4)
    sns.barplot(data=data.assign(_v=100 * data["f1"]), y=label, x="_v", hue=hue, order=names, ax=ax, orient="h",
                palette=_PALETTE if hue else None, color=None if hue else sns.color_palette(_PALETTE)[0],
                errorbar=None)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.1f", fontsize=7, padding=2)
    ax.set_yticks(range(len(names)), [f"{n}\n(n={int(data.loc[data[label] == n, 'n_notes'].iloc[0])} notes)"
                                      for n in names])
    ax.set_xlim(0, 105)
    ax.set_xlabel("F1 (%), " + ("harsh = lenient" if same else "per judge mode"))
    ax.set_ylabel("")
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    ax.set_title(title)
    return fig


def _ceiling_segments(ax: Any, table: pd.DataFrame, label: str, hue: str, names: Sequence[str], column: str,
                      note: str) -> None:
    """A hatched outline from each bar's end to its row's ``column`` value: the headroom
    (bars come per hue level, in ``names`` order); the legend gains one entry for it.
    """
    values = pd.to_numeric(table[column], errors="coerce")
    levels = list(dict.fromkeys(table[hue]))
    drawn = False
    for level, container in zip(levels, ax.containers, strict=False):
        for name, patch in zip(names, container.patches, strict=False):
            v = values[(table[label] == name) & (table[hue] == level)].dropna()
            if len(v) and 100 * float(v.iloc[0]) > patch.get_width():
                ax.barh(patch.get_y() + patch.get_height() / 2, 100 * float(v.iloc[0]) - patch.get_width(),
                        left=patch.get_width(), height=patch.get_height(), color="none", edgecolor="0.35",
                        hatch="////", linewidth=0.6)
                drawn = True
    if drawn:
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles + [Patch(facecolor="none", edgecolor="0.35", hatch="////")], labels + [note])


def plot_method_scores(table: pd.DataFrame, *, label: str = "corpus", hue: str = "method",
                       marked: Sequence[str] = (), mark_note: str = "", ceiling: str | None = None,
                       ceiling_note: str = "ceiling",
                       title: str = "F1 per corpus and method") -> Figure:
    """F1 (%) per corpus as horizontal bars, one per method (``hue``), so the gap between a
    method and its baseline reads off each row. Corpora named in ``marked`` get a star
    and ``mark_note`` says what the star means (e.g. a set scored only once). A
    ``ceiling`` column (F1 in [0, 1], empty where it does not apply) extends the bar it
    belongs to with a hatched outline, ``ceiling_note`` in the legend: how far it could go.
    Input: ``label``, ``hue``, f1, n_notes (one row per corpus and method).
    """
    table = _require(table, [label, hue, "f1", "n_notes"], "plot_method_scores")
    names = list(dict.fromkeys(table[label]))
    marked = [n for n in marked if n in names]
    fig, (ax,) = _figure(width=7.0, height=0.3 * len(names) * table[hue].nunique() + 1.4)
    sns.barplot(data=table.assign(_v=100 * table["f1"]), y=label, x="_v", hue=hue, order=names, ax=ax, orient="h",
                palette=_PALETTE, errorbar=None)
    with_ceiling = ceiling is not None and ceiling in table.columns
    for container in list(ax.containers):
        # inside the bar when a ceiling segment may start at its end
        ax.bar_label(container, fmt="%.1f", fontsize=7, padding=-22 if with_ceiling else 2,
                     color="white" if with_ceiling else None)
    if with_ceiling:
        _ceiling_segments(ax, table, label, hue, names, str(ceiling), ceiling_note)
    notes = {n: int(table.loc[table[label] == n, "n_notes"].iloc[0]) for n in names}
    ax.set_yticks(range(len(names)), [f"{'★ ' if n in marked else ''}{n}\n({notes[n]} notes)" for n in names])
    ax.set_xlim(0, 105)
    ax.set_xlabel("F1 (%)" + (f"   ★ {mark_note}" if marked and mark_note else ""))
    ax.set_ylabel("")
    sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=7, title=None, frameon=False)
    ax.set_title(title)
    return fig
