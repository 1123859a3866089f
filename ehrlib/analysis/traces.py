"""Tool-usage traces as path-frequency graphs (paper Section 5.5, Figure 5; Appendix K).

A *path* is the ordered list of tools used to verify one entity: for predictions, the
traced calls in ``tool_calls.jsonl`` (the single source for traces, STYLE.md); for the
gold annotators, their recorded ``check_path``. A *transition graph* is a networkx
DiGraph over tools plus ``START``/``END`` nodes whose edge weight counts how often one
tool directly followed another. The paper reads these graphs qualitatively ("human
traces are compact, model traces dispersed"); :func:`path_dispersion` puts numbers on
that reading (distinct paths, top-path share, transition entropy).
"""
from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import networkx as nx
import pandas as pd

from ehrlib.corpus.records import GoldEntity, Prediction
from ehrlib.judge.evaluate import load_run
from ehrlib.pipeline.attempts import current_lines
from ehrlib.tools.toolset import TOOL_CATEGORIES

__all__ = [
    "START",
    "END",
    "TOOL_CATEGORIES",
    "tool_category",
    "read_tool_calls",
    "paths_from_tool_calls",
    "paths_from_predictions",
    "paths_from_gold",
    "transition_graph",
    "path_frequencies",
    "path_dispersion",
    "compare_dispersion",
    "run_trace_paths",
    "transition_graphs",
    "path_frequency_table",
]

START, END = "START", "END"

def tool_category(tool: str) -> str:
    """The ablation category of a tool (``ehrlib.tools``: alignment, profiling, temporal,
    criterion); a tool the toolset does not know is ``other``.
    """
    return TOOL_CATEGORIES.get(tool, "other")


def read_tool_calls(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """``tool_calls.jsonl`` of a run as a DataFrame (empty with the contract columns if none)."""
    path = Path(run_dir) / "tool_calls.jsonl"
    cols = ["run_id", "note_id", "entity_id", "tool", "args", "n_rows", "ms", "error", "call_id", "step"]
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=cols)
    df = pd.read_json(path, lines=True, dtype={"note_id": str, "entity_id": str})
    keep = current_lines(run_dir, "tool_calls.jsonl")   # a rerun note's earlier attempt is history
    return df[keep].reset_index(drop=True) if len(keep) == len(df) else df


