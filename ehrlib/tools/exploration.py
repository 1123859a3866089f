"""Alignment and profiling tools: find items, see their values, see how tables are organised."""
from __future__ import annotations

from typing import Any

from ehrlib.tools.env import ToolArgumentError, ToolEnv
from ehrlib.tools.lexical import expand_query
from ehrlib.tools.profile import TOP_K, profile_for, value_kind
from ehrlib.tools.result import ToolResult
from ehrlib.tools.semantic import EmbeddingIndex, SemanticRanker, semantic_scores

__all__ = ["lexical_search", "semantic_search", "value_distribution", "category_trend"]

_MAX_K = 50
_MAX_QUERY = 200
#: Items scoring below this share few n-grams with the query by chance; they are noise to a model.
MIN_SCORE = 0.1


def _k(k: Any) -> int:
    try:
        n = int(k)
    except (TypeError, ValueError):
        raise ToolArgumentError(f"k must be a whole number from 1 to {_MAX_K}, got {str(k)[:20]!r}") from None
    if not 1 <= n <= _MAX_K:
        raise ToolArgumentError(f"k must be from 1 to {_MAX_K}, got {n}")
    return n


def _query(query: Any) -> str:
    q = " ".join(str(query or "").split())
    if not q:
        raise ToolArgumentError("query is empty; pass the entity as written in the note")
    if len(q) > _MAX_QUERY:
        raise ToolArgumentError(f"query is longer than {_MAX_QUERY} characters; pass one entity")
    return q


def _item_rows(env: ToolEnv, ranked: list[tuple[str, float, str]], patient_only: bool, k: int) -> list[dict[str, Any]]:
    keys = env.patient_keys
    # equal scores (MIMIC has "Heart Rate" in CareVue and MetaVision): the patient's item first
    ranked = sorted(ranked, key=lambda x: (-round(x[1], 3), x[0] not in keys))
    rows = []
    for key, score, why in ranked:
        if score < MIN_SCORE:
            continue
        item = env.index.catalog.by_key[key]
        has = key in keys
        if patient_only and not has:
            continue
        rows.append({**item.as_dict(), "score": round(score, 3), "has_records": has, "matched": why})
        if len(rows) >= k:
            break
    return rows


