"""``ehrlib probe-schema``: ask an LLM backbone, without tools, where MIMIC records each entity."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``probe-schema`` command to the CLI."""
    p = sub.add_parser("probe-schema", help="measure an LLM's prior knowledge of the MIMIC schema (no tools)",
                       description="Ask an LLM backbone, with no tools and no schema in the prompt, to name the "
                                   "MIMIC table and column(s) recording each of a set of entities (a built-in list, "
                                   "or the gold entities of --corpus), and score the answers against the schema "
                                   "(paper Appendix L). Writes answers.csv, summary.csv/.md and probe.json.")
    p.add_argument("--params", help="YAML with an `llm:` block (params/backbone_*.yaml); options override it")
    p.add_argument("--backend", help="LLM backend (vllm, ollama, sglang, llamacpp, openai, azure, gemini, vertex)")
    p.add_argument("--model", help="model name (default: the llm block's model)")
    p.add_argument("--base-url", help="OpenAI-compatible server URL")
    p.add_argument("--max-tokens", type=int, help="reply token budget (incl. reasoning)")
    p.add_argument("--corpus", metavar="DIR",
                   help="draw entity names from this corpus's gold labels (its provenance goes to the PHI "
                        "guard); default: the built-in list of 18 entities")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N corpus entities (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the corpus entity draw")
    p.add_argument("--batch", type=int, default=20, metavar="K", help="entities per request (default 20)")
    p.add_argument("--out", metavar="DIR", help="output folder (default runs/schema_probe/<model>)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    import pandas as pd

    from ehrlib.probe.schema_knowledge import probe_schema, probe_settings
    from ehrlib.result_tables import markdown_table

    backend, settings = probe_settings(args.params, backend=args.backend, model=args.model,
                                       base_url=args.base_url, max_tokens=args.max_tokens)
    summary, out = probe_schema(backend, settings, corpus=args.corpus, limit=args.limit, seed=args.seed,
                                batch=args.batch, out_dir=args.out)
    print(markdown_table(pd.DataFrame([summary])), end="")
    print(f"answers and summary: {out}")
    return 0