def paths_from_tool_calls(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per (note_id, entity_id): the ordered tool path (by ``step``, then file order)."""
    if calls.empty:
        return pd.DataFrame(columns=["note_id", "entity_id", "path"])
    df = calls.reset_index(drop=True).assign(_order=lambda d: range(len(d)))
    if "step" in df.columns:
        df = df.assign(_step=pd.to_numeric(df["step"], errors="coerce").fillna(-1))
        df = df.sort_values(["note_id", "entity_id", "_step", "_order"], kind="stable")
    paths = df.groupby(["note_id", "entity_id"], sort=True)["tool"].agg(tuple).reset_index()
    return paths.rename(columns={"tool": "path"})


def paths_from_predictions(preds: Iterable[Prediction]) -> pd.DataFrame:
    """Paths from the ``tool_calls`` embedded in predictions; cache hits have empty paths."""
    rows = [{"note_id": p.note_id, "entity_id": p.entity_id or f"line{p.line}:{p.entity}",
             "path": tuple(c.tool for c in p.tool_calls), "from_cache": p.from_cache} for p in preds]
    return pd.DataFrame(rows, columns=["note_id", "entity_id", "path", "from_cache"])


def paths_from_gold(gold: Iterable[GoldEntity]) -> pd.DataFrame:
    """The annotators' tool paths (``check_path``)."""
    rows = [{"note_id": g.note_id, "entity_id": g.entity_id, "path": tuple(g.check_path)} for g in gold]
    return pd.DataFrame(rows, columns=["note_id", "entity_id", "path"])


def transition_graph(paths: Iterable[Sequence[str]], *, endpoints: bool = True,
                     min_weight: int = 1) -> nx.DiGraph:
    """DiGraph of consecutive tools; edge ``weight`` = transition count, node ``count`` = visits.

    Empty paths are skipped (an entity verified from the cache made no calls). With
    ``endpoints`` each path is framed by START and END, so the graph also shows where
    verification begins and where it stops; ``min_weight`` prunes rare transitions.
    """
    edges: Counter[tuple[str, str]] = Counter()
    visits: Counter[str] = Counter()
    n_paths = 0
    for path in paths:
        seq = list(path)
        if not seq:
            continue
        n_paths += 1
        visits.update(seq)
        if endpoints:
            seq = [START, *seq, END]
        edges.update(zip(seq, seq[1:], strict=False))
    g = nx.DiGraph(n_paths=n_paths)
    for (a, b), w in edges.items():
        if w >= min_weight:
            g.add_edge(a, b, weight=w)
    for node in g.nodes:
        g.nodes[node]["count"] = visits.get(node, n_paths)
        g.nodes[node]["category"] = "endpoint" if node in (START, END) else tool_category(node)
    return g


def path_frequencies(paths: Iterable[Sequence[str]], top: int | None = None) -> pd.DataFrame:
    """Distinct paths with their count and share, most frequent first ("A → B → C")."""
    counts = Counter(tuple(p) for p in paths if len(p))
    total = sum(counts.values())
    rows = [{"path": " → ".join(p), "length": len(p), "n": n, "share": n / total}
            for p, n in counts.most_common(top)]
    return pd.DataFrame(rows, columns=["path", "length", "n", "share"])


def path_dispersion(paths: Iterable[Sequence[str]]) -> dict[str, float]:
    """How varied a set of paths is: counts, top-path share, mean length, transition entropy.

    ``entropy_bits`` is the entropy of the transition distribution (graph with
    endpoints): low when traces repeat a few transitions, high when they spread over
    many tool combinations, the contrast Figure 5 draws between annotators and models.
    """
    plist = [tuple(p) for p in paths if len(p)]
    if not plist:
        return {"n_paths": 0, "n_distinct": 0, "top_share": float("nan"), "mean_length": float("nan"),
                "n_transitions": 0, "entropy_bits": float("nan")}
    counts = Counter(plist)
    g = transition_graph(plist)
    weights = [w for _, _, w in g.edges(data="weight")]
    total = sum(weights)
    entropy = -sum(w / total * math.log2(w / total) for w in weights)
    return {"n_paths": len(plist), "n_distinct": len(counts), "top_share": counts.most_common(1)[0][1] / len(plist),
            "mean_length": sum(map(len, plist)) / len(plist), "n_transitions": g.number_of_edges(),
            "entropy_bits": entropy}


def compare_dispersion(paths_by_source: Mapping[str, Iterable[Sequence[str]]]) -> pd.DataFrame:
    """:func:`path_dispersion` for several sources (annotators, each model), one row each."""
    return pd.DataFrame([{"source": name, **path_dispersion(paths)} for name, paths in paths_by_source.items()])


def run_trace_paths(run_dirs: Mapping[str, str | os.PathLike[str]], *, annotators: str | None = "Annotators",
                    corpus_dir: str | os.PathLike[str] | None = None) -> dict[str, list[tuple[str, ...]]]:
    """Tool paths per source: the annotators' ``check_path`` (from the first run's corpus,
    restricted to the notes that run attempted) followed by each run's traced calls.

    This is the input of Figure 5 (annotators vs one model) and Figure 31 (several
    models): pass ``{"gemini-2.5-flash": run_a, "qwen3-32b": run_b}``.
    """
    out: dict[str, list[tuple[str, ...]]] = {}
    items = list(run_dirs.items())
    if annotators and items:
        run = load_run(items[0][1], corpus_dir)
        out[annotators] = [p for p in paths_from_gold(run.gold)["path"] if p]
    for name, run_dir in items:
        out[name] = list(paths_from_tool_calls(read_tool_calls(run_dir))["path"])
    return out


def transition_graphs(paths_by_source: Mapping[str, Iterable[Sequence[str]]], *,
                      min_weight: int = 1) -> dict[str, nx.DiGraph]:
    """:func:`transition_graph` for each source, ready for ``ehrlib.viz.plot_trace_graphs``."""
    return {name: transition_graph(paths, min_weight=min_weight) for name, paths in paths_by_source.items()}


def path_frequency_table(paths_by_source: Mapping[str, Iterable[Sequence[str]]], top: int | None = 10) -> pd.DataFrame:
    """The ``top`` paths of every source in one table with a ``source`` column."""
    frames = [path_frequencies(paths, top).assign(source=name) for name, paths in paths_by_source.items()]
    cols = ["source", "path", "length", "n", "share"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
