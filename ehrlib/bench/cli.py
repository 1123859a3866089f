"""`ehrlib bench [--only build,tools,...] [--out figures]`."""
from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from ehrlib.bench import BenchSkipped, available
from ehrlib.errors import ConfigError

__all__ = ["register", "run_benchmarks"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bench`` command to the CLI."""
    p = sub.add_parser("bench", help="run the benchmarks and write figures/bench_*.csv",
                       description=f"Run benchmarks (available: {', '.join(available()) or 'none'}).")
    p.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    p.add_argument("--out", default="figures", help="folder for the result CSVs (default: figures)")
    p.set_defaults(func=_bench)


def run_benchmarks(names: list[str], out_dir: Path) -> dict[str, Path | str]:
    """Run the named benchmarks; {name: result path, or the skip reason}."""
    known = available()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(known)}")
    results: dict[str, Path | str] = {}
    for name in names or known:
        module = importlib.import_module(f"ehrlib.bench.{name}")
        try:
            results[name] = module.run(out_dir)
        except BenchSkipped as exc:
            results[name] = str(exc)
    return results


def _bench(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    for name, result in run_benchmarks(names, Path(args.out)).items():
        if isinstance(result, Path):
            print(f"{name}: wrote {result}")
        else:
            print(f"{name}: skipped ({result})")
    return 0
