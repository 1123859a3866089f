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


def _settings(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The backend and client settings from --params and the options."""
    from ehrlib.errors import ConfigError  # deferred: command code, loaded when the command runs
    from ehrlib.yamlfiles import read_yaml

    llm: dict[str, Any] = {}
    if args.params:
        data = read_yaml(args.params, what="params file").data or {}
        if not isinstance(data, dict) or not isinstance(data.get("llm"), dict):
            raise ConfigError(f"{args.params}: expected an `llm:` block")
        llm = dict(data["llm"])
    for key, value in (("backend", args.backend), ("model", args.model), ("base_url", args.base_url),
                       ("max_tokens", args.max_tokens)):
        if value is not None:
            llm[key] = value
    backend, model = llm.pop("backend", None), llm.get("model")
    if not backend or not model:
        raise ConfigError("probe-schema needs a backend and a model: --params P, or --backend B --model M")
    return str(backend), llm


def _run(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from pathlib import Path

    import pandas as pd

    from ehrlib.errors import ConfigError
    from ehrlib.probe.schema_knowledge import (
        BUILTIN_ENTITIES,
        corpus_entities,
        corpus_provenance,
        run_probe,
        write_probe,
    )
    from ehrlib.result_tables import markdown_table

    if args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    backend, settings = _settings(args)
    if args.corpus:
        entities = corpus_entities(args.corpus, limit=args.limit, seed=args.seed)
        source = corpus_provenance(args.corpus)
    else:
        entities, source = list(BUILTIN_ENTITIES), "synthetic"
    out = Path(args.out or Path("runs") / "schema_probe" / str(settings["model"]).replace("/", "_"))
    # deferred: the LLM client stack is only needed once the entities are known
    from ehrlib.llm.cache import ResponseCache
    from ehrlib.llm.factory import make_client

    cache = settings.pop("cache", None) or out / "llm_cache.sqlite"
    # the PHI guard runs as the client is made: a refused endpoint leaves no file behind
    client = make_client(backend, source_kind=source, **settings)
    client.cache = ResponseCache(cache)
    answers = run_probe(client, entities, batch=args.batch)
    summary = write_probe(out, answers, backend=backend, model=str(settings["model"]), source_kind=source,
                          entity_source=str(args.corpus or "built-in"))
    print(markdown_table(pd.DataFrame([summary])), end="")
    print(f"answers and summary: {out}")
    return 0
