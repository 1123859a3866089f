"""``ehrlib run``: one experiment from a params file, with command-line overrides."""
from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` command to the CLI."""
    p = sub.add_parser("run", help="run EHR-Inspector (or a baseline) over a corpus",
                       description="Run a pipeline over a corpus folder (notes.jsonl) against a database. "
                                   "Command-line values override the params file. Resumable: rerun the same "
                                   "--run-id to finish an interrupted run.")
    p.add_argument("--params", help="params/*.yaml with run parameters")
    p.add_argument("--corpus", help="folder with notes.jsonl (gold.jsonl optional); a notes CSV goes through "
                                    "`ehrlib notes import` first")
    p.add_argument("--db", help="DuckDB database built by ehrlib")
    p.add_argument("--method", choices=("inspector", "checkehr", "surface"),
                   help="EHR-Inspector (default) or a baseline: CheckEHR, surface matching")
    p.add_argument("--backend", help="offline (default) or an LLM backend: vllm, ollama, sglang, llamacpp, "
                                     "openai, azure, gemini, vertex")
    p.add_argument("--model", help="LLM model name (LLM backends)")
    p.add_argument("--run-id", help="run id (default: <method>-<backend>-<UTC time>)")
    p.add_argument("--runs-dir", help="where run folders go (default: runs/)")
    p.add_argument("--limit", type=int, help="only the first N notes")
    p.add_argument("--split", choices=("test", "valid"),
                   help="only the notes of this split, as the corpus assigns them (its manifest.json or "
                        "import.json); an error for a corpus without a split assignment")
    p.add_argument("--concurrency", type=int, help="worker threads (default: the backend's limit)")
    p.add_argument("--segmentation", choices=("on", "off"), help="split notes into segments first (default on)")
    p.add_argument("--scope-filter", choices=("on", "off"),
                   help="check only statements about the stay, not past history or plans (default on)")
    p.add_argument("--extraction", choices=("inspector", "patient_only", "ontology_only", "checkehr", "ner"),
                   help="how statements are found and tied to database items (ablations; default inspector; "
                        "ner: the trained tagger of `ehrlib train-ner`)")
    p.add_argument("--ner-model", help="folder of a tagger trained by `ehrlib train-ner` (--extraction ner; "
                                       "default: the bundled one)")
    p.add_argument("--tools", help="tool categories, comma-separated (alignment,profiling,temporal,criterion)")
    p.add_argument("--validation-cache", type=int, help="validation cache size m, 0..5")
    p.add_argument("--evidence-guard", choices=("on", "off"),
                   help="LLM backends: send the model back for more evidence when its verdict rests on "
                        "too little (default on)")
    p.add_argument("--cache-scope", choices=("segment", "note"),
                   help="validation cache per segment (parallel) or per note (sequential, as in the paper)")
    p.add_argument("--repeats", type=int, default=1, metavar="K",
                   help="K independent inferences (LLM backends): run ids <id>-r1..rK with distinct response-cache "
                        "salts; with gold labels, prints matcher mean ± std")
    p.add_argument("--executor", choices=("thread", "ray"),
                   help="where notes run: threads of this process (default) or a Ray cluster (docs/ray.md)")
    p.add_argument("--ray-address", help="Ray cluster to join (auto, ray://HOST:10001); default: a local instance")
    p.add_argument("--ray-workers", type=int, help="Ray worker actors (default: one per cluster CPU)")
    p.add_argument("--ray-batch", type=int, help="notes per Ray task (default 1)")
    p.add_argument("--retry-failed", action="store_true",
                   help="rerun only the notes of an existing run (--run-id) whose last attempt failed; "
                        "the rest are kept (cached model replies are replayed)")
    p.add_argument("--calibrator", help="confidence calibrator file (default: the bundled one; 'none': "
                                        "uncalibrated); refit with `ehrlib calibrate`")
    p.add_argument("--abstain-below", type=float, metavar="P",
                   help="report an inconsistent verdict with confidence below P as unverified "
                        "(0..1; default 0.6, 0 = never)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)

    o = sub.add_parser("ontology", help="build the hierarchical item ontology of a database",
                       description="Build the 12-group item ontology (paper Table 8) for a database: by rules "
                                   "(offline, the default) or by the paper's sliding-window LLM procedure.")
    o.add_argument("db", help="DuckDB database built by ehrlib")
    o.add_argument("out", help="output JSON file")
    o.add_argument("--method", choices=("rules", "llm"), default="rules",
                   help="offline rules (default) or the paper's sliding-window LLM procedure")
    o.add_argument("--backend", default="gemini", help="LLM backend for --method llm (gemini | openai)")
    o.add_argument("--model", help="LLM model for --method llm")
    o.add_argument("--window", type=int, default=50, help="items per prompt (sliding window w)")
    o.add_argument("--cache", help="LLM response cache file (default: next to OUT)")
    o.set_defaults(func=_ontology)


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib import code_cache, regex_cache
    from ehrlib.disk_cache import freeze_long_lived, long_lived

    # this process is the command's: what lives as long as it (the pipeline's modules, the
    # caches read from disk) is kept out of the garbage collector's passes (disk_cache.long_lived),
    # and its regular expressions and dataclass methods are compiled from the last process's
    # (regex_cache, code_cache)
    freeze_long_lived()
    regex_cache.install()
    code_cache.install()
    with long_lived():
        import ehrlib.pipeline.runner  # noqa: F401  # deferred: loaded here, as long-lived data (above)
    from ehrlib.errors import ConfigError  # deferred: command code, as above
    from ehrlib.pipeline.params import load_params

    params = load_params(
        args.params, corpus=args.corpus, db=args.db, method=args.method, backend=args.backend, model=args.model,
        run_id=args.run_id, runs_dir=args.runs_dir, limit=args.limit, split=args.split,
        concurrency=args.concurrency,
        segmentation=args.segmentation, scope_filter=args.scope_filter, extraction=args.extraction,
        ner_model=args.ner_model, tools=args.tools, validation_cache=args.validation_cache,
        evidence_guard=args.evidence_guard,
        cache_scope=args.cache_scope, executor=args.executor, ray_address=args.ray_address,
        ray_workers=args.ray_workers, ray_batch=args.ray_batch,
        calibrator=args.calibrator, abstain_below=args.abstain_below,
        progress=False if args.no_progress else None,
    )
    if args.repeats < 1:
        raise ConfigError("--repeats must be at least 1")
    if args.retry_failed and (args.repeats != 1 or not params.run_id):
        raise ConfigError("--retry-failed needs the --run-id of the run to repair (and no --repeats)")
    if args.repeats == 1:
        return _run_one(params, retry_failed=args.retry_failed)[0]
    if params.backend in ("offline", "oracle"):
        raise ConfigError("--repeats repeats an LLM backend's inference; the offline backend is deterministic")
    from ehrlib.pipeline.runner import new_run_id  # deferred: command code, as above

    base = params.run_id or new_run_id(params)
    codes, run_dirs = [], []
    for k in range(1, args.repeats + 1):  # Appendix G: repeats differ only in their cache salt
        llm = dict(params.backend_options.get("llm") or {})
        llm["cache_salt"] = f"{llm.get('cache_salt', '')}repeat-{k}"
        code, run_dir = _run_one(params.replace(run_id=f"{base}-r{k}",
                                                backend_options={**params.backend_options, "llm": llm}))
        codes.append(code)
        run_dirs.append(run_dir)
    _print_repeat_table(run_dirs)
    return max(codes)


def _run_one(params: Any, *, retry_failed: bool = False) -> tuple[int, Any]:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    import json

    from ehrlib.llm.usage import mostly_failed
    from ehrlib.pipeline.rundir import read_ledger, summarize_ledger
    from ehrlib.pipeline.runner import run_experiment
    from ehrlib.pipeline.summary import run_findings

    run_dir = run_experiment(params, retry_failed=retry_failed)
    totals = summarize_ledger(read_ledger(run_dir))["totals"]
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    calls = manifest.get("llm_calls") or {}
    line = (f"{run_dir}: {totals['notes_ok']} notes, {run_findings(run_dir).describe()}; "
            f"{totals['failures']} recorded failures, "
            f"validation-cache hits {totals['validation_cache']['hits']}")
    if calls:
        line += (f"; model calls {calls.get('calls', 0)} (response-cache hits {calls.get('response_cache_hits', 0)}, "
                 f"failed {calls.get('failed_calls', 0)}, retries {calls.get('retries', 0)})")
    print(line)
    n_failed = totals.get("notes_failed", 0) + totals.get("notes_error", 0)
    if n_failed:
        from ehrlib.pipeline.attempts import note_outcomes  # deferred: command code, as above

        first = next((f"{n}: {e.get('failure')}" for n, e in note_outcomes(run_dir).items()
                      if e.get("status") != "ok"), "")
        print(f"{n_failed} note(s) failed (recorded in progress.jsonl; first: {first[:300]}); rerun them with "
              f"--run-id {run_dir.name} --retry-failed", file=sys.stderr)
    failed = mostly_failed(calls)
    if failed:
        print(f"run failed: {failed}", file=sys.stderr)
        return 1, run_dir
    # a note that failed on its input (recorded, not retried) makes the run partial: exit 1
    ok = totals.get("notes_error", 0) == 0 and totals.get("notes_failed", 0) == 0
    return (0 if ok else 1), run_dir


def _print_repeat_table(run_dirs: list[Any]) -> None:
    """Matcher scores of each repeat and their mean ± std (skipped without gold labels)."""
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    import pandas as pd

    from ehrlib.errors import EhrlibError
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.judge.repeats import mean_std_table
    from ehrlib.result_tables import markdown_table

    try:
        rows = [evaluate_run(d, progress=False).assign(run=str(d)) for d in run_dirs]
    except EhrlibError as exc:
        print(f"no mean ± std table: {exc}")
        return
    table = mean_std_table(pd.concat(rows), ["judge", "mode"], ["recall", "precision", "f1"])
    print(f"mean ± std over {len(run_dirs)} repeats:")
    print(markdown_table(table[["judge", "mode", "n_repeats", "recall", "precision", "f1"]]), end="")


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
