"""``ehrlib llm check``: show what a configuration would send, and send nothing."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "settings_from_args"]


def register(sub: Any) -> None:
    p = sub.add_parser("llm", help="inspect LLM backend configurations",
                       description="LLM backend utilities. `check` resolves a params file's `llm:` block "
                                   "(or a backend name) and prints the endpoint, model, PHI safety class, "
                                   "credential source and a redacted sample first request, without sending it.")
    llm_sub = p.add_subparsers(dest="llm_command", metavar="COMMAND", required=True)
    c = llm_sub.add_parser("check", help="print the resolved endpoint and first request; send nothing")
    c.add_argument("--params", help="params YAML with an `llm:` block")
    c.add_argument("--backend", help="backend name (vllm, ollama, sglang, llamacpp, azure, gemini, vertex, openai)")
    c.add_argument("--model", help="model / deployment name")
    c.add_argument("--base-url", help="server base URL (OpenAI-compatible backends)")
    c.set_defaults(func=_check)


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if getattr(args, "model", None):
        out["model"] = args.model
    if getattr(args, "base_url", None):
        out["base_url"] = args.base_url
    return out


def _check(args: argparse.Namespace) -> int:
    from ehrlib.errors import ConfigError
    from ehrlib.llm.check import check_llm, check_run_params

    if args.params:
        from ehrlib.pipeline.params import load_params

        params = load_params(args.params, backend=args.backend, model=args.model)
        if args.base_url:
            llm = dict(params.backend_options.get("llm") or {}, base_url=args.base_url)
            params = params.__class__(**{**{f: getattr(params, f) for f in params.__dataclass_fields__},
                                         "backend_options": {**params.backend_options, "llm": llm}})
        report = check_run_params(params)
        if report is None:
            print(f"backend {params.backend}: this run makes no LLM calls")
            return 0
    elif args.backend:
        report = check_llm(args.backend, settings_from_args(args))
    else:
        raise ConfigError("llm check needs --params P or --backend NAME")
    print(report.render())
    return 0
