"""``ehrlib report``: every table and figure of one run, regenerated from its files.

Reads ``runs/<run_id>/`` (predictions, tool calls, judgements; judges with the matcher
first if the chosen judge has not run) and writes into the run directory:

- ``metrics*.csv/.md`` (see ``ehrlib.judge``), ``metrics_ci.csv/.md`` (bootstrap over notes),
- ``errors.csv`` + ``error_types.csv/.md`` (heuristic taxonomy, ``ehrlib.analysis.taxonomy``),
- ``trace_paths_model.csv/.md``, ``trace_paths_gold.csv/.md``, ``trace_dispersion.csv/.md``,
- ``figures/*.png|svg`` (also copied to the project ``figures/`` folder, prefixed with
  the run id), ``viewer/`` (per-note HTML findings), and ``report.md`` linking it all;
- ``findings.jsonl`` / ``findings.csv`` (and ``findings.parquet`` with pyarrow): one row
  per finding, the versioned schema of :mod:`ehrlib.findings` (docs/findings_schema.md);
  ``notes_summary.csv`` (per note: status and failure, findings by verdict, line
  coverage) and ``findings_by_confidence.csv`` (the same finding rows in review order:
  inconsistent first, most confident first), for labelled and unlabelled runs alike.
"""
from __future__ import annotations

import importlib.util
import io
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ehrlib.analysis import (
    bootstrap_ci,
    classify_errors,
    compare_dispersion,
    error_distribution,
    path_frequencies,
    paths_from_gold,
    paths_from_tool_calls,
    read_tool_calls,
    transition_graph,
)
from ehrlib.analysis.error_report import backbone_errors, paper_error_distribution
from ehrlib.corpus.io import write_text
from ehrlib.errors import ConfigError
from ehrlib.filemodes import as_umask_allows
from ehrlib.findings import Findings
from ehrlib.judge.evaluate import evaluate_run, load_run, metric_tables, read_judgements, write_metric_tables
from ehrlib.judge.metrics import INCONSISTENCY_GROUPS
from ehrlib.report.views import compare_runs
from ehrlib.result_tables import csv_text, markdown_table, markdown_text, paper_table, write_table

__all__ = ["ReportResult", "method_label", "build_report", "build_comparison", "notes_summary", "run_findings"]


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What ``build_report`` wrote for one run."""
    run_dir: Path
    tables: tuple[Path, ...] = ()
    figures: tuple[Path, ...] = ()
    viewer: tuple[Path, ...] = ()
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)


def write_bytes(data: bytes, path: Path) -> Path:
    """Binary twin of ``write_text``: temp file in the target folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    as_umask_allows(fd)     # mkstemp makes 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _headless() -> None:
    """Batch reports never open a window: switch to Agg unless Jupyter draws inline."""
    import matplotlib  # deferred: heavy; and the Agg backend must be chosen before pyplot loads

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")


def method_label(info: dict | pd.Series) -> str:
    """``inspector (gemini-2.5-flash)``: the method with its model when there is one."""
    method = str(info.get("method") or "run")
    model = info.get("model")
    return f"{method} ({model})" if model and not pd.isna(model) else method


def _figures(run, judge, tables, ci, dist, tool_paths, gold_paths, figure_dirs, formats) -> list[Path]:
    _headless()
    from ehrlib.viz import (  # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
        plot_error_distribution,
        plot_main_results,
        plot_metric_heatmap,
        plot_note_scores,
        plot_trace_graphs,
        savefig,
    )

    # one judge per figure: a run judged by the matcher and an LLM has two rows per mode
    mine = {name: df[df["judge"] == judge] if "judge" in df.columns else df for name, df in tables.items()}
    label = method_label(dict(run.run_info))
    summary = mine["metrics"].assign(method=label)
    if not ci.empty:
        summary = summary.merge(ci[["judge", "mode", "f1_low", "f1_high"]], on=["judge", "mode"], how="left")
    figs = {"main_results": plot_main_results(summary, title=f"Run {run.run_info['run_id']} (judge {judge})")}
    if not mine["metrics_by_note_type"].empty:
        figs["f1_by_note_type"] = plot_metric_heatmap(mine["metrics_by_note_type"].assign(method=label),
                                                      "note_type", "f1")
    if not mine["note_scores"].empty:
        figs["f1_per_note"] = plot_note_scores(mine["note_scores"])
    if not mine["metrics_by_inconsistency"].empty:
        figs["recall_by_inconsistency"] = plot_metric_heatmap(
            mine["metrics_by_inconsistency"].assign(method=label), "inconsistency", "recall",
            order=INCONSISTENCY_GROUPS)
    if not dist.empty:
        figs["error_types"] = plot_error_distribution(dist.assign(method=label + " / " + dist["mode"]))
    if len(tool_paths) or len(gold_paths):
        figs["tool_traces"] = plot_trace_graphs({"Annotators": transition_graph(gold_paths),
                                                 label: transition_graph(tool_paths)})
    paths: list[Path] = []
    (first_dir, first_tag), *copies = figure_dirs
    for name, fig in figs.items():
        saved = savefig(fig, name, prefix=first_tag, out_dir=first_dir, formats=formats)
        paths += saved
        for out_dir, tag in copies:  # copy the files: rendering again costs ~1 s per file
            for src in saved:
                stem = f"{tag}_{src.name}" if tag else src.name
                paths.append(write_bytes(src.read_bytes(), Path(out_dir) / stem))
    return paths


