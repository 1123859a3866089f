"""``ehrlib run``: one experiment from a params file, with command-line overrides."""
from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run EHR-Inspector (or a baseline) over a corpus",
                       description="Run a pipeline over a corpus folder (notes.jsonl) against a database. "
                                   "Command-line values override the params file. Resumable: rerun the same "
                                   "--run-id to finish an interrupted run.")
    p.add_argument("--params", help="params/*.yaml with run parameters")
    p.add_argument("--corpus", help="folder with notes.jsonl (gold.jsonl optional)")
    p.add_argument("--db", help="DuckDB database built by ehrlib")
    p.add_argument("--method", choices=("inspector", "checkehr", "surface"))
    p.add_argument("--backend", help="offline | gemini | openai | scripted")
    p.add_argument("--model", help="LLM model name (LLM backends)")
    p.add_argument("--run-id", help="run id (default: <method>-<backend>-<UTC time>)")
    p.add_argument("--runs-dir", help="where run folders go (default runs/)")
    p.add_argument("--limit", type=int, help="only the first N notes")
    p.add_argument("--concurrency", type=int, help="worker threads (default: the backend's limit)")
    p.add_argument("--segmentation", choices=("on", "off"))
    p.add_argument("--scope-filter", choices=("on", "off"))
    p.add_argument("--extraction", choices=("inspector", "patient_only", "ontology_only", "checkehr"))
    p.add_argument("--tools", help="tool categories, comma-separated (alignment,profiling,temporal,criterion)")
    p.add_argument("--validation-cache", type=int, help="validation cache size m, 0..5")
    p.add_argument("--evidence-guard", choices=("on", "off"))
    p.add_argument("--cache-scope", choices=("segment", "note"),
                   help="validation cache per segment (parallel) or per note (sequential, as in the paper)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)

    o = sub.add_parser("ontology", help="build the hierarchical item ontology of a database",
                       description="Build the 12-group item ontology (paper Table 8) for a database: by rules "
                                   "(offline, the default) or by the paper's sliding-window LLM procedure.")
    o.add_argument("db", help="DuckDB database built by ehrlib")
    o.add_argument("out", help="output JSON file")
    o.add_argument("--method", choices=("rules", "llm"), default="rules")
    o.add_argument("--backend", default="gemini", help="LLM backend for --method llm (gemini | openai)")
    o.add_argument("--model", help="LLM model for --method llm")
    o.add_argument("--window", type=int, default=50, help="items per prompt (sliding window w)")
    o.add_argument("--cache", help="LLM response cache file (default: next to OUT)")
    o.set_defaults(func=_ontology)


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.rundir import read_ledger, summarize_ledger
    from ehrlib.pipeline.runner import run_experiment

    params = load_params(
        args.params, corpus=args.corpus, db=args.db, method=args.method, backend=args.backend, model=args.model,
        run_id=args.run_id, runs_dir=args.runs_dir, limit=args.limit, concurrency=args.concurrency,
        segmentation=args.segmentation, scope_filter=args.scope_filter, extraction=args.extraction,
        tools=args.tools, validation_cache=args.validation_cache, evidence_guard=args.evidence_guard,
        cache_scope=args.cache_scope,
        progress=False if args.no_progress else None,
    )
    run_dir = run_experiment(params)
    totals = summarize_ledger(read_ledger(run_dir))["totals"]
    print(f"{run_dir}: {totals['notes_ok']} notes, {totals['predictions']} predictions, "
          f"{totals['failures']} failures, {totals['validation_cache']['hits']} cache hits")
    # a note that failed on its input (recorded, not retried) makes the run partial: exit 1
    return 0 if totals.get("notes_error", 0) == 0 and totals.get("notes_failed", 0) == 0 else 1


def _ontology(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from pathlib import Path

    from ehrlib.db import read_manifest
    from ehrlib.db.connect import connect
    from ehrlib.ontology import build_ontology_llm, build_ontology_rules, save_ontology

    con = connect(args.db)
    try:
        if args.method == "rules":
            onto = build_ontology_rules(con)
        else:
            # deferred: the CLI loads a command's code only when that command runs (fast --help)
            from ehrlib.llm import make_client
            from ehrlib.pipeline.llm.caller import json_asker

            settings = {"source_kind": read_manifest(con).get("source_kind", "credentialed"),
                        "cache": args.cache or str(Path(args.out).with_suffix(".llm_cache.sqlite"))}
            if args.model:
                settings["model"] = args.model
            onto = build_ontology_llm(con, json_asker(make_client(args.backend, **settings)), window=args.window)
    finally:
        con.close()
    path = save_ontology(onto, args.out)
    counts = ", ".join(f"{g}: {n}" for g, n in onto.counts().items())
    print(f"{path}: {len(onto.items)} items, ontology {onto.sha8} ({onto.method}); {counts}")
    return 0
