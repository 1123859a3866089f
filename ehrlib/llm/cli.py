"""``ehrlib llm check``: show what a configuration would send, and send nothing."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "settings_from_args"]


def register(sub: Any) -> None:
    """Add the ``llm`` command (``llm check``) to the CLI."""
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
    c.add_argument("--ping", action="store_true",
                   help="also send one minimal request (a fixed text, no data) and report reachability, "
                        "authentication and the model the server served")
    c.set_defaults(func=_check)


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The ``llm:`` settings given on the command line."""
    out: dict[str, Any] = {}
    if getattr(args, "model", None):
        out["model"] = args.model
    if getattr(args, "base_url", None):
        out["base_url"] = args.base_url
    return out


def _check(args: argparse.Namespace) -> int:
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.errors import ConfigError
    from ehrlib.llm.check import check_llm, check_run_params, ping_llm
    from ehrlib.yamlfiles import read_yaml

    if args.params:
        data = read_yaml(args.params, what="params file").data or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{args.params}: expected a mapping at the top level")
        llm = dict(data.get("llm") or {})
        if args.base_url:
            llm["base_url"] = args.base_url
        data = {**data, "llm": llm, **({"backend": args.backend} if args.backend else {}),
                **({"model": args.model} if args.model else {})}
        report = check_run_params(data)
        if report is None:
            print(f"backend {data.get('backend') or 'offline'}: this run makes no LLM calls")
            return 0
        backend = str(data.get("backend") if data.get("backend") not in (None, "offline") else llm.get("backend"))
        settings = {k: v for k, v in llm.items() if k != "backend"}
        settings.update({k: data[k] for k in ("model",) if data.get(k)})
    elif args.backend:
        backend, settings = args.backend, settings_from_args(args)
        report = check_llm(backend, settings)
    else:
        raise ConfigError("llm check needs --params P or --backend NAME")
    print(report.render())
    if args.ping:
        if isinstance(settings.get("base_url"), (list, tuple)):
            settings = {**settings, "base_url": settings["base_url"][0]}
        print(ping_llm(backend, settings).render())
    return 0
