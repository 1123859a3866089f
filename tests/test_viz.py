"""Plot functions return Figures with the right number of bars/cells/nodes; savefig; viewer."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from ehrlib.analysis import transition_graph  # noqa: E402
from ehrlib.judge import evaluate_run  # noqa: E402
from ehrlib.viz import (  # noqa: E402
    findings_html,
    plot_ablation,
    plot_category_counts,
    plot_error_distribution,
    plot_main_results,
    plot_metric_heatmap,
    plot_share_heatmap,
    plot_table,
    plot_trace_graphs,
    savefig,
    write_findings_viewer,
)
from ehrlib.viz.page_names import page_name  # noqa: E402


def _bars(ax) -> list[Rectangle]:
    from matplotlib.container import BarContainer

    return [p for c in ax.containers if isinstance(c, BarContainer) for p in c.patches]


def _summary() -> pd.DataFrame:
    rows = []
    for method, base in (("inspector", 0.7), ("checkehr", 0.4)):
        for mode, shift in (("harsh", -0.1), ("lenient", 0.0)):
            rows.append({"method": method, "mode": mode, "recall": base + shift, "precision": base,
                         "f1": base + shift / 2, "f1_low": base - 0.1, "f1_high": base + 0.05})
    return pd.DataFrame(rows)


def test_main_results_bars_per_mode_and_method():
    fig = plot_main_results(_summary())
    assert isinstance(fig, Figure)
    axes = fig.axes
    assert len(axes) == 2 and axes[0].get_title() == "Lenient"
    assert [len(_bars(ax)) for ax in axes] == [6, 6]  # 2 methods x 3 metrics
    heights = sorted(round(b.get_height(), 1) for b in _bars(axes[0]))
    assert heights[-1] == 70.0
    with pytest.raises(ValueError, match="missing column"):
        plot_main_results(_summary().drop(columns="f1"))


def test_metric_heatmap_has_one_cell_per_row_and_column():
    df = pd.DataFrame([{"method": m, "mode": "harsh", "note_type": t, "f1": 0.5}
                       for m in ("a", "b") for t in ("nursing", "physician", "discharge_summary")])
    fig = plot_metric_heatmap(df, "note_type", order=["discharge_summary", "physician", "nursing"])
    ax = fig.axes[0]
    assert len(ax.texts) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == ["discharge_summary", "physician", "nursing"]


def test_corpus_figures():
    types = pd.DataFrame({"type": ["time", "value", "other"], "n": [5, 3, 2]})
    fig = plot_category_counts(types, "type")
    assert len(_bars(fig.axes[0])) == 3
    assert fig.axes[0].texts or fig.axes[0].containers[0].datavalues[0] == pytest.approx(50.0)
    kinds = pd.DataFrame({"note_type": ["nursing", "nursing", "physician", "physician"],
                          "kind": ["column", "missing"] * 2, "n": [3, 4, 6, 4]})
    fig = plot_category_counts(kinds, "note_type", hue="kind")
    assert len(_bars(fig.axes[0])) == 4
    heat = plot_share_heatmap(kinds, "note_type", "kind")
    assert len(heat.axes[0].texts) == 4
    table = plot_table(pd.DataFrame({"note type": ["all"], "notes": [3], "tokens/note": [12.5]}))
    assert isinstance(table, Figure)


def test_trace_graph_figure_has_one_node_per_tool():
    human = transition_graph([("Lexical_Search", "Get_Item_Value_History")] * 3)
    model = transition_graph([("Semantic_Search", "Lexical_Search", "Get_Item_Value_History"),
                              ("Get_Item_Value_Distribution",)])
    fig = plot_trace_graphs({"Annotators": human, "Model": model})
    assert len(fig.axes) == 2
    from matplotlib.collections import PathCollection

    sizes = [len(c.get_offsets()) for ax in fig.axes for c in ax.collections if isinstance(c, PathCollection)]
    assert sizes == [4, 6]  # START, END + 2 tools; START, END + 4 tools


def test_error_and_ablation_figures():
    dist = pd.DataFrame({"method": ["a", "a", "b", "b"], "error_type": ["premature_conclusion", "tool_usage"] * 2,
                         "share": [0.6, 0.4, 0.5, 0.5]})
    assert len(_bars(plot_error_distribution(dist).axes[0])) == 4
    abl = pd.DataFrame({"variant": ["full", "no segmentation", "no scope filter"], "f1": [0.7, 0.6, 0.65],
                        "f1_low": [0.6, 0.5, 0.55], "f1_high": [0.8, 0.7, 0.75]})
    fig = plot_ablation(abl, baseline="full")
    assert len(_bars(fig.axes[0])) == 3


def test_savefig_prefix_and_formats(tmp_path):
    fig = plot_table(pd.DataFrame({"a": [1]}))
    paths = savefig(fig, "table1", prefix=2, out_dir=tmp_path)
    assert [p.name for p in paths] == ["02_table1.png", "02_table1.svg"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    with pytest.raises(ValueError):
        savefig(fig, "bad name/..", out_dir=tmp_path)


def test_findings_viewer(tiny_run):
    run, _ = tiny_run
    evaluate_run(run, progress=False)
    paths = write_findings_viewer(run, mode="harsh")
    # note pages in the index's order, then the findings page and the index
    assert [p.name for p in paths] == [page_name("n2"), page_name("n1"), "findings.html", "index.html"]
    page = (run / "viewer" / page_name("n1")).read_text()
    # the method's verdict colours the text; the judge is a badge: WBC right, HR wrong label
    assert 'class="v-consistent"' in page and 'data-judge="correct"' in page and 'data-judge="incorrect"' in page
    assert "missed" in page and "afebrile" in page  # afebrile unmatched under harsh
    assert "Semantic_Search" in page and "HR 130 charted" in page


def test_findings_html_escapes_note_text():
    from ehrlib.corpus.records import Note, Prediction

    note = Note("x", 1, 1, "nursing", "2150-01-01", "<script>alert(1)</script> HR 80")
    page = findings_html(note, [(0, Prediction("r", "x", 0, "HR", "consistent", reason="a<b"))], [], [])
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert 'title="consistent: a&lt;b"' in page and '<a href="#p0" style="color:#212121;text-decoration:none">HR</a>' \
        in page


def test_corpus_stats_shaped_frames_plot_as_they_are():
    """ehrlib.corpus.stats returns frames indexed by type / note type (wide for Figures 8-9)."""
    from ehrlib.viz import plot_stacked_shares

    fig6 = pd.DataFrame({"count": [5, 3, 0], "share": [0.625, 0.375, 0.0]},
                        index=pd.Index(["time", "value", "trend"], name="type"))
    assert len(_bars(plot_category_counts(fig6, "type", value="count").axes[0])) == 3
    fig8 = pd.DataFrame({"column": [3, 6, 9], "missing": [4, 4, 8]},
                        index=pd.Index(["nursing", "physician", "total"], name="note_type"))
    ax = plot_stacked_shares(fig8, ["column", "missing"]).axes[0]
    bars = _bars(ax)
    assert len(bars) == 6 and bars[0].get_width() == pytest.approx(100 * 3 / 7)
    fig9 = pd.DataFrame([[2, 1], [0, 0]], index=pd.Index(["nursing", "physician"], name="note_type"),
                        columns=pd.Index(["time", "value"], name="type"))
    heat = plot_share_heatmap(fig9).axes[0]
    assert [t.get_text() for t in heat.texts] == ["66.7", "33.3"]  # the empty row stays blank
    table = plot_table(fig8)
    assert "note type" in [c.get_text().get_text() for c in table.axes[0].tables[0].get_celld().values()]


def test_viewer_css_is_scoped_so_it_can_be_shown_inside_jupyter():
    import re

    from ehrlib.viz.viewer import _CSS

    selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{", _CSS) for sel in rule.split(",")]
    assert selectors and all(sel.startswith(".ehrlib-viewer") for sel in selectors), selectors


def test_note_scores_figure_has_one_dot_per_scored_note():
    from matplotlib.collections import PathCollection

    from ehrlib.viz import plot_note_scores

    scores = pd.DataFrame({"mode": ["harsh"] * 5, "note_type": ["nursing", "nursing", "physician", "physician",
                                                                 "physician"],
                           "f1": [0.5, 0.7, 0.9, None, 0.8]})
    ax = plot_note_scores(scores).axes[0]
    dots = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    assert dots == 4  # the note without gold (no F1) is left out


def test_main_results_draws_one_panel_when_harsh_equals_lenient():
    same = _summary().assign(recall=0.5, f1=0.5, precision=0.5, f1_low=0.4, f1_high=0.6)
    fig = plot_main_results(same)
    assert len(fig.axes) == 1 and "identical" in fig.axes[0].get_title()
    assert len(plot_main_results(_summary()).axes) == 2


def test_main_results_has_no_zero_width_error_bars():
    flat = _summary().assign(f1_low=lambda d: d["f1"], f1_high=lambda d: d["f1"])
    fig = plot_main_results(flat)
    assert all(not ax.collections for ax in fig.axes)  # errorbar draws a LineCollection
    assert any(ax.collections for ax in plot_main_results(_summary()).axes)


def test_counts_on_a_log_scale_and_group_and_dataset_figures():
    from ehrlib.viz import plot_category_counts, plot_dataset_scores, plot_group_sizes

    rows = pd.DataFrame({"table": ["admissions", "chartevents"], "rows": [12, 40000]})
    assert plot_category_counts(rows, "table", value="rows", percent=False, log=True).axes[0].get_yscale() == "log"
    sizes = pd.DataFrame({"group": ["A", "B"], "n_items": [3, 3000], "n_subgroups": [1, 4]})
    assert plot_group_sizes(sizes).axes[0].get_xscale() == "log"
    scores = pd.DataFrame({"dataset": ["x", "x", "y", "y"], "mode": ["harsh", "lenient"] * 2,
                           "f1": [0.5, 0.5, 0.7, 0.7], "n_notes": [3, 3, 4, 4]})
    fig = plot_dataset_scores(scores)
    assert len(_bars(fig.axes[0])) == 2  # modes agree: one bar per dataset
    assert len(_bars(plot_dataset_scores(scores.assign(f1=[0.4, 0.5, 0.6, 0.7])).axes[0])) == 4


def test_identical_modes_collapse_in_ablation_and_heatmap_figures():
    from ehrlib.viz import plot_ablation, plot_metric_heatmap

    same = pd.DataFrame({"variant": ["full", "full", "cut", "cut"], "mode": ["harsh", "lenient"] * 2,
                         "f1": [0.8, 0.8, 0.6, 0.6]})
    fig = plot_ablation(same, baseline="full")
    assert len(_bars(fig.axes[0])) == 2 and "harsh = lenient" in fig.axes[0].get_title()
    assert len(_bars(plot_ablation(same.assign(f1=[0.7, 0.8, 0.5, 0.6])).axes[0])) == 4
    cells = pd.DataFrame({"method": ["m"] * 4, "mode": ["harsh", "lenient"] * 2, "note_type": ["a", "a", "b", "b"],
                          "f1": [0.5, 0.5, 0.9, 0.9], "n_notes": [3, 3, 4, 4]})
    heat = plot_metric_heatmap(cells, "note_type", n="n_notes")
    labels = [t.get_text() for t in heat.axes[0].get_yticklabels()]
    assert labels == ["m / harsh = lenient"]
    assert any("n=4" in t.get_text() for t in heat.axes[0].texts)


def test_method_scores_draws_one_bar_per_corpus_and_method_and_stars_only_present_sets():
    import pandas as pd

    from ehrlib.viz import plot_method_scores

    table = pd.DataFrame({"corpus": ["a", "a", "b", "b"], "method": ["x", "y", "x", "y"],
                          "f1": [0.9, 0.6, 0.7, 0.5], "n_notes": [3, 3, 4, 4]})
    fig = plot_method_scores(table, marked=("b", "absent"), mark_note="scored once")
    ax = fig.axes[0]
    assert len([p for c in ax.containers for p in c]) == 4
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[0].startswith("a\n") and ticks[1].startswith("★ b")
    assert "scored once" in ax.get_xlabel()
    unmarked = plot_method_scores(table, marked=("absent",), mark_note="scored once")
    assert "scored once" not in unmarked.axes[0].get_xlabel()


def test_method_scores_ceiling_extends_only_the_bars_that_have_one():
    from ehrlib.viz import plot_method_scores

    table = pd.DataFrame({"corpus": ["a", "a", "b", "b"], "method": ["x", "y", "x", "y"],
                          "f1": [0.9, 0.6, 0.7, 0.5], "n_notes": [3, 3, 4, 4],
                          "ceiling": [0.95, "", 0.8, ""]})
    ax = plot_method_scores(table, ceiling="ceiling", ceiling_note="headroom").axes[0]
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert sorted(round(p.get_x() + p.get_width(), 6) for p in hatched) == [80.0, 95.0]
    assert "headroom" in [t.get_text() for t in ax.get_legend().get_texts()]
    plain = plot_method_scores(table.drop(columns="ceiling")).axes[0]
    assert not [p for p in plain.patches if p.get_hatch()]


def test_plot_figures_display_as_png_in_ipython():
    """What a notebook cell ending in ``fig`` shows: the picture, and the titles as text."""
    from IPython.core.formatters import DisplayFormatter

    fig = plot_category_counts(pd.DataFrame({"table": ["a", "b"], "rows": [3, 30]}), "table", value="rows",
                               percent=False, title="Rows per table")
    data, _ = DisplayFormatter().format(fig)
    assert data["image/png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert data["text/plain"] == "[figure: Rows per table]"
    data, _ = DisplayFormatter().format(fig, exclude={"image/png"})
    assert set(data) == {"text/plain"}
    empty = plot_main_results(pd.DataFrame(), title="Main results")
    assert DisplayFormatter().format(empty)[0]["text/plain"] == "[figure: Main results]"