def build_report(run_dir: str | os.PathLike[str], corpus_dir: str | os.PathLike[str] | None = None, *,
                 judge: str = "matcher", figures_dir: str | os.PathLike[str] | None = None,
                 n_bootstrap: int = 1000, seed: int = 0, viewer: bool = True,
                 formats: Sequence[str] = ("png", "svg"), progress: bool = True) -> ReportResult:
    """Write all tables, figures and the findings viewer of one run (see module docs).

    A run over an unlabelled corpus (no gold.jsonl) has nothing to judge: its report is
    the findings per note, the model's tool paths and the viewer (see ``_findings_report``).
    Figures go to ``<run>/figures/`` (and a copy to ``figures_dir`` when given); no
    ``formats`` means no figure files.
    """
    run = load_run(run_dir, corpus_dir)
    if not run.labelled:
        return _findings_report(run, viewer=viewer)
    judgements = read_judgements(run.run_dir)
    if not any(j.judge == judge for j in judgements):
        if judge != "matcher":
            raise ConfigError(f"run {run.run_dir.name} has no judgements by {judge!r}; "
                              f"run `ehrlib judge --run {run.run_dir} --judge {judge}` first")
        evaluate_run(run.run_dir, corpus_dir, judge="matcher", progress=progress)
        judgements = read_judgements(run.run_dir)
    tables = metric_tables(run, judgements)
    written = write_metric_tables(tables, run.run_dir) + _finding_exports(run)
    mine = [j for j in judgements if j.judge == judge]
    scores = tables["note_scores"]
    ci = bootstrap_ci(scores[scores["judge"] == judge], "f1", n_boot=n_bootstrap, seed=seed)
    written.append(write_table(ci, run.run_dir / "metrics_ci.csv"))
    errors = classify_errors(mine, run.gold, run.predictions)
    written.append(write_table(errors, run.run_dir / "errors.csv"))
    dist = error_distribution(errors)
    written.append(write_table(dist, run.run_dir / "error_types.csv"))
    tool_paths = list(paths_from_tool_calls(read_tool_calls(run.run_dir))["path"])
    gold_paths = [p for p in paths_from_gold(run.gold)["path"] if p]
    written.append(write_table(path_frequencies(tool_paths, top=30), run.run_dir / "trace_paths_model.csv"))
    written.append(write_table(path_frequencies(gold_paths, top=30), run.run_dir / "trace_paths_gold.csv"))
    dispersion = compare_dispersion({"annotators": gold_paths, method_label(dict(run.run_info)): tool_paths})
    written.append(write_table(dispersion, run.run_dir / "trace_dispersion.csv"))
    run_id = str(run.run_info["run_id"])
    figure_dirs: list[tuple[Path, str | None]] = [(run.run_dir / "figures", None)]
    if figures_dir is not None:
        figure_dirs.append((Path(figures_dir), run_id))
    figures = (_figures(run, judge, tables, ci, dist, tool_paths, gold_paths, figure_dirs, tuple(formats))
               if formats else [])
    pages: list[Path] = []
    if viewer:
        # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
        from ehrlib.viz.viewer_site import write_findings_viewer

        pages = write_findings_viewer(run.run_dir, corpus_dir=run.corpus_dir, judge=judge, mode="lenient")
    summary = tables["metrics"][tables["metrics"]["judge"] == judge]
    cols = ["judge", "mode", "n_notes", "recall", "precision", "f1", "micro_f1", "n_unparsed"]
    title, method, corpus = _heading(run)
    index = [f"# Report of run {title}\n", f"Method: {method}; judge: {markdown_text(judge)}; "
             f"corpus: {corpus}; {len(run.notes)} notes, {len(run.gold)} gold entities, "
             f"{len(run.predictions)} predictions.\n", "## Summary (mean over notes)\n", markdown_table(summary[cols]),
             "\n## F1 with bootstrap 95% interval over notes\n", markdown_table(ci),
             "\n## Error types (rule-assigned heuristic, see ehrlib.analysis.taxonomy)\n",
             markdown_table(dist[dist["n"] > 0]) if not dist.empty else "(no errors)\n",
             "\n## Tool-path dispersion: annotators vs model\n", markdown_table(dispersion),
             "\n## Files\n", *[f"- [{p.relative_to(run.run_dir)}]({p.relative_to(run.run_dir)})\n"
                              for p in [*written, *figures, *pages] if p.is_relative_to(run.run_dir)]]
    usage_path = run.run_dir / "usage.json"
    if usage_path.exists():
        usage = {k: v for k, v in json.loads(usage_path.read_text(encoding="utf-8")).items()
                 if isinstance(v, (int, float, str)) and k != "run_id"}
        index[-1:-1] = ["\n## LLM usage of the run\n", markdown_table(pd.DataFrame([usage]))]
    report = write_text("".join(index), run.run_dir / "report.md")
    return ReportResult(run.run_dir, (*written, report), tuple(figures), tuple(pages), summary.reset_index(drop=True))


