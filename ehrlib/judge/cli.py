"""``ehrlib judge --run RUN_DIR [--judge matcher|<model>] [--mode harsh|lenient|both]``."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ehrlib.judge.evaluate import Mode

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``judge`` command to the CLI."""
    p = sub.add_parser("judge", help="judge a run against gold labels and write its metrics",
                       description="Judge a run's predictions against the corpus gold labels "
                                   "(deterministic matcher or an LLM judge); writes judgements.jsonl, "
                                   "metrics.csv/.md and breakdown tables into the run directory.")
    p.add_argument("--run", required=True, metavar="RUN_DIR", help="runs/<run_id>/ written by `ehrlib run`")
    p.add_argument("--judge", default=None,
                   help="'matcher' (offline, default) or a model name for the LLM judges (default with "
                        "--params: the llm block's model)")
    p.add_argument("--params", help="YAML whose `llm:` block configures the model judge (params/judge_*.yaml); "
                                    "command-line options override it")
    p.add_argument("--mode", choices=("harsh", "lenient", "both"), default=None,
                   help="judge strictness: harsh, lenient or both (default both; with --audit, lenient)")
    p.add_argument("--corpus", metavar="DIR", help="corpus folder (default: the one in the run manifest)")
    p.add_argument("--split", choices=("test", "valid"),
                   help="score only the notes of this split, as the corpus assigns them (its manifest.json or "
                        "import.json); an error for a corpus without a split assignment")
    p.add_argument("--backend", default=None,
                   help="LLM backend for a model judge (gemini, vertex, azure, openai, vllm, ollama, sglang, "
                        "llamacpp; default gemini)")
    p.add_argument("--base-url", help="OpenAI-compatible server URL for a model judge")
    p.add_argument("--max-tokens", type=int, help="model judge: reply token budget (incl. reasoning)")
    p.add_argument("--structured-output", choices=("auto", "json_schema", "json_object", "text"),
                   help="model judge on an OpenAI-compatible server: response_format mode (default auto)")
    p.add_argument("--timeout", type=float, metavar="S", help="model judge: per-call timeout in seconds")
    p.add_argument("--concurrency", type=int, help="model judge: simultaneous calls")
    p.add_argument("--rpm", type=float, help="model judge: requests per minute limit")
    p.add_argument("--tpm", type=float, help="model judge: tokens per minute limit")
    p.add_argument("--passes", type=int, default=1, metavar="J",
                   help="judge J times with distinct cache salts (labels <model>#1..#J); prints mean ± std")
    p.add_argument("--cache", help="response cache file for a model judge (default: in the run folder)")
    p.add_argument("--label", help="store the judgements under this name instead of the model's, e.g. "
                                   "gemini-2.5-pro#2 for a repeated pass (pair it with --cache-salt)")
    p.add_argument("--cache-salt", help="make cached replies of this pass distinct from earlier passes")
    p.add_argument("--review", type=int, default=0, metavar="N",
                   help="also write review_<judge>_<mode>.csv: N sampled verdicts for people to check "
                        "(paper Appendix F.4; score it with ehrlib.judge.review_agreement)")
    p.add_argument("--audit", metavar="SHEET.csv",
                   help="read back an error sample audited by hand (the sampling sheet with its audit_type "
                        "column filled in) and report the audited error types beside the rule-assigned ones; "
                        "writes audit_<judge>_<mode>.csv/.md into the run folder, judges nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


def llm_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The LLM client settings a model judge gets from the command line."""
    llm: dict[str, Any] = {"backend": args.backend or "gemini"}
    if getattr(args, "params", None):
        from ehrlib.errors import ConfigError  # deferred: command code, loaded when the judge runs
        from ehrlib.yamlfiles import read_yaml

        data = read_yaml(args.params, what="judge params file").data or {}
        if not isinstance(data, dict) or not isinstance(data.get("llm"), dict):
            raise ConfigError(f"{args.params}: expected an `llm:` block")
        llm = {**dict(data["llm"]), **({"backend": args.backend} if args.backend else {})}
        if not args.judge:
            args.judge = llm.pop("model", None)
        else:
            llm.pop("model", None)
    args.judge = args.judge or "matcher"
    for key, value in (("base_url", args.base_url), ("cache", args.cache), ("cache_salt", args.cache_salt),
                       ("max_tokens", args.max_tokens), ("structured_output", args.structured_output),
                       ("timeout_s", args.timeout), ("max_concurrency", args.concurrency),
                       ("requests_per_minute", args.rpm), ("tokens_per_minute", args.tpm)):
        if value is not None:
            llm[key] = value
    return llm


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    import pandas as pd

    from ehrlib.errors import ConfigError
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.result_tables import markdown_table

    llm = llm_settings(args)
    if args.audit:
        return _audit(args)
    modes: tuple[Mode, ...] = ("harsh", "lenient") if args.mode in (None, "both") else (args.mode,)
    if args.passes < 1:
        raise ConfigError("--passes must be at least 1")
    if args.passes > 1 and args.judge == "matcher":
        raise ConfigError("--passes repeats a model judge; the matcher is deterministic")
    cols = ["judge", "mode", "n_notes", "recall", "precision", "f1", "micro_f1", "n_unparsed"]
    summaries = []
    for j in range(1, args.passes + 1):
        label, settings = args.label, dict(llm)
        if args.passes > 1:  # Appendix G: independent passes = distinct cache salts
            label = f"{args.label or args.judge}#{j}"
            settings["cache_salt"] = f"{llm.get('cache_salt', '')}pass-{j}"
        summary = evaluate_run(args.run, args.corpus, judge=args.judge, modes=modes, llm=settings, label=label,
                               progress=not args.no_progress, split=args.split)
        if summary.empty:
            print(f"{args.run}: the corpus has no gold.jsonl; nothing to judge (the findings are in `ehrlib report`)")
            return 0
        summaries.append(summary)
        print(markdown_table(summary[cols]), end="")
    if args.passes > 1:
        from ehrlib.judge.repeats import mean_std_table  # deferred: command code, as above

        print(f"\nmean ± std over {args.passes} passes:")
        table = mean_std_table(pd.concat(summaries), ["mode"], ["recall", "precision", "f1"])
        print(markdown_table(table[["mode", "n_repeats", "recall", "precision", "f1"]]), end="")
    if args.review:
        # deferred: the CLI loads a command's code only when that command runs (fast --help)
        from ehrlib.judge.review import write_review_sheet

        for mode in modes:
            print(f"review sheet: {write_review_sheet(args.run, args.label or args.judge, mode, args.review)}")
    return 0


def _audit(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.analysis.audit import audit_run
    from ehrlib.errors import ConfigError
    from ehrlib.result_tables import markdown_table

    if args.mode == "both":
        raise ConfigError("--audit reads the errors of one judge mode: give --mode harsh or --mode lenient")
    result = audit_run(args.run, args.audit, judge=args.judge, mode=args.mode or "lenient")
    print(markdown_table(result.summary), end="")
    print(markdown_table(result.confusion), end="")
    print(f"audit tables: {result.csv_path} and {result.md_path}")
    return 0
