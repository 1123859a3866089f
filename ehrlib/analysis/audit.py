"""Read back a manually audited error sample and set it beside the rule-assigned taxonomy.

:func:`ehrlib.analysis.error_report.sampling_sheet` draws errors of a judged run into a
CSV with an empty ``audit_type`` column; a person fills it with the type they find on
reading the row (the paper sorted its error sample by hand, Appendix H). This module reads
that sheet back strictly, since a typo must not count as a category, and reports how
often the rules and the auditor agree (a confusion table, agreement and Cohen's kappa).

The sheet is untrusted input: it is read with the CSV module (no evaluation), bounded in
bytes and rows, and every problem is a one-line :class:`~ehrlib.errors.DataError` naming
the sheet row (the line a spreadsheet shows, header = row 1).
"""
from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ehrlib.analysis.error_report import error_rows
from ehrlib.analysis.taxonomy import ERROR_TYPES
from ehrlib.corpus.io import write_text
from ehrlib.errors import DataError, os_reason, unknown_name
from ehrlib.result_tables import csv_text, write_markdown_sections

__all__ = ["AuditRow", "AuditResult", "MAX_SHEET_BYTES", "MAX_SHEET_ROWS", "read_audit_sheet",
           "check_rows_belong", "audit_confusion", "audit_summary", "audit_run"]

MAX_SHEET_BYTES = 8 * 1024 * 1024
MAX_SHEET_ROWS = 20_000
_FIELD_LIMIT = 1024 * 1024
REQUIRED = ("note_id", "entity_id", "error_type", "audit_type")
_FORMULA_START = ("'=", "'+", "'-", "'@", "'\t")


@dataclass(frozen=True)
class AuditRow:
    """One audited sheet row: its entity, the rules' type and the auditor's."""

    row: int
    note_id: str
    entity_id: str
    rule_type: str
    audit_type: str
    audit_note: str = ""


@dataclass(frozen=True)
class AuditResult:
    """What ``ehrlib judge --audit`` reports and where it wrote it."""

    confusion: pd.DataFrame
    summary: pd.DataFrame
    csv_path: Path
    md_path: Path


def _cell(value: str | None) -> str:
    """A sheet cell as written before :func:`ehrlib.result_tables.csv_safe` quoted it."""
    text = (value or "").strip()
    return text[1:] if text.startswith(_FORMULA_START) else text


def _type_name(value: str) -> str:
    return value.strip().lower().replace("-", "_").replace(" ", "_")


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_SHEET_BYTES:
            raise DataError(f"{path}: audit sheet of {size} bytes is over the {MAX_SHEET_BYTES}-byte limit")
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{path}: no such audit sheet") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: audit sheet is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the audit sheet: {os_reason(exc)}") from None


def read_audit_sheet(path: str | os.PathLike[str]) -> tuple[list[AuditRow], int]:
    """The audited rows of a filled sheet and the number of rows left blank (not audited yet).

    Needs the columns ``note_id, entity_id, error_type, audit_type``; ``audit_note`` is
    optional. Each filled ``audit_type`` must name a type of
    :data:`~ehrlib.analysis.taxonomy.ERROR_TYPES` (case, spaces and hyphens are forgiven);
    an entity listed twice is an error.
    """
    path = Path(path)
    text = _read_text(path)
    previous = csv.field_size_limit(_FIELD_LIMIT)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise DataError(f"{path}: audit sheet lacks column(s) {', '.join(missing)} "
                            f"(needs {', '.join(REQUIRED)}; write it with sampling_sheet)")
        reader.fieldnames = header
        rows: list[AuditRow] = []
        seen: dict[tuple[str, str], int] = {}
        blank = 0
        for record in reader:
            line = reader.line_num
            if len(rows) + blank >= MAX_SHEET_ROWS:
                raise DataError(f"{path}: audit sheet has more than {MAX_SHEET_ROWS} rows")
            if None in record:
                raise DataError(f"{path} row {line}: more cells than header columns")
            cells = {k: _cell(v) for k, v in record.items()}
            key = (cells["note_id"], cells["entity_id"])
            if not all(key):
                raise DataError(f"{path} row {line}: empty note_id or entity_id")
            if key in seen:
                raise DataError(f"{path} row {line}: entity {key[1]!r} of note {key[0]!r} "
                                f"is listed again (first at row {seen[key]})")
            seen[key] = line
            rule = _type_name(cells["error_type"])
            if rule not in ERROR_TYPES:
                raise DataError(f"{path} row {line}: " + unknown_name("error_type", cells["error_type"], ERROR_TYPES,
                                                                       listing="types"))
            if not cells["audit_type"]:
                blank += 1
                continue
            audited = _type_name(cells["audit_type"])
            if audited not in ERROR_TYPES:
                raise DataError(f"{path} row {line}: " + unknown_name("audit_type", cells["audit_type"], ERROR_TYPES,
                                                                       listing="types"))
            rows.append(AuditRow(line, key[0], key[1], rule, audited, cells.get("audit_note", "")))
    except csv.Error as exc:
        raise DataError(f"{path}: not a readable CSV audit sheet ({exc})") from None
    finally:
        csv.field_size_limit(previous)
    return rows, blank