#: columns of notes_summary.csv after the verdict counts
_NOTE_COLUMNS = ("total", "status", "failure", "lines_checked", "lines_out_of_scope", "lines_nothing_found", "page")


def _heading(run) -> tuple[str, str, str]:
    """Run id, method label and corpus folder, escaped for Markdown (a run id may hold ``<``)."""
    run_id, method, corpus = run.run_info["run_id"], method_label(dict(run.run_info)), run.corpus_dir
    return markdown_text(str(run_id)), markdown_text(method), markdown_text(str(corpus))


def notes_summary(run) -> pd.DataFrame:
    """One row per note of the run in the viewer index's order (failed notes first, then
    most inconsistent): status and failure reason, findings by the method's verdict, how
    many lines were checked, out of scope or had nothing checkable, and its viewer page.
    """
    # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
    from ehrlib.viz.viewer import VERDICTS
    from ehrlib.viz.viewer_site import note_rows

    rows = [{**r, "page": f"viewer/{r['href']}"} for r in note_rows(run)]
    return pd.DataFrame(rows, columns=["note_id", "note_type", "hadm_id", *VERDICTS, *_NOTE_COLUMNS])


def findings_ranked(run, found: Findings | None = None, summary: pd.DataFrame | None = None) -> pd.DataFrame:
    """The finding rows (:func:`ehrlib.findings.finding_row`) in review order (inconsistent
    first, most confident first, no confidence last; ties by the notes' index order), each
    with its ``rank`` and its viewer ``page`` anchor.
    """
    from ehrlib.viz.page_names import page_name  # deferred: see notes_summary
    from ehrlib.viz.ranking import rank_key

    found = run_findings(run) if found is None else found
    order = {nid: k for k, nid in enumerate((notes_summary(run) if summary is None else summary)["note_id"])}
    items = sorted(enumerate(found.predictions), key=lambda ip: (*rank_key(ip[1]), order.get(ip[1].note_id, 1 << 30)))
    frame = found.to_frame().iloc[[i for i, _ in items]].reset_index(drop=True)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    frame["page"] = [f"viewer/{page_name(p.note_id)}#p{i}" for i, p in items]  # the viewer's anchor: the index
    return frame


def write_finding_exports(findings: Findings, folder: str | os.PathLike[str]) -> list[Path]:
    """``findings.jsonl`` and ``findings.csv`` in ``folder`` (CSV cells formula-safe), and
    ``findings.parquet`` when pyarrow is installed; returns the paths written.
    """
    folder = Path(folder)
    frame = findings.to_frame()
    paths = [findings.to_jsonl(folder / "findings.jsonl"), write_text(csv_text(frame), folder / "findings.csv")]
    if importlib.util.find_spec("pyarrow") is None:
        (folder / "findings.parquet").unlink(missing_ok=True)  # never leave a stale one beside fresh CSV
        return paths
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    paths.append(write_bytes(buf.getvalue(), folder / "findings.parquet"))
    return paths


def run_findings(run) -> Findings:
    """The run's findings (each note's last attempt), one row each, in the run's order."""
    return Findings.of(run.predictions, run.notes)


