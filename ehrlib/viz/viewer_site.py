"""The viewer's pages for a whole run: one page per note, the findings page (every finding
across notes, :mod:`.findings_page`) and the index, written into
``<run>/viewer/`` (:func:`write_findings_viewer`), and the per-note and per-finding rows
the report exports (:func:`note_rows`, :func:`finding_rows`).

Page names come from :func:`ehrlib.viz.page_names.page_name` (safe, bounded, unique per
note id), so every note gets its own page and the index links exactly the pages written.
The index lists notes the run failed on first (a failure is never a clean note with no
findings), then the most inconsistent, ties by the highest confidence of an inconsistent
finding.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import write_text
from ehrlib.corpus.records import Prediction
from ehrlib.errors import DataError
from ehrlib.judge.evaluate import RunData, load_run, read_judgements
from ehrlib.viz.coverage import classify_lines, coverage_counts
from ehrlib.viz.evidence import EvidenceReader, EvidenceRow
from ehrlib.viz.finding_panel import COLOURS, esc, evidence_order
from ehrlib.viz.findings_page import findings_page
from ehrlib.viz.page_names import FINDINGS_PAGE, INDEX_PAGE, page_name
from ehrlib.viz.ranking import (
    INCONSISTENT,
    VERDICTS,
    calibrated,
    initial_threshold,
    method_verdict,
    rank_key,
    ranked,
    raw_verdict,
)
from ehrlib.viz.run_records import NoteRecord, read_note_records
from ehrlib.viz.threshold_controls import threshold_controls
from ehrlib.viz.time_words import describe_time
from ehrlib.viz.viewer import findings_html, page

__all__ = ["finding_rows", "index_html", "note_evidence", "note_rows", "write_findings_viewer"]


def _by_note(predictions: Sequence[Prediction]) -> dict[str, list[tuple[int, Prediction]]]:
    out: dict[str, list[tuple[int, Prediction]]] = {}
    for i, p in enumerate(predictions):
        out.setdefault(p.note_id, []).append((i, p))
    return out


def note_evidence(reader: EvidenceReader, subject_id: int,
                  predictions: Sequence[tuple[int, Prediction]]) -> dict[int, list[EvidenceRow]] | None:
    """The ``evidence`` argument of :func:`ehrlib.viz.viewer.findings_fragment`: each finding's
    rows as charted, deciding rows first; None when ``reader`` has no database (ids only).
    """
    if reader.error is not None:
        return None
    return {i: reader.rows(subject_id, evidence_order(p)) for i, p in predictions}


def note_rows(run: RunData, records: Mapping[str, NoteRecord] | None = None) -> list[dict[str, Any]]:
    """One row per note in review order: status and failure, findings per verdict,
    coverage of its lines, its page name and its inconsistent findings' confidences.
    """
    records = read_note_records(run.run_dir) if records is None else records
    by_note = _by_note(run.predictions)
    rows = []
    for order, note in enumerate(run.notes):
        preds = by_note.get(note.note_id, [])
        rec = records.get(note.note_id)
        cov = coverage_counts(classify_lines(note.lines, {min(max(p.line, 0), len(note.lines) - 1)
                                                          for _, p in preds}, rec))
        inc = [(raw_verdict(p), p.confidence, method_verdict(p)) for _, p in ranked(preds)
               if raw_verdict(p) in INCONSISTENT]
        status, failure = "ok", None
        if rec is not None and rec.failed:
            status, failure = "failed", rec.failure
        elif rec is not None and rec.stage_failures:
            status, failure = "incomplete", "; ".join(rec.stage_failures)
        row: dict[str, Any] = {
            "note_id": note.note_id, "note_type": note.note_type, "hadm_id": note.hadm_id, "status": status,
            "failure": failure, **{v: sum(1 for _, p in preds if method_verdict(p) == v) for v in VERDICTS},
            "total": len(preds), "lines_checked": cov["checked"], "lines_out_of_scope": cov["out_of_scope"],
            "lines_nothing_found": cov["nothing"], "href": page_name(note.note_id), "order": order, "inc": inc,
            "top_confidence": next((c for _, c, _ in inc if c is not None), None)}
        rows.append(row)
    rows.sort(key=lambda r: (r["status"] != "failed", -(r["contradiction"] + r["missing"]),
                             r["top_confidence"] is None, -(r["top_confidence"] or 0.0), r["order"]))
    return rows


def finding_rows(run: RunData) -> list[dict[str, Any]]:
    """One row per finding in review order (inconsistent first, most confident first,
    none last; notes in the index's order), with its page and anchor.
    """
    order = {r["note_id"]: k for k, r in enumerate(note_rows(run))}
    items = sorted(enumerate(run.predictions), key=lambda ip: (*rank_key(ip[1]), order.get(ip[1].note_id, 1 << 30)))
    return [{"rank": k, "note_id": p.note_id, "line": p.line, "entity": p.entity, "verdict": method_verdict(p),
             "raw_verdict": raw_verdict(p), "confidence": p.confidence, "abstained_from": p.abstained_from,
             "time": describe_time(p.time_basis, p.time_window), "time_basis": p.time_basis, "rule_id": p.rule_id,
             "deciding_rows": " ".join(f"{r.table}#{r.row_id}" for r in p.deciding_row_ids),
             "reason": p.reason, "page": f"{page_name(p.note_id)}#p{i}"}
            for k, (i, p) in enumerate(items, 1)]


def index_html(rows: Sequence[Mapping[str, Any]], *, title: str, subtitle: str = "", judged: bool = False,
               controls: str = "", calibrated_run: bool = False, findings_href: str | None = None) -> str:
    """The index page: one row per note with its status and counts, in the given order;
    ``controls`` the threshold control (its "remaining" column when ``calibrated_run``);
    ``findings_href`` the findings page it links to.
    """
    cell = "text-align:left;padding:2px 8px;border-bottom:1px solid #eeeeee"
    cols = [*VERDICTS, "total", *(["remaining at threshold"] if calibrated_run else []),
            "lines checked / out of scope / nothing found"] + (["gold correct"] if judged else [])
    head = f'<th style="{cell}">note</th><th style="{cell}">type</th><th style="{cell}">status</th>' + "".join(
        f'<th style="{cell}">{c}</th>' for c in cols)
    body = []
    for r in rows:
        failed = r.get("status") == "failed"
        counts = "".join(
            f'<td class="n-{v}" style="{cell};background-color:{COLOURS[v][0] if r[v] else "transparent"}">'
            f'{"—" if failed else r[v]}</td>' for v in VERDICTS)
        gold = f'<td style="{cell}">{r["gold_correct"]}/{r["n_gold"]}</td>' if judged else ""
        inc = sum(r[v] for v in INCONSISTENT)
        status = r.get("status", "ok")
        colour = {"failed": "#c62828", "incomplete": "#ef6c00"}.get(status, "#2e7d32")
        why = f': {esc(r["failure"])}' if r.get("failure") else ""
        left = sum(1 for raw, _, shown in r.get("inc", ()) if raw == shown)
        lines = "{} / {} / {}".format(*(r.get(k, 0) for k in ("lines_checked", "lines_out_of_scope",
                                                               "lines_nothing_found")))
        body.append(f'<tr class="{"has-inc" if inc or failed else "no-inc"}" data-note="{esc(r["note_id"])}" '
                    f'data-status="{esc(status)}" data-inc="{esc(json.dumps(r.get("inc", [])))}">'
                    f'<td style="{cell};white-space:nowrap"><a href="{esc(r["href"])}" style="color:#1565c0">'
                    f'{esc(r["note_id"])}</a></td>'
                    f'<td style="{cell}">{esc(r["note_type"])}</td>'
                    f'<td class="status" style="{cell};color:{colour}"><b>{esc(status)}</b>{why}</td>{counts}'
                    f'<td style="{cell}">{"—" if failed else r["total"]}</td>'
                    + (f'<td class="n-remaining" style="{cell}">{"—" if failed else left}</td>'
                       if calibrated_run else "")
                    + f'<td class="n-coverage" style="{cell}">{"—" if failed else lines}</td>{gold}</tr>')
    n_findings = sum(r.get("total", 0) for r in rows if r.get("status") != "failed")
    to_findings = (f'<p style="margin:4px 0"><a class="nav-findings" href="{esc(findings_href)}" '
                   f'style="color:#1565c0">all {n_findings} findings across notes</a>, contradictions first</p>'
                   if findings_href else "")
    div = (f'<div class="ehrlib-viewer" style="font-family:sans-serif;color:#212121;text-align:left;margin:1em">'
           f'<h1 style="font-size:1.4em">{esc(title)}</h1><p style="color:#757575">{esc(subtitle)}</p>{to_findings}'
           f'<div>{controls}</div>{_filter_switch_index()}<table class="index" style="border-collapse:collapse;'
           f'margin-top:6px"><tr>{head}</tr>{"".join(body)}</table></div>')
    return page(title, div)


def _filter_switch_index() -> str:
    return ('<input type="checkbox" id="only-inconsistent" class="filter">'
            '<label for="only-inconsistent" style="margin-left:4px">inconsistent or failed only</label>')


def write_findings_viewer(run_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, *,
                          corpus_dir: str | os.PathLike[str] | None = None, judge: str = "matcher",
                          mode: str = "lenient", note_ids: Sequence[str] | None = None,
                          db: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write one page per note of a run (named by :func:`page_name`), ``findings.html`` and
    ``index.html`` (always the last path returned); each path once.

    ``out_dir`` defaults to ``<run_dir>/viewer``; ``db`` to the run's database (its
    manifest), from which evidence rows are read; without a readable database the pages
    show row ids. The judge layer appears when the corpus has gold labels and the run
    has judgements by ``judge`` in ``mode`` (``ehrlib judge`` / ``ehrlib report``).
    """
    run = load_run(run_dir, corpus_dir)
    out = Path(out_dir) if out_dir is not None else run.run_dir / "viewer"
    chosen = [j for j in read_judgements(run.run_dir) if j.judge == judge and j.mode == mode]
    judged = run.labelled and bool(chosen)
    wanted = set(note_ids) if note_ids is not None else None
    if wanted is not None:
        run = replace(run, notes=tuple(n for n in run.notes if n.note_id in wanted))
    records = read_note_records(run.run_dir)
    by_note = _by_note(run.predictions)
    rows = note_rows(run, records)
    seen: dict[str, str] = {}
    for r in rows:
        if seen.setdefault(r["href"], r["note_id"]) != r["note_id"]:  # two ids, one hash: refuse, never overwrite
            raise DataError(f"note ids {seen[r['href']]!r} and {r['note_id']!r} map to one page {r['href']}")
    for r in rows:
        js = [j for j in chosen if j.note_id == r["note_id"]]
        r.update(gold_correct=sum(1 for j in js if j.verdict == "correct"),
                 n_gold=sum(1 for g in run.gold if g.note_id == r["note_id"]))
    shown = {n.note_id for n in run.notes}
    all_preds = [p for p in run.predictions if p.note_id in shown]
    calibrated_run = calibrated(all_preds)
    threshold = initial_threshold(all_preds, run.manifest.get("params")) if calibrated_run else None
    db_path = db if db is not None else ((run.manifest.get("params") or {}).get("db")
                                         or (run.manifest.get("data_source") or {}).get("db"))
    paths = []
    notes_by_id = {n.note_id: n for n in run.notes}
    with EvidenceReader(db_path if db_path and Path(db_path).is_file() else None) as reader:
        for k, r in enumerate(rows):
            note = notes_by_id[r["note_id"]]
            preds = by_note.get(note.note_id, [])
            evidence = note_evidence(reader, note.subject_id, preds)
            nav = {"prev": rows[k - 1]["href"] if k else None, "index": INDEX_PAGE,
                   "next": rows[k + 1]["href"] if k + 1 < len(rows) else None, "findings": FINDINGS_PAGE}
            html = findings_html(note, preds, [g for g in run.gold if g.note_id == note.note_id] if judged else [],
                                 [j for j in chosen if j.note_id == note.note_id],
                                 title=f"{note.note_id} — run {run.run_info.get('run_id')}", judged=judged,
                                 evidence=evidence, nav=nav, record=records.get(note.note_id),
                                 threshold=threshold, calibrated_run=calibrated_run)
            paths.append(write_text(html, out / r["href"]))
    run_id = run.run_info.get("run_id")
    shown_preds = [(i, p) for i, p in enumerate(run.predictions) if p.note_id in shown]
    paths.append(write_text(findings_page(
        shown_preds, title=f"Findings of run {run_id} across notes",
        subtitle=f"{len(shown_preds)} findings of {len(rows)} notes · contradictions first, then by confidence · "
                 "click a heading to sort", controls=threshold_controls(all_preds, threshold),
        note_order={r["note_id"]: k for k, r in enumerate(rows)}, index_href=INDEX_PAGE,
        note_lines={n.note_id: n.lines for n in run.notes}), out / FINDINGS_PAGE))
    n_failed = sum(r["status"] == "failed" for r in rows)
    subtitle = (f"{len(rows)} notes ({n_failed} failed), failed first, then most inconsistent · "
                + (f"judge {judge}, {mode}" if judged else "no gold labels: method verdicts only"))
    if db_path is None or not Path(str(db_path)).is_file():
        subtitle += " · evidence rows shown as ids (database not found)"
    paths.append(write_text(index_html(rows, title=f"Findings of run {run_id}", subtitle=subtitle, judged=judged,
                                       calibrated_run=calibrated_run, controls=threshold_controls(all_preds, threshold),
                                       findings_href=FINDINGS_PAGE), out / INDEX_PAGE))
    return paths