def check_rows_belong(rows: Sequence[AuditRow], errors: pd.DataFrame, sheet: str | os.PathLike[str],
                      what: str) -> int:
    """Raise for the first row that is not an error of the run (``errors`` from
    :func:`~ehrlib.analysis.error_report.error_rows`); return how many rows the current rules
    now type differently from the sheet (the rules changed since it was drawn).
    """
    current = {(str(n), str(e)): t for n, e, t in zip(errors["note_id"], errors["entity_id"], errors["error_type"],
                                                     strict=True)}
    changed = 0
    for r in rows:
        now = current.get((r.note_id, r.entity_id))
        if now is None:
            raise DataError(f"{sheet} row {r.row}: entity {r.entity_id!r} of note {r.note_id!r} "
                            f"is not an error of {what}")
        changed += now != r.rule_type
    return changed


def audit_confusion(rows: Sequence[AuditRow]) -> pd.DataFrame:
    """Rule-assigned type (rows) × audited type (columns), types in taxonomy order, with a
    ``total`` and the share of each rule type the auditor confirmed (``agreement``).
    """
    table = pd.DataFrame(0, index=pd.Index(list(ERROR_TYPES), name="rule_type"), columns=list(ERROR_TYPES))
    for r in rows:
        table.loc[r.rule_type, r.audit_type] += 1
    table = table.loc[table.sum(axis=1) > 0]
    diagonal = pd.Series([table.loc[t, t] for t in table.index], index=table.index)
    table["total"] = table[list(ERROR_TYPES)].sum(axis=1)
    table["agreement"] = diagonal / table["total"]
    return table.reset_index()


def audit_summary(rows: Sequence[AuditRow], blank: int) -> dict[str, float]:
    """Rows audited and left blank, raw agreement and Cohen's kappa between rules and auditor."""
    n = len(rows)
    if not n:
        return {"n_audited": 0, "n_blank": blank, "agreement": float("nan"), "kappa": float("nan")}
    agree = sum(r.rule_type == r.audit_type for r in rows) / n
    rule = pd.Series([r.rule_type for r in rows]).value_counts() / n
    audit = pd.Series([r.audit_type for r in rows]).value_counts() / n
    expected = float((rule * audit.reindex(rule.index, fill_value=0)).sum())
    kappa = (agree - expected) / (1 - expected) if expected < 1 else float("nan")
    return {"n_audited": n, "n_blank": blank, "agreement": agree, "kappa": kappa}


def audit_run(run_dir: str | os.PathLike[str], sheet: str | os.PathLike[str], *, judge: str = "matcher",
              mode: str = "lenient") -> AuditResult:
    """Validate a filled sheet against the run's errors (``judge``, ``mode``) and write
    ``audit_<judge>_<mode>.csv`` (confusion table) and ``.md`` (summary and table) into the run folder.
    """
    rows, blank = read_audit_sheet(sheet)
    if not rows:
        raise DataError(f"{sheet}: no row has an audit_type yet ({blank} blank); fill the column first")
    what = f"run {Path(run_dir).name} ({judge}, {mode})"
    errors = error_rows(run_dir, judge=judge, mode=mode)
    if errors.empty:
        raise DataError(f"{what} has no incorrect verdicts to audit; judge it with `ehrlib judge` first")
    changed = check_rows_belong(rows, errors, sheet, what)
    confusion = audit_confusion(rows)
    summary = pd.DataFrame([{**audit_summary(rows, blank), "n_rule_changed": changed}])
    stem = Path(run_dir) / f"audit_{judge}_{mode}".replace("/", "_")
    csv_path = write_text(csv_text(confusion), stem.with_suffix(".csv"))
    md_path = write_markdown_sections({"Agreement of rules and auditor": summary,
                                       "Rule-assigned (rows) by audited (columns) error type": confusion},
                                      stem.with_suffix(".md"), title=f"Error audit of {what}")
    return AuditResult(confusion, summary, Path(csv_path), Path(md_path))
