"""The factory that binds the tools to a read-only database and one patient.

``make_toolset(con_or_path, patient)`` returns a :class:`Toolset`: the paper's eight
table-exploration tools (Appendix C) plus Get_Clinical_Criterion, as typed functions
whose names, signatures and docstrings are what a model sees (declarations are generated
from them). Every call goes through one wrapper that coerces simple argument types,
turns expected failures into an error result the model can act on, and records the
call with the tracer. Category switches select which tools a run exposes (ablations).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import time as _time
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import duckdb

from ehrlib.errors import ConfigError
from ehrlib.schema import SchemaMap, detect_flavor, schema_map
from ehrlib.tools import criteria, exploration, retrieval
from ehrlib.tools.context import PatientContext
from ehrlib.tools.declarations import tool_specs
from ehrlib.tools.env import ToolArgumentError, ToolEnv
from ehrlib.tools.lockdown import check_duckdb_file, harden
from ehrlib.tools.naming import TableNames, table_names
from ehrlib.tools.result import DEFAULT_ROW_LIMIT, DEFAULT_TEXT_ROWS, ToolResult, jsonable
from ehrlib.tools.semantic import EmbeddingIndex, SemanticRanker, load_bundled_encoder
from ehrlib.tools.tracing import Tracer

__all__ = ["make_toolset", "Toolset", "CATEGORIES", "TOOL_CATEGORIES", "TOOL_NAMES"]

#: tool name -> ablation category (paper Appendix C groups, plus the criterion tool)
TOOL_CATEGORIES: Mapping[str, str] = {
    "Lexical_Search": "alignment",
    "Semantic_Search": "alignment",
    "Get_Item_Value_Distribution": "profiling",
    "Analyze_Category_Trend": "profiling",
    "Get_Item_Status_History": "temporal",
    "Get_Item_Value_History": "temporal",
    "Analyze_Value_Trend": "temporal",
    "View_General_Timeline": "temporal",
    "Get_Clinical_Criterion": "criterion",
}
TOOL_NAMES = tuple(TOOL_CATEGORIES)
CATEGORIES = ("alignment", "profiling", "temporal", "criterion")

Operator = Literal["more", "less", "between", "at_least", "at_most", "equals", "contains"]
_EMBEDDINGS: dict[tuple[str, str, str], EmbeddingIndex] = {}


class Toolset:
    """The tools of one patient: call them by name, list their declarations, read the trace."""

    def __init__(self, env: ToolEnv, tools: Mapping[str, Callable[..., ToolResult]], tracer: Tracer,
                 owns_connection: bool) -> None:
        self.env = env
        self.tools = dict(tools)
        self.tracer = tracer
        self._owns = owns_connection

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names."""
        return tuple(self.tools)

    @property
    def patient(self) -> PatientContext:
        """The patient the tools are bound to."""
        return self.env.patient

    @property
    def schema(self) -> SchemaMap:
        """The database's schema map."""
        return self.env.schema

    def call(self, name: str, args: Mapping[str, Any] | None = None) -> ToolResult:
        """Call a tool by name with a model's argument dict; never raises for bad arguments."""
        fn = self.tools.get(name)
        args = dict(args or {})
        if fn is None:
            msg = f"unknown tool {str(name)[:60]!r}; available: {', '.join(self.tools)}"
            self.tracer.record(str(name)[:80], jsonable(args), 0, 0.0, msg)
            return ToolResult.failure(str(name)[:80], args, msg)
        return fn(**args)

    def specs(self) -> list[Any]:
        """Declarations of the tools for an LLM backend."""
        return tool_specs(self)

    def close(self) -> None:
        """Close the connection if the toolset opened it."""
        if self._owns:
            self.env.con.close()

    def __enter__(self) -> Toolset:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Model-supplied JSON to the declared simple type (numbers as text and back)."""
    origin = typing.get_origin(annotation)
    if annotation is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.strip().lower() in ("true", "yes", "1")
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ToolArgumentError(f"{name} must be true or false, got {str(value)[:30]!r}")
    if annotation is int:
        if isinstance(value, bool):
            raise ToolArgumentError(f"{name} must be a whole number")
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise ToolArgumentError(f"{name} must be a whole number, got {str(value)[:30]!r}") from None
        if not f.is_integer() or abs(f) > 1e9:
            raise ToolArgumentError(f"{name} must be a whole number, got {str(value)[:30]!r}")
        return int(f)
    if annotation is str or origin is Literal:
        if value is None:
            return ""
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise ToolArgumentError(f"{name} must be text, got {type(value).__name__}")
    return value


#: tools whose result is a function of the toolset (database, patient, note time, limits) and
#: the arguments alone; Semantic_Search may ask a model, so it always runs
_REPEATABLE = frozenset(TOOL_NAMES) - {"Semantic_Search"}
#: results a toolset keeps for repeated calls (a note asks some items' windows dozens of times)
_MEMO_SIZE = 2048


_NESTED = (dict, list)


def _fresh(value: Any) -> Any:
    """A copy of a result's rows or summary (JSON-like dicts and lists) a caller may change.

    A dict is copied whole and only its nested dicts and lists are copied again: a row holds
    a dozen scalars and one ``extra`` dict, so a copy per value would be most of a call.
    """
    if isinstance(value, dict):
        out = value.copy()
        for k, v in out.items():
            if isinstance(v, _NESTED):
                out[k] = _fresh(v)
        return out
    if isinstance(value, list):
        return [_fresh(v) if isinstance(v, _NESTED) else v for v in value]
    return value


def _memo_key(name: str, clean: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The call's key in the memo; None for arguments that cannot be one (never kept)."""
    key = (name, tuple(clean.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _copy_result(result: ToolResult) -> ToolResult:
    return dataclasses.replace(result, args=dict(result.args), rows=tuple(_fresh(dict(r)) for r in result.rows),
                               summary=_fresh(dict(result.summary)))


def _wrap(fn: Callable[..., ToolResult], tracer: Tracer, names: TableNames | None = None,
          memo: dict[Any, ToolResult] | None = None) -> Callable[..., ToolResult]:
    """``fn`` as a tool: arguments coerced and checked, failures returned as results, every
    call traced; with ``names``, model-facing text and traced arguments use the schema's
    own table names (``ehrlib.tools.naming``). With ``memo`` (the toolset's), a successful
    result is kept under its coerced arguments and a repeated call gets a copy of it, traced
    like any call: the same result without reading the rows again.
    """
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    name = fn.__name__
    names = names or TableNames({})

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> ToolResult:
        t0 = _time.perf_counter()
        args = tuple(names.inward(a) for a in args)
        kwargs = {k: names.inward(v) for k, v in kwargs.items()}
        raw = dict(kwargs)
        try:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise ToolArgumentError(f"bad arguments for {name}: {exc}; parameters are "
                                        f"{', '.join(sig.parameters)}") from None
            raw = {**dict(zip(sig.parameters, args, strict=False)), **kwargs}
            clean = {k: _coerce(v, hints.get(k), k) for k, v in bound.arguments.items()}
            key = _memo_key(name, clean) if memo is not None else None
            kept = memo.get(key) if memo is not None and key is not None else None
            if kept is not None:
                result = _copy_result(kept)
            else:
                result = fn(**clean)
                if memo is not None and key is not None and result.error is None:
                    if len(memo) >= _MEMO_SIZE:
                        memo.clear()
                    memo[key] = _copy_result(result)
        except ToolArgumentError as exc:
            result = ToolResult.failure(name, jsonable(raw), str(exc))
        except duckdb.Error as exc:  # data-dependent conversion failures reach the model, not the run
            result = ToolResult.failure(name, jsonable(raw), f"database error: {' '.join(str(exc).split())[:200]}")
        ms = (_time.perf_counter() - t0) * 1000.0
        if names.hides:
            result = dataclasses.replace(result, text=names.outward(result.text),
                                         error=names.outward(result.error) if result.error else None)
        tracer.record(name, names.outward_args(jsonable(raw)), result.n_rows, ms, result.error)
        return result

    call.__doc__ = names.outward(fn.__doc__ or "")
    return call


def _open(con_or_path: Any) -> tuple[Any, bool]:
    if isinstance(con_or_path, (str, os.PathLike)):
        path = os.fspath(con_or_path)
        if not os.path.isfile(path):
            raise ConfigError(f"database {path} does not exist")
        check_duckdb_file(path)
        con = duckdb.connect(path, read_only=True)
        harden(con)
        return con, True
    con = con_or_path
    row = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    if not row or not row[0]:
        raise ConfigError("tools need a read-only connection: open it with duckdb.connect(path, read_only=True) "
                          "or ehrlib.db.connect(path)")
    harden(con)     # no file system, no extensions, locked settings (see ehrlib.db.connect)
    return con, False


def make_toolset(con_or_path: Any, patient: PatientContext, *,
                 categories: Iterable[str] = ("alignment", "profiling", "temporal", "criterion"),
                 tracer: Tracer | None = None, text_rows: int = DEFAULT_TEXT_ROWS,
                 row_limit: int = DEFAULT_ROW_LIMIT, semantic_ranker: SemanticRanker | None = None,
                 embeddings: bool | None = None, flavor: str | None = None,
                 snapshot_rows: int | None = None) -> Toolset:
    """Bind the tools to a read-only database and one patient.

    Args:
        con_or_path: a read-only DuckDB connection (or cursor), or a database path.
        patient: the admission the note is about.
        categories: which tool groups to expose (alignment, profiling, temporal, criterion).
        tracer: where calls are recorded; a new one by default (``toolset.tracer``).
        text_rows: rows shown to a model per call.
        row_limit: rows kept as evidence per call.
        semantic_ranker: an LLM-backed ranker for Semantic_Search (the paper's variant).
        embeddings: use the optional sentence-embedding model (None = if installed).
        flavor: the physical layout; detected from the database by default.
        snapshot_rows: bound of the in-memory admission snapshot the temporal tools read
            (``ehrlib.tools.snapshot``); None = ``$EHRLIB_SNAPSHOT_ROWS`` or the default,
            0 = every read as SQL. Results are the same either way.
    """
    cats = tuple(categories)
    unknown = set(cats) - set(CATEGORIES)
    if unknown:
        raise ConfigError(f"unknown tool categories {sorted(unknown)}; choose from {CATEGORIES}")
    con, owns = _open(con_or_path)
    schema = schema_map(flavor or detect_flavor(con))
    env = ToolEnv(con, schema, patient, snapshot_rows=snapshot_rows)
    tracer = tracer or Tracer()
    caps = {"row_limit": int(row_limit), "text_rows": int(text_rows)}
    embedding_index: list[EmbeddingIndex | None] = []

    def emb() -> EmbeddingIndex | None:
        if embeddings is False:
            return None
        if not embedding_index:
            key = (*env.identity, schema.flavor)
            index = _EMBEDDINGS.get(key)
            if index is None:
                encoder = load_bundled_encoder()
                if encoder is None and embeddings:
                    raise ConfigError("embeddings=True needs the optional extra: pip install 'ehrlib[embeddings]'")
                index = EmbeddingIndex(env.index.catalog.items, encoder) if encoder is not None else None
                if index is not None:
                    _EMBEDDINGS[key] = index
            embedding_index.append(index)
        return embedding_index[0]

    def Lexical_Search(query: str, k: int = 10, patient_only: bool = False) -> ToolResult:  # noqa: N802
        """Find table items whose names look like a term from the note.

        Use this first to turn a note entity ("WBC", "lasix", "BP", "abd pain") into item keys
        for the other tools. Matches character n-grams after expanding clinical abbreviations
        (WBC -> white blood cells) and brand drug names (lasix -> furosemide).

        Args:
            query: The entity as written in the note, e.g. "WBC" or "levophed".
            k: How many items to return, 1 to 50.
            patient_only: If true, return only items this patient has records of.

        Returns:
            Ranked items with key, table, label, category, unit, score and has_records.
        """
        return exploration.lexical_search(env, dict(query=query, k=k, patient_only=patient_only), query, k,
                                          patient_only)

    def Semantic_Search(query: str, k: int = 10, patient_only: bool = False) -> ToolResult:  # noqa: N802
        """Find table items conceptually related to a phrase, even with no shared words.

        Use when Lexical_Search finds nothing suitable, for descriptive or interpreted terms:
        "alert" -> level of consciousness, "afebrile" -> temperature, "pressors" ->
        norepinephrine, "diuresed" -> furosemide, "oliguric" -> urine output.

        Args:
            query: The phrase from the note.
            k: How many items to return, 1 to 50.
            patient_only: If true, return only items this patient has records of.

        Returns:
            Ranked items with key, table, label, category, unit, score, has_records and why matched.
        """
        return exploration.semantic_search(env, dict(query=query, k=k, patient_only=patient_only), query, k,
                                           patient_only, embeddings=emb(), ranker=semantic_ranker)

    def Get_Item_Value_Distribution(item: str) -> ToolResult:  # noqa: N802
        """Show the 10 most frequent values of an item over the whole database.

        Use to learn what an item records before comparing it with the note: numeric
        (e.g. SBP 110, 120, 130) or categorical (e.g. "Alert", "Arouse to Voice"), and
        which wording or scale the table uses.

        Args:
            item: An item key from the search tools (e.g. "chartevents:220045") or an item name.

        Returns:
            Top values with counts and shares, numeric or categorical, and the numeric range.
        """
        return exploration.value_distribution(env, dict(item=item), item)

    def Analyze_Category_Trend(table: str = "all", category: str = "", patient_only: bool = False) -> ToolResult:  # noqa: N802
        """Show how a table groups its items into categories, and which items sit in each.

        Use when unsure where an entity is recorded (e.g. consciousness items sit in
        chartevents category "Neurological"; lab panels in labevents categories).

        Args:
            table: A table name (chartevents, labevents, prescriptions, inputevents_mv,
                outputevents, procedureevents_mv, microbiologyevents, diagnoses_icd, ...) or "all".
            category: Optional category name (or part of it) to list that category's items.
            patient_only: If true, count and list only items this patient has records of.

        Returns:
            Categories with item counts and examples, or the items of the chosen category.
        """
        return exploration.category_trend(env, dict(table=table, category=category, patient_only=patient_only),
                                          table, category, patient_only, **caps)

    def Get_Item_Status_History(item: str, time: str = "") -> ToolResult:  # noqa: N802
        """List this patient's records of one item in a time window.

        Use to check whether something happened or was measured when the note says.

        Args:
            item: An item key from the search tools (e.g. "labevents:51301") or an item name.
            time: When: a date "2130-06-24" or "06-24", a timestamp "2130-06-24 08:00",
                "admission", "discharge", "note date", "HD 3", "POD 2", or a range
                "HD 2 to HD 4". Narrative times are widened one day either side. Empty means
                the whole admission.

        Returns:
            The records (time, value, unit, row id) and the window searched.
        """
        return retrieval.status_history(env, dict(item=item, time=time), item, time, **caps)

    def Get_Item_Value_History(item: str, operator: Operator, value: str, value2: str = "",  # noqa: N802
                               time: str = "") -> ToolResult:
        """List this patient's records of one item whose value meets a condition.

        Use to check a stated value or threshold, e.g. heart rate more than 100 on
        admission, or a culture whose organism contains "staph".

        Args:
            item: An item key from the search tools or an item name.
            operator: more, less, at_least, at_most or between (numbers); equals or contains (text).
            value: The number or text to compare with.
            value2: The upper bound for between.
            time: When, as for Get_Item_Status_History (empty = whole admission).

        Returns:
            The matching records, and how many records of the item the window has in all.
        """
        return retrieval.value_history(env, dict(item=item, operator=operator, value=value, value2=value2,
                                                 time=time), item, operator, value, value2, time, **caps)

    def Analyze_Value_Trend(item: str = "", time: str = "", operator: str = "", value: str = "",  # noqa: N802
                            value2: str = "") -> ToolResult:
        """Summarise how numeric values change over a window: rising, falling or stable.

        Use to check trend statements ("creatinine trending down", "downtrending WBC").
        Gives first, last, min, max, slope per day, rate of change and variability.
        Without an item, summarises every numeric item of the patient in the window.

        Args:
            item: An item key or name; empty for all numeric items.
            time: When, as for Get_Item_Status_History (empty = whole admission).
            operator: Optional value condition: more, less, at_least, at_most, between, equals.
            value: The number for the condition.
            value2: The upper bound for between.

        Returns:
            Trend statistics with a direction, and the values used.
        """
        return retrieval.value_trend(env, dict(item=item, time=time, operator=operator, value=value,
                                               value2=value2), item, time, operator, value, value2, **caps)

    def View_General_Timeline(time: str, table: str = "all") -> ToolResult:  # noqa: N802
        """List everything recorded for this patient at a date or time, in one table or all.

        Use to see what happened around an event when you do not know the item, e.g. all
        chartevents on "2130-05-03" or everything on "POD 1".

        Args:
            time: When, as for Get_Item_Status_History.
            table: A table name (chartevents, labevents, prescriptions, ...) or "all".

        Returns:
            The records of that window in time order, with counts per table.
        """
        return retrieval.general_timeline(env, dict(time=time, table=table), time, table, **caps)

    def Get_Clinical_Criterion(state: str) -> ToolResult:  # noqa: N802
        """Give the cited clinical threshold behind an interpreted state.

        Use before judging words like febrile, tachycardic, hypotensive, hypoxic, anemic,
        leukocytosis, AKI or oliguric: returns the threshold, unit, the items it applies to
        here, and the source (e.g. fever: temperature >= 38.0 C / 100.4 F, Mayo Clinic).

        Args:
            state: The state as the note says it, e.g. "febrile" or "acute kidney injury".

        Returns:
            The criterion's tests (item label pattern, operator, threshold, unit, sex) with
            matching items, and its source.
        """
        return criteria.clinical_criterion(env, dict(state=state), state)

    all_tools: list[Callable[..., ToolResult]] = [Lexical_Search, Semantic_Search, Get_Item_Value_Distribution,
                                                  Analyze_Category_Trend,
                 Get_Item_Status_History, Get_Item_Value_History, Analyze_Value_Trend, View_General_Timeline,
                 Get_Clinical_Criterion]
    names = table_names(schema)
    memo: dict[Any, ToolResult] = {}
    chosen = {fn.__name__: _wrap(fn, tracer, names, memo if fn.__name__ in _REPEATABLE else None)
              for fn in all_tools if TOOL_CATEGORIES[fn.__name__] in cats}
    return Toolset(env, chosen, tracer, owns)
