"""The temporal tools: an item's records in a window, with a value condition, their trend,
and everything the patient has at a time (paper Appendix C.3).
"""
from __future__ import annotations

from typing import Any

from ehrlib.tools.access import reader
from ehrlib.tools.env import ToolArgumentError, ToolEnv, value_condition
from ehrlib.tools.items import CatalogItem
from ehrlib.tools.result import ToolResult, jsonable, render_rows
from ehrlib.tools.trend import trend_stats

__all__ = ["status_history", "value_history", "value_trend", "general_timeline"]

_TIMELESS = ("diagnoses_icd", "procedures_icd")
#: Analyze_Value_Trend without an item reports at most this many items.
_MAX_TREND_ITEMS = 15


def _item_rows(env: ToolEnv, item: CatalogItem, window, condition=None, numeric_only=False,
               mark=False) -> list[dict[str, Any]]:
    rows = env.read([reader(env.schema, item.table)], window, item_column=item.column, item_value=item.value,
                    condition=condition, numeric_only=numeric_only, mark=mark)
    for row in rows:
        row["label"] = item.label
        row["key"] = item.key
    return rows


def _scope(item_table: str, window) -> str:
    if item_table in _TIMELESS:
        return "the admission (billing codes carry no time)"
    return f"{window.start:%Y-%m-%d %H:%M} to {window.end:%Y-%m-%d %H:%M} ({window.description})"


def _finish(tool: str, args: dict[str, Any], env: ToolEnv, rows: list[dict[str, Any]], header: list[str],
            summary: dict[str, Any], row_limit: int, text_rows: int) -> ToolResult:
    kept = rows[:row_limit]
    text = "\n".join([*header, render_rows(kept, len(rows), text_rows)])
    return ToolResult(tool=tool, args=args, text=text, rows=tuple(kept), n_rows=len(rows), summary=jsonable(summary))


def status_history(env: ToolEnv, args: dict[str, Any], item: str, time: str, *, row_limit: int,
                   text_rows: int) -> ToolResult:
    """Get_Item_Status_History: an item's rows in a time window."""
    found, note = env.resolve(item)
    window = env.window(time)
    rows = _item_rows(env, found, window)
    header = [x for x in (note, f"{found.label} [{found.key}] for this patient, {_scope(found.table, window)}: "
                                f"{len(rows)} records.") if x]
    summary = {"item": found.as_dict(), "window": window.as_dict(), "resolved": note}
    return _finish("Get_Item_Status_History", args, env, rows, header, summary, row_limit, text_rows)


def value_history(env: ToolEnv, args: dict[str, Any], item: str, operator: str, value: str, value2: str,
                  time: str, *, row_limit: int, text_rows: int) -> ToolResult:
    """Get_Item_Value_History: an item's rows whose value meets a condition."""
    condition = value_condition(operator, value, value2)
    if condition is None:
        raise ToolArgumentError("Get_Item_Value_History needs an operator (more, less, between, at_least, "
                                "at_most, equals, contains); use Get_Item_Status_History for all records")
    found, note = env.resolve(item)
    window = env.window(time)
    all_rows = _item_rows(env, found, window, condition, mark=True)
    rows = [r for r in all_rows if r.pop("matches")]
    header = [x for x in (note, f"{found.label} [{found.key}] with {condition.text}, {_scope(found.table, window)}: "
                                f"{len(rows)} of {len(all_rows)} records match.") if x]
    summary = {"item": found.as_dict(), "window": window.as_dict(), "condition": condition.text,
               "n_in_window": len(all_rows), "resolved": note}
    return _finish("Get_Item_Value_History", args, env, rows, header, summary, row_limit, text_rows)