def _finding_exports(run, summary: pd.DataFrame | None = None) -> list[Path]:
    """Per finding (findings.jsonl/.csv/.parquet, findings_by_confidence.csv) and per note (notes_summary.csv)."""
    found = run_findings(run)
    summary = notes_summary(run) if summary is None else summary
    return [*write_finding_exports(found, run.run_dir), write_table(summary, run.run_dir / "notes_summary.csv"),
            write_table(findings_ranked(run, found, summary), run.run_dir / "findings_by_confidence.csv")]


def _findings_report(run, *, viewer: bool) -> ReportResult:
    """The report of an unlabelled run: findings per note, tool paths, the viewer; no metrics."""
    findings = notes_summary(run)
    written = _finding_exports(run, findings)
    tool_paths = list(paths_from_tool_calls(read_tool_calls(run.run_dir))["path"])
    written.append(write_table(path_frequencies(tool_paths, top=30), run.run_dir / "trace_paths_model.csv"))
    pages: list[Path] = []
    if viewer:
        # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
        from ehrlib.viz.viewer_site import write_findings_viewer

        pages = write_findings_viewer(run.run_dir, corpus_dir=run.corpus_dir)
    from ehrlib.viz.ranking import VERDICTS  # deferred: see notes_summary

    totals = findings[[*VERDICTS, "total"]].sum().to_frame().T
    totals.insert(0, "failed notes", int((findings["status"] == "failed").sum()))
    title, method, corpus = _heading(run)
    index = [f"# Report of run {title}\n", f"Method: {method}; "
             f"corpus: {corpus} (no gold labels: findings are the method's verdicts, unjudged); "
             f"{len(run.notes)} notes, {len(run.predictions)} findings.\n",
             "## Findings by verdict\n", markdown_table(totals),
             "\n## Per note (failed first, then most inconsistent)\n", markdown_table(findings),
             "\n## Files\n", *[f"- [{p.relative_to(run.run_dir)}]({p.relative_to(run.run_dir)})\n"
                              for p in [*written, *pages] if p.is_relative_to(run.run_dir)]]
    report = write_text("".join(index), run.run_dir / "report.md")
    return ReportResult(run.run_dir, (*written, report), (), tuple(pages), totals)


def build_comparison(run_dirs: Sequence[str | os.PathLike[str]], *, judge: str = "matcher",
                     out_dir: str | os.PathLike[str] = "figures", name: str = "compare",
                     formats: Sequence[str] = ("png", "svg"), mode: str = "lenient") -> list[Path]:
    """Several judged runs side by side: ``<name>_metrics.csv/.md`` (the paper's Table 2
    layout, percent), ``<name>_main_results`` bars with F1 bootstrap intervals, and Figure 4
    per backbone: ``<name>_error_types_by_backbone`` (the five verification error types of
    ``mode``'s errors, at most 100 drawn per backbone, runs of one backbone pooled).

    Runs are labelled by method (and model); when two runs share a label (ablations of one
    method) by run id, then by folder name.
    """
    _headless()
    from ehrlib.viz import (  # deferred: ehrlib.viz loads matplotlib (heavy); batch reports pick the Agg backend first
        plot_error_distribution,
        plot_main_results,
        savefig,
    )

    infos = []
    for run_dir in run_dirs:
        manifest_path = Path(run_dir) / "manifest.json"
        manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
        infos.append((Path(run_dir), method_label(manifest), manifest.get("run_id") or Path(run_dir).name))
    for naming in ([label for _, label, _ in infos], [rid for _, _, rid in infos], [p.name for p, _, _ in infos],
                   [f"{i}:{p.name}" for i, (p, _, _) in enumerate(infos)]):
        if len(set(naming)) == len(naming):
            break
    runs = dict(zip(naming, (p for p, _, _ in infos), strict=False))
    summary = compare_runs(runs, judge=judge)
    if summary.empty:
        raise ConfigError(f"no judgements by {judge!r} in these runs; run `ehrlib judge` first")
    out = Path(out_dir)
    paths = [write_table(paper_table(summary), out / f"{name}_metrics.csv")]
    fig = plot_main_results(summary, label="variant", title=f"{len(runs)} runs, judge {judge}")
    paths += savefig(fig, "main_results", prefix=name, out_dir=out, formats=formats)
    dist = paper_error_distribution(backbone_errors(list(runs.values()), judge=judge, mode=mode))
    if not dist.empty:
        paths.append(write_table(dist, out / f"{name}_error_types_by_backbone.csv"))
        fig = plot_error_distribution(dist, group="backbone", title=f"Error types by backbone ({mode}, rule-assigned, "
                                                                      f"n={int(dist['n'].sum())})")
        paths += savefig(fig, "error_types_by_backbone", prefix=name, out_dir=out, formats=formats)
    return paths