def _render_items(title: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return f"{title}: no matching items."
    lines = [f"{title}:"]
    for r in rows:
        extra = ", ".join(x for x in (r.get("category"), r.get("unit")) if x)
        lines.append(f"- {r['key']} | {r['label']}{(' (' + extra + ')') if extra else ''} | score {r['score']:.2f}"
                     f" | {'HAS records for this patient' if r['has_records'] else 'no records for this patient'}")
    return "\n".join(lines)


def lexical_search(env: ToolEnv, args: dict[str, Any], query: str, k: int, patient_only: bool) -> ToolResult:
    """Lexical_Search: catalogue items whose labels match the query."""
    q, n = _query(query), _k(k)
    pool = env.index.search(q, k=_MAX_K * 4 if patient_only else max(3 * n, 30))
    ranked = [(m.item.key, m.score, m.matched) for m in pool]
    rows = _item_rows(env, ranked, patient_only, n)
    return ToolResult("Lexical_Search", args, _render_items(f"Items lexically similar to {q!r}", rows), tuple(rows),
                      len(rows), {"query": q, "variants": list(expand_query(q))})


def semantic_search(env: ToolEnv, args: dict[str, Any], query: str, k: int, patient_only: bool, *,
                    embeddings: EmbeddingIndex | None, ranker: SemanticRanker | None) -> ToolResult:
    """Semantic_Search: items close in meaning (concepts, embeddings or an LLM ranker)."""
    q, n = _query(query), _k(k)
    scores, why = semantic_scores(env.index, q, max(n, 20), embeddings=embeddings, ranker=ranker)
    ranked = sorted(((key, s, why[key]) for key, s in scores.items()), key=lambda x: (-x[1], x[0]))
    rows = _item_rows(env, ranked, patient_only, n)
    return ToolResult("Semantic_Search", args, _render_items(f"Items conceptually related to {q!r}", rows),
                      tuple(rows), len(rows), {"query": q})


def value_distribution(env: ToolEnv, args: dict[str, Any], item: str) -> ToolResult:
    """Get_Item_Value_Distribution: an item's value profile over all patients."""
    found, note = env.resolve(item)
    if found.table in ("diagnoses_icd", "procedures_icd"):
        raise ToolArgumentError(f"{found.key} is a billing code: it has no values to profile")
    prof = profile_for(env.con, env.schema, found.key, env.identity, table_present=env.has_profile_table)
    head = [x for x in (note,) if x]
    if not prof:
        text = "\n".join([*head, f"{found.label} [{found.key}] has no recorded values in this database."])
        return ToolResult("Get_Item_Value_Distribution", args, text, (), 0, {"item": found.as_dict(), "kind": "empty"})
    total, numeric = prof[0]["n_total"], prof[0]["n_numeric"]
    kind = value_kind(total, numeric)
    rows = [{"table": found.table, "key": found.key, "rank": p["rank"], "value": p["value"], "count": p["n"],
             "share": round(p["n"] / total, 4)} for p in prof]
    lines = [*head, f"{found.label} [{found.key}] over the whole database: {total} values, "
                    f"{prof[0]['n_distinct']} distinct; {kind} ({numeric} of {total} parse as numbers)."]
    if prof[0]["num_min"] is not None:
        lines.append(f"Numeric range {prof[0]['num_min']:g} to {prof[0]['num_max']:g}, mean {prof[0]['num_mean']:.4g}.")
    lines.append(f"Top {min(TOP_K, len(rows))} values: " + ", ".join(
        f"{r['value']} ({r['count']}, {100 * r['share']:.1f}%)" for r in rows))
    summary = {"item": found.as_dict(), "kind": kind, "n_total": total, "n_distinct": prof[0]["n_distinct"],
               "num_min": prof[0]["num_min"], "num_max": prof[0]["num_max"], "resolved": note}
    return ToolResult("Get_Item_Value_Distribution", args, "\n".join(lines), tuple(rows), len(rows), summary)


def category_trend(env: ToolEnv, args: dict[str, Any], table: str, category: str, patient_only: bool, *,
                   row_limit: int, text_rows: int) -> ToolResult:
    """Analyze_Category_Trend: the rows of a category over time."""
    tables = env.table_arg(table)
    cat = " ".join(str(category or "").split()).lower()
    if len(cat) > _MAX_QUERY:
        raise ToolArgumentError("category is too long")
    keys = env.patient_keys
    groups: dict[tuple[str, str], list[Any]] = {}
    for item in env.catalog.items:
        if item.table not in tables:
            continue
        if patient_only and item.key not in keys:
            continue
        groups.setdefault((item.table, item.category or "(no category)"), []).append(item)
    if cat:
        chosen = {g: items for g, items in groups.items() if cat in g[1].lower()}
        if not chosen:
            known = sorted({c for (_, c) in groups})[:40]
            raise ToolArgumentError(f"no category matching {category[:60]!r} in {', '.join(tables)}; "
                                    f"categories: {', '.join(known)}")
        rows = [{**i.as_dict(), "has_records": i.key in keys}
                for g in sorted(chosen) for i in sorted(chosen[g], key=lambda i: (i.key not in keys, i.label))]
        lines = [f"Items in categories matching {category!r}: {len(rows)}"
                 + (" (only items this patient has)" if patient_only else "") + "."]
        for r in rows[:text_rows]:
            lines.append(f"- {r['key']} | {r['label']} | {r['category']}"
                         + (" | HAS records" if r["has_records"] else ""))
        if len(rows) > text_rows:
            lines.append(f"... {len(rows) - text_rows} more items; pass patient_only=true or a narrower category.")
        kept = rows[:row_limit]
        return ToolResult("Analyze_Category_Trend", args, "\n".join(lines), tuple(kept), len(rows),
                          {"tables": tables, "category": category})
    rows = []
    for (t, c), items in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1])):
        mine = [i for i in items if i.key in keys]
        examples = [i.label for i in (mine + [i for i in items if i.key not in keys])[:6]]
        rows.append({"table": t, "category": c, "n_items": len(items), "n_patient_items": len(mine),
                     "examples": examples})
    lines = [f"How {', '.join(tables) if len(tables) < 4 else 'the tables'} organise items into categories"
             + (" (only items this patient has)" if patient_only else "") + ":"]
    for r in rows[: text_rows * 2]:
        lines.append(f"- {r['table']} / {r['category']}: {r['n_items']} items ({r['n_patient_items']} with records "
                     f"for this patient), e.g. {', '.join(r['examples'])}")
    if len(rows) > text_rows * 2:
        lines.append(f"... {len(rows) - text_rows * 2} more categories; name a table to narrow.")
    return ToolResult("Analyze_Category_Trend", args, "\n".join(lines), tuple(rows[:row_limit]), len(rows),
                      {"tables": tables})