def _trend_line(label: str, stats: dict[str, Any]) -> str:
    if stats["n"] == 0:
        return f"{label}: no numeric values."
    parts = [f"{label}: n={stats['n']}, first {stats['first']:g} ({jsonable(stats['first_time'])}), "
             f"last {stats['last']:g} ({jsonable(stats['last_time'])}), min {stats['min']:g}, max {stats['max']:g}, "
             f"mean {stats['mean']:g}, sd {stats['sd']:g}"]
    if "slope_per_day" in stats:
        parts.append(f"slope {stats['slope_per_day']:g}/day, change first→last {stats['rate_of_change_per_day']:g}/day")
    parts.append(f"direction: {stats['direction']}")
    return "; ".join(parts)


def value_trend(env: ToolEnv, args: dict[str, Any], item: str, time: str, operator: str, value: str, value2: str,
                *, row_limit: int, text_rows: int) -> ToolResult:
    """Analyze_Value_Trend: trend statistics of an item's values in a window."""
    condition = value_condition(operator, value, value2)
    window = env.window(time)
    cond_text = f" with {condition.text}" if condition else ""
    if str(item or "").strip():
        found, note = env.resolve(item)
        rows = _item_rows(env, found, window, condition, numeric_only=True)
        stats = trend_stats([(r["time"], r["valuenum"]) for r in rows])
        header = [x for x in (note, f"Trend of {found.label} [{found.key}]{cond_text}, {_scope(found.table, window)}:",
                              _trend_line(found.label, stats)) if x]
        summary = {"item": found.as_dict(), "window": window.as_dict(), "condition": condition.text if condition
                   else None,
                   "trend": stats, "resolved": note}
        return _finish("Analyze_Value_Trend", args, env, rows, header, summary, row_limit, text_rows)
    # No item: every numeric series of the patient in the window (paper: "independent of specific items").
    readers = [reader(env.schema, t) for t in env.table_arg("all") if t not in _TIMELESS and t in env.patient_tables]
    rows = env.read(readers, window, condition=condition, numeric_only=True)
    for row in rows:
        row["label"] = env.label_of(row["table"], row)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["table"], row["label"]), []).append(row)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    trends = {}
    lines = [f"Numeric records{cond_text}, {window.start:%Y-%m-%d %H:%M} to {window.end:%Y-%m-%d %H:%M} "
             f"({window.description}): {len(rows)} records in {len(groups)} items."]
    for (table, label), group in ordered[:_MAX_TREND_ITEMS]:
        stats = trend_stats([(r["time"], r["valuenum"]) for r in group])
        trends[f"{table}:{label}"] = stats
        lines.append(f"- [{table}] " + _trend_line(label, stats))
    if len(ordered) > _MAX_TREND_ITEMS:
        lines.append(f"... {len(ordered) - _MAX_TREND_ITEMS} more items not summarised; name an item to see one.")
    summary = {"window": window.as_dict(), "condition": condition.text if condition else None, "trends": trends}
    return _finish("Analyze_Value_Trend", args, env, rows, lines, summary, row_limit, text_rows)


def general_timeline(env: ToolEnv, args: dict[str, Any], time: str, table: str, *, row_limit: int,
                     text_rows: int) -> ToolResult:
    """View_General_Timeline: everything recorded for the patient in a window."""
    window = env.window(time)
    tables = env.table_arg(table)
    explicit = len(tables) == 1
    # billing codes have no time: only when asked for by name
    # tables without a row of this patient are skipped (fewer branches in the union)
    readers = [reader(env.schema, t) for t in tables
               if (explicit or t not in _TIMELESS) and t in env.patient_tables]
    rows = env.read(readers, window)
    for row in rows:
        row["label"] = env.label_of(row["table"], row)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["table"]] = counts.get(r["table"], 0) + 1
    where = ", ".join(f"{t} {n}" for t, n in sorted(counts.items())) or "none"
    header = [f"All records of this patient in {', '.join(tables) if explicit else 'all tables'}, "
              f"{_scope(tables[0] if explicit else 'chartevents', window)}: {len(rows)} records ({where})."]
    summary = {"window": window.as_dict(), "tables": tables, "counts": counts}
    return _finish("View_General_Timeline", args, env, rows, header, summary, row_limit, text_rows)


