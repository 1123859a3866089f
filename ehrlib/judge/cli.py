"""``ehrlib judge --run RUN_DIR [--judge matcher|<model>] [--mode harsh|lenient|both]``."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("judge", help="judge a run against gold labels and write its metrics",
                       description="Judge a run's predictions against the corpus gold labels "
                                   "(deterministic matcher or an LLM judge); writes judgements.jsonl, "
                                   "metrics.csv/.md and breakdown tables into the run directory.")
    p.add_argument("--run", required=True, metavar="RUN_DIR", help="runs/<run_id>/ written by `ehrlib run`")
    p.add_argument("--judge", default="matcher",
                   help="'matcher' (offline, default) or a model name for the LLM judges")
    p.add_argument("--mode", choices=("harsh", "lenient", "both"), default="both")
    p.add_argument("--corpus", metavar="DIR", help="corpus folder (default: the one in the run manifest)")
    p.add_argument("--backend", default="gemini",
                   help="LLM backend for a model judge (gemini, openai, vllm, ollama, sglang)")
    p.add_argument("--base-url", help="OpenAI-compatible server URL for a model judge")
    p.add_argument("--cache", help="response cache file for a model judge (default: in the run folder)")
    p.add_argument("--label", help="store the judgements under this name instead of the model's, e.g. "
                                   "gemini-2.5-pro#2 for a repeated pass (pair it with --cache-salt)")
    p.add_argument("--cache-salt", help="make cached replies of this pass distinct from earlier passes")
    p.add_argument("--review", type=int, default=0, metavar="N",
                   help="also write review_<judge>_<mode>.csv: N sampled verdicts for people to check "
                        "(paper Appendix F.4; score it with ehrlib.judge.review_agreement)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.result_tables import markdown_table

    modes = ("harsh", "lenient") if args.mode == "both" else (args.mode,)
    llm: dict[str, Any] = {"backend": args.backend}
    if args.base_url:
        llm["base_url"] = args.base_url
    if args.cache:
        llm["cache"] = args.cache
    if args.cache_salt:
        llm["cache_salt"] = args.cache_salt
    summary = evaluate_run(args.run, args.corpus, judge=args.judge, modes=modes, llm=llm, label=args.label,
                           progress=not args.no_progress)
    if summary.empty:
        print(f"{args.run}: the corpus has no gold.jsonl; nothing to judge (the findings are in `ehrlib report`)")
        return 0
    cols = ["judge", "mode", "n_notes", "recall", "precision", "f1", "micro_f1", "n_unparsed"]
    print(markdown_table(summary[cols]), end="")
    if args.review:
        # deferred: the CLI loads a command's code only when that command runs (fast --help)
        from ehrlib.judge.review import write_review_sheet

        for mode in modes:
            print(f"review sheet: {write_review_sheet(args.run, args.label or args.judge, mode, args.review)}")
    return 0
